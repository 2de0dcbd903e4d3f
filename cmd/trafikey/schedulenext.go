package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
)

// maxNext bounds --next.
const maxNext = 1000

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
			if v.NextTimes, err = admin.NextOccurrences(info, time.Time{}, next); err != nil {
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
