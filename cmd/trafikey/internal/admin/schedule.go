package admin

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
)

// cronParser reads cron expressions as the trafikey package does
// (Schedule.Cron): five fields minute first, six fields seconds first, or a
// descriptor such as @hourly.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// NextOccurrences returns up to n next occurrences of a schedule, as the
// schedule step computes them: after the time up to which occurrences are
// done (Last; just before Next when none is) and not before notBefore (zero:
// no bound, so the first may be past when no worker ran the step for a
// while), of the cron expression in its time zone from its Start when set,
// or on its interval's grid (from Start, else from Last); none past End,
// the protocol's last time or the cap on occurrences, none when paused or
// finished. Each is before its jitter.
func NextOccurrences(info trafikey.ScheduleInfo, notBefore time.Time, n int) ([]time.Time, error) {
	if info.Paused || info.Next.IsZero() || n < 1 {
		return nil, nil
	}
	if info.Limit > 0 {
		n = min(n, info.Limit-info.Count)
		if n < 1 {
			return nil, nil
		}
	}
	from := info.Last
	if from.IsZero() {
		from = info.Next.Add(-time.Millisecond)
	}
	if notBefore.After(from) {
		from = notBefore
	}
	var after func(time.Time) time.Time
	if info.Every > 0 {
		origin := info.Last
		if !info.Start.IsZero() {
			origin = info.Start
		} else if origin.IsZero() {
			origin = info.Next.Add(-info.Every)
		}
		after = func(t time.Time) time.Time {
			if t.Before(origin) {
				if !info.Start.IsZero() {
					return origin // the start is the first occurrence
				}
				return origin.Add(info.Every)
			}
			return origin.Add((t.Sub(origin)/info.Every + 1) * info.Every)
		}
	} else {
		sched, err := cronParser.Parse(info.Cron)
		if err != nil {
			return nil, fmt.Errorf("schedule %s: cron %q: %w", info.ID, info.Cron, err)
		}
		loc := time.UTC
		if info.TimeZone != "" {
			if loc, err = time.LoadLocation(info.TimeZone); err != nil {
				return nil, fmt.Errorf("schedule %s: time zone %q: %w", info.ID, info.TimeZone, err)
			}
		}
		after = func(t time.Time) time.Time {
			if !info.Start.IsZero() && t.Before(info.Start.Add(-time.Millisecond)) {
				t = info.Start.Add(-time.Millisecond)
			}
			return sched.Next(t.In(loc))
		}
	}
	last := time.UnixMilli(protocol.MaxScheduleTime)
	out := make([]time.Time, 0, n)
	for t := after(from); len(out) < n; t = after(t) {
		if t.IsZero() || t.After(last) || (!info.End.IsZero() && t.After(info.End)) {
			break
		}
		out = append(out, t.UTC())
	}
	return out, nil
}
