package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
)

// cronParser reads cron expressions as the trafikey package does
// (Schedule.Cron): five fields minute first, six fields seconds first, or a
// descriptor such as @hourly.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// maxNext bounds --next.
const maxNext = 1000

// nextOccurrences returns the next n scheduled times of schedule s, as the
// schedule step computes them: the occurrences after the last one done
// (s.Last) of the cron expression in its time zone, or of the interval
// (from Start when set, else on the grid of the last one done), from Start
// on, within End and the cap on occurrences, before each one's jitter. A
// paused or finished schedule has none. When no worker ran the step for a
// while, the first ones may be past: the next step takes them at once (or
// skips them, beyond its grace and catch-up).
func nextOccurrences(s trafikey.ScheduleInfo, n int) ([]time.Time, error) {
	if s.Paused || s.Next.IsZero() || n <= 0 {
		return nil, nil
	}
	if s.Limit > 0 {
		n = min(n, s.Limit-s.Count)
	}
	var after func(time.Time) time.Time
	if s.Every > 0 {
		origin := s.Last
		if !s.Start.IsZero() {
			origin = s.Start
		}
		after = func(t time.Time) time.Time {
			if t.Before(origin) {
				if !s.Start.IsZero() {
					return origin // the start is the first occurrence
				}
				return origin.Add(s.Every)
			}
			return origin.Add((t.Sub(origin)/s.Every + 1) * s.Every)
		}
	} else {
		sched, err := cronParser.Parse(s.Cron)
		if err != nil {
			return nil, fmt.Errorf("schedule %s: cron %q: %w", s.ID, s.Cron, err)
		}
		loc := time.UTC
		if s.TimeZone != "" {
			if loc, err = time.LoadLocation(s.TimeZone); err != nil {
				return nil, fmt.Errorf("schedule %s: time zone %q: %w", s.ID, s.TimeZone, err)
			}
		}
		after = func(t time.Time) time.Time {
			if !s.Start.IsZero() && t.Before(s.Start.Add(-time.Millisecond)) {
				t = s.Start.Add(-time.Millisecond)
			}
			return sched.Next(t.In(loc))
		}
	}
	last := time.UnixMilli(protocol.MaxScheduleTime)
	out := make([]time.Time, 0, max(n, 0))
	for t := after(s.Last); len(out) < n; t = after(t) {
		if t.IsZero() || t.After(last) || (!s.End.IsZero() && t.After(s.End)) {
			break
		}
		out = append(out, t.UTC())
	}
	return out, nil
}

// specOf describes a schedule's spec in a line: "every 5m0s",
// "0 8 * * 1-5 (Europe/Paris)".
func specOf(v scheduleView) string {
	if v.EveryMS > 0 {
		return "every " + (time.Duration(v.EveryMS) * time.Millisecond).String()
	}
	if v.TimeZone != "" {
		return v.Cron + " (" + v.TimeZone + ")"
	}
	return v.Cron
}

func (a *app) newScheduleGetCmd() *cobra.Command {
	var next int
	cmd := &cobra.Command{
		Use:   "get <queue> <id>",
		Short: "Show one schedule: spec, bounds, policy, state, its job and the next occurrences",
		Long: `get reads schedule <id> of the queue and never writes. --next N prints its next
N occurrences, computed as the schedule step does: after the last occurrence
done, of the cron expression in its time zone or of the interval, within its
start, end and cap, before each one's jitter. When no worker ran the step for
a while, the first may be past: the next step takes them at once, or skips
those beyond its grace and catch-up. A schedule that does not exist is not
found (exit code 3).`,
		Args: args(cobra.ExactArgs(2)),
	}
	cmd.Flags().IntVar(&next, "next", 0, "print the next N occurrences (0..1000)")
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		if next < 0 || next > maxNext {
			return usageErrorf("--next %d outside 0..%d", next, maxNext)
		}
		ctx, cancel := s.bound(ctx)
		defer cancel()
		q, err := s.queue(ctx, args[0])
		if err != nil {
			return err
		}
		info, err := q.Schedules().Get(ctx, args[1])
		if err != nil {
			return s.explain(q, err)
		}
		v := viewOfSchedule(info)
		if next > 0 {
			if v.NextTimes, err = nextOccurrences(info, next); err != nil {
				return err
			}
		}
		if s.json {
			return s.printJSON(v)
		}
		tw := tabwriter.NewWriter(s.out(), 0, 0, 2, ' ', 0)
		line := func(name, format string, a ...any) { fmt.Fprintf(tw, name+"\t"+format+"\n", a...) }
		at := func(t *time.Time) string {
			if t == nil {
				return "-"
			}
			return t.Format(time.RFC3339Nano)
		}
		ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
		line("schedule", "%s of queue %s", v.ID, q.Name())
		line("spec", "%s", specOf(v))
		state := "running"
		switch {
		case v.Paused:
			state = "paused"
		case v.Finished:
			state = "finished"
		}
		line("state", "%s (revision %d)", state, v.Revision)
		line("next", "%s", at(v.Next))
		line("last done", "%s", at(v.Last))
		count := strconv.Itoa(v.Count)
		if v.Limit > 0 {
			count += " of " + strconv.Itoa(v.Limit)
		}
		line("occurrences", "%s", count)
		if v.JitterMS > 0 {
			line("jitter", "up to %v", ms(v.JitterMS))
		}
		if v.Start != nil || v.End != nil {
			line("between", "%s and %s", at(v.Start), at(v.End))
		}
		grace := ms(v.GraceMS)
		if grace == 0 {
			grace = time.Minute
		}
		line("late", "on time within %v; after a downtime, the latest %d missed", grace, v.CatchUp)
		line("job", "priority %d, attempts %d, backoff %s from %v", v.Priority, v.MaxAttempts, orDash(v.Backoff), ms(v.BackoffMS))
		if v.UniqueKey != "" {
			line("unique key", "%s for %v", shown([]byte(v.UniqueKey)), ms(v.UniqueTTLMS))
		}
		for _, c := range v.Columns {
			line("job "+c[0], "%s", shown([]byte(c[1])))
		}
		line("payload", "%d bytes: %s", len(v.Payload), shownPayload(v.Payload, false, "--json has it all"))
		if err := tw.Flush(); err != nil {
			return err
		}
		if next > 0 {
			printNextTimes(s, v)
		}
		return nil
	})
}

// printNextTimes prints a schedule's next occurrences, one a line.
func printNextTimes(s *session, v scheduleView) {
	out := s.out()
	switch {
	case v.Paused:
		fmt.Fprintf(out, "\n%s: paused, no occurrence until resume\n", v.ID)
		return
	case v.Finished:
		fmt.Fprintf(out, "\n%s: finished, no more occurrences\n", v.ID)
		return
	}
	fmt.Fprintf(out, "\nnext occurrences of %s (before jitter):\n", v.ID)
	for _, t := range v.NextTimes {
		fmt.Fprintf(out, "  %s\n", t.Format(time.RFC3339Nano))
	}
}
