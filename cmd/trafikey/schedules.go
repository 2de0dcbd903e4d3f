package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
	"github.com/trafikey/trafikey/internal/protocol"
)

func (a *app) newSchedulesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedules",
		Short: "List, add, update, pause, resume and remove a queue's periodic jobs",
		Long: `schedules manages a queue's schedules: each enqueues one job per occurrence of a
cron expression (five fields, or six with seconds first, in a time zone) or of a fixed
interval, exactly once however many workers run. Workers run the schedule
step on their timer; the server's clock decides when an occurrence is due.`,
	}
	cmd.AddCommand(a.newSchedulesListCmd(), a.newScheduleGetCmd(), a.newScheduleSetCmd(false), a.newScheduleSetCmd(true),
		a.newScheduleByIDCmd("pause"), a.newScheduleByIDCmd("resume"), a.newScheduleByIDCmd("remove"))
	return cmd
}

// scheduleView is a schedule as the CLI prints it with --json.
type scheduleView struct {
	ID          string      `json:"id"`
	Cron        string      `json:"cron,omitempty"`
	TimeZone    string      `json:"time_zone,omitempty"`
	EveryMS     int64       `json:"every_ms,omitempty"`
	JitterMS    int64       `json:"jitter_ms"`
	Start       *time.Time  `json:"start,omitempty"`
	End         *time.Time  `json:"end,omitempty"`
	Limit       int         `json:"limit"`
	GraceMS     int64       `json:"grace_ms"`
	CatchUp     int         `json:"catch_up"`
	Revision    int         `json:"revision"`
	Count       int         `json:"count"`
	Last        *time.Time  `json:"last,omitempty"`
	Next        *time.Time  `json:"next,omitempty"`
	Paused      bool        `json:"paused"`
	Finished    bool        `json:"finished"`
	Payload     []byte      `json:"payload"`
	Priority    int         `json:"priority"`
	MaxAttempts int         `json:"max_attempts"`
	Backoff     string      `json:"backoff"`
	BackoffMS   int64       `json:"backoff_ms"`
	UniqueKey   string      `json:"unique_key,omitempty"`
	UniqueTTLMS int64       `json:"unique_ttl_ms,omitempty"`
	Columns     [][2]string `json:"columns,omitempty"`
	// NextTimes are the next occurrences (--next), before jitter.
	NextTimes []time.Time `json:"next_times,omitempty"`
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func viewOfSchedule(s trafikey.ScheduleInfo) scheduleView {
	v := scheduleView{ID: s.ID, Cron: s.Cron, TimeZone: s.TimeZone, EveryMS: s.Every.Milliseconds(),
		JitterMS: s.Jitter.Milliseconds(), Start: timeOrNil(s.Start), End: timeOrNil(s.End), Limit: s.Limit,
		GraceMS: s.Grace.Milliseconds(), CatchUp: s.CatchUp, Revision: s.Revision, Count: s.Count,
		Last: timeOrNil(s.Last), Next: timeOrNil(s.Next), Paused: s.Paused, Finished: !s.Paused && s.Next.IsZero()}
	o := s.Options
	v.Payload, v.Priority, v.MaxAttempts, v.Backoff = s.Payload, o.Priority, o.MaxAttempts, string(o.Backoff)
	v.BackoffMS, v.UniqueKey, v.UniqueTTLMS = o.BackoffBase.Milliseconds(), o.UniqueKey, o.UniqueTTL.Milliseconds()
	v.Columns = optionColumns(o)
	return v
}

// optionColumns shows the options stored as ADD's option columns, name and
// value, in the order the server stores them.
func optionColumns(o trafikey.JobOptions) [][2]string {
	var cols [][2]string
	add := func(name, value string) {
		if value != "" {
			cols = append(cols, [2]string{name, value})
		}
	}
	ms := func(d time.Duration) string {
		if d == 0 {
			return ""
		}
		return strconv.FormatInt(d.Milliseconds(), 10)
	}
	add(protocol.AddOptionLane, o.Lane)
	add(protocol.AddOptionWait, ms(o.KeepOutcome))
	add(protocol.AddOptionTimeout, ms(o.Timeout))
	add(protocol.AddOptionKind, o.Kind)
	if len(o.Headers) > 0 {
		h := url.Values{}
		for k, v := range o.Headers {
			h.Set(k, v)
		}
		add(protocol.AddOptionHeaders, h.Encode())
	}
	return cols
}

func (a *app) newSchedulesListCmd() *cobra.Command {
	var next int
	cmd := &cobra.Command{
		Use:   "list <queue>",
		Short: "List a queue's schedules: spec, next due, occurrences taken, paused",
		Long: `list reads every schedule of the queue, in byte order of the ids, a page at a
time, and never writes. --next N adds each schedule's next N occurrences
(as "schedules get" computes them).`,
		Args: args(cobra.ExactArgs(1)),
	}
	cmd.Flags().IntVar(&next, "next", 0, "add each schedule's next N occurrences (0..1000)")
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
		views := []scheduleView{}
		for info, err := range q.Schedules().List(ctx) {
			if err != nil {
				return s.explain(q, err)
			}
			v := viewOfSchedule(info)
			if next > 0 {
				if v.NextTimes, err = admin.NextOccurrences(info, time.Time{}, next); err != nil {
					return err
				}
			}
			views = append(views, v)
		}
		if s.json {
			return s.printJSON(views)
		}
		tw := tabwriter.NewWriter(s.out(), 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "schedule\tspec\tnext\tcount\tpaused\n")
		for _, v := range views {
			spec := specOf(v)
			due := "-"
			switch {
			case v.Next != nil:
				due = v.Next.Format(time.RFC3339)
			case v.Finished:
				due = "finished"
			}
			count := strconv.Itoa(v.Count)
			if v.Limit > 0 {
				count += " of " + strconv.Itoa(v.Limit)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.ID, spec, due, count, yesNo(v.Paused))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if next > 0 {
			for _, v := range views {
				printNextTimes(s, v)
			}
		}
		return nil
	})
}

// scheduleFlags are the flags of add and update.
type scheduleFlags struct {
	cron, tz, start, end, payload, payloadFile, backoff, unique, lane string
	kind                                                              string
	every, jitter, grace, backoffBase, uniqueTTL, keepOutcome         time.Duration
	limit                                                             int
	catchUp, priority, attempts                                       int
}

func (f *scheduleFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.cron, "cron", "", `cron expression, five fields ("*/5 * * * *") or six, seconds first ("0 */5 * * * *"), or a descriptor ("@hourly")`)
	fs.StringVar(&f.tz, "tz", "", "IANA time zone of --cron (default UTC)")
	fs.DurationVar(&f.every, "every", 0, "a fixed interval instead of --cron (e.g. 90s)")
	fs.DurationVar(&f.jitter, "jitter", 0, "delay each job by up to this, the same on every worker")
	fs.StringVar(&f.start, "start", "", "no occurrence before this time (RFC 3339)")
	fs.StringVar(&f.end, "end", "", "no occurrence after this time (RFC 3339)")
	fs.IntVar(&f.limit, "limit", 0, "at most this many occurrences in all (0: no cap)")
	fs.DurationVar(&f.grace, "grace", 0, "how late an occurrence is still on time (default 1m)")
	fs.IntVar(&f.catchUp, "catch-up", 0, "missed occurrences to enqueue after a downtime, the latest (0: skip them)")
	fs.StringVar(&f.payload, "payload", "", "each job's payload")
	fs.StringVar(&f.payloadFile, "payload-file", "", "read each job's payload from this file")
	fs.IntVar(&f.priority, "priority", 0, "each job's priority, 0..1000")
	fs.IntVar(&f.attempts, "attempts", 0, "each job's attempts (0: 3)")
	fs.StringVar(&f.backoff, "backoff", string(trafikey.BackoffExponential), "each job's backoff: fixed or exponential")
	fs.DurationVar(&f.backoffBase, "backoff-base", 0, "each job's backoff base (0: 1s)")
	fs.StringVar(&f.unique, "unique", "", "each job's unique key: no new job while one holds it")
	fs.DurationVar(&f.uniqueTTL, "unique-ttl", time.Hour, "how long --unique holds at most")
	fs.StringVar(&f.lane, "lane", "", "each job's lane")
	fs.DurationVar(&f.keepOutcome, "keep-outcome", 0, "keep each job's outcome this long for waiters")
	fs.StringVar(&f.kind, "kind", "", "each job's kind, which a worker's Mux routes on")
}

// parseTime reads an RFC 3339 flag; empty is the zero time.
func parseTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, usageErrorf("--%s %q is not an RFC 3339 time", name, v)
	}
	return t, nil
}

// apply sets the flags the command line gave on s: all of them for add,
// the changed ones over the stored schedule for update.
func (f *scheduleFlags) apply(fs *pflag.FlagSet, s *trafikey.Schedule, update bool) error {
	set := func(name string) bool { return !update || fs.Changed(name) }
	var err error
	if fs.Changed("cron") || fs.Changed("every") {
		// a new spec: its zone is the one given, none by default
		s.Cron, s.Every, s.TimeZone = f.cron, f.every, ""
	}
	if set("tz") {
		s.TimeZone = f.tz
	}
	if set("jitter") {
		s.Jitter = f.jitter
	}
	if set("start") {
		if s.Start, err = parseTime("start", f.start); err != nil {
			return err
		}
	}
	if set("end") {
		if s.End, err = parseTime("end", f.end); err != nil {
			return err
		}
	}
	if set("limit") {
		s.Limit = f.limit
	}
	if set("grace") {
		s.Grace = f.grace
	}
	if set("catch-up") {
		s.CatchUp = f.catchUp
	}
	payload := []byte(f.payload)
	if f.payloadFile != "" {
		if fs.Changed("payload") {
			return usageErrorf("give --payload or --payload-file, not both")
		}
		if payload, err = os.ReadFile(f.payloadFile); err != nil {
			return usageErrorf("--payload-file: %v", err)
		}
	}
	if !update {
		s.Payload = payload
		if s.Payload == nil {
			s.Payload = []byte{}
		}
		s.Options = trafikey.JobOptions{Priority: f.priority, MaxAttempts: f.attempts, Backoff: trafikey.BackoffKind(f.backoff), BackoffBase: f.backoffBase,
			Lane: f.lane, KeepOutcome: f.keepOutcome, Kind: f.kind}
		if f.unique != "" {
			s.Options.UniqueKey, s.Options.UniqueTTL = f.unique, f.uniqueTTL
		}
		return nil
	}
	// update: edit the stored job, keeping what no flag names
	t := &s.Options
	if fs.Changed("payload") || fs.Changed("payload-file") {
		s.Payload = payload
	}
	if fs.Changed("priority") {
		t.Priority = f.priority
	}
	if fs.Changed("attempts") {
		t.MaxAttempts = f.attempts
	}
	if fs.Changed("backoff") {
		t.Backoff = trafikey.BackoffKind(f.backoff)
	}
	if fs.Changed("backoff-base") {
		t.BackoffBase = f.backoffBase
	}
	if fs.Changed("unique") {
		t.UniqueKey = f.unique
		if f.unique == "" {
			t.UniqueTTL = 0
		} else if t.UniqueTTL == 0 || fs.Changed("unique-ttl") {
			t.UniqueTTL = f.uniqueTTL
		}
	} else if fs.Changed("unique-ttl") && t.UniqueKey != "" {
		t.UniqueTTL = f.uniqueTTL
	}
	if fs.Changed("lane") {
		t.Lane = f.lane
	}
	if fs.Changed("keep-outcome") {
		t.KeepOutcome = max(f.keepOutcome, 0)
	}
	if fs.Changed("kind") {
		t.Kind = f.kind
	}
	return nil
}

func (a *app) newScheduleSetCmd(update bool) *cobra.Command {
	f := &scheduleFlags{}
	cmd := &cobra.Command{
		Use:   "add <queue> <id>",
		Short: "Add a schedule (or replace the one with that id)",
		Long: `add defines schedule <id> of the queue, opening (installing) the queue when it
is new: --cron or --every, then the bounds, the missed-occurrence policy and
the job every occurrence enqueues. It prints the schedule's revision.`,
		Args: args(cobra.ExactArgs(2)),
	}
	if update {
		cmd.Use, cmd.Short = "update <queue> <id>", "Change a schedule: the flags given replace, the rest is kept"
		cmd.Long = `update reads schedule <id> and writes it back with the flags given changed
(update --every 10m switches it to an interval; --lane "" takes the lane
off). The occurrences already taken stay taken; the next follow the new
definition. A schedule that does not exist is not found (exit code 3).`
	}
	f.register(cmd.Flags())
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		ctx, cancel := s.bound(ctx)
		defer cancel()
		if !protocol.ValidBusName([]byte(args[1])) {
			return usageErrorf("%s is not a schedule id (1..%d bytes of letters, digits and - _ . : / @)", strconv.Quote(args[1]), protocol.MaxScheduleID)
		}
		var q *trafikey.Queue
		var sched trafikey.Schedule
		var err error
		if update {
			if q, err = s.queue(ctx, args[0]); err != nil {
				return err
			}
			info, err := q.Schedules().Get(ctx, args[1])
			if err != nil {
				return s.explain(q, err)
			}
			sched = info.Schedule
		} else {
			if !cmd.Flags().Changed("cron") && !cmd.Flags().Changed("every") {
				return usageErrorf("give --cron or --every")
			}
			if !protocol.ValidQueueName(args[0]) {
				return usageErrorf("%s is not a queue name (1..%d bytes, no braces)", strconv.Quote(args[0]), protocol.MaxQueueName)
			}
			client, err := s.client()
			if err != nil {
				return err
			}
			if q, err = trafikey.Open(ctx, client, args[0], nil); err != nil {
				return err
			}
			sched.ID = args[1]
		}
		if err := f.apply(cmd.Flags(), &sched, update); err != nil {
			return err
		}
		rev, err := q.Schedules().Set(ctx, sched)
		if err != nil {
			return s.explain(q, err)
		}
		if s.json {
			return s.printJSON(map[string]any{"queue": q.Name(), "id": sched.ID, "revision": rev})
		}
		fmt.Fprintf(s.out(), "schedule %s of %s at revision %d\n", sched.ID, q.Name(), rev)
		return nil
	})
}

func (a *app) newScheduleByIDCmd(verb string) *cobra.Command {
	cmd := &cobra.Command{Use: verb + " <queue> <id>…", Args: args(cobra.MinimumNArgs(2))}
	done := verb + "d"
	switch verb {
	case "pause":
		cmd.Short = "Stop schedules: no occurrence is enqueued until resume"
		cmd.Long = "pause stops each schedule given; the occurrences until resume are skipped. Pausing a paused schedule is a no-op; a schedule that does not exist is not found (exit code 3)."
	case "resume":
		cmd.Short = "Start paused schedules again, from now"
		cmd.Long = "resume starts each schedule given again from the server's time. Resuming a running schedule is a no-op; a schedule that does not exist is not found (exit code 3)."
	default:
		cmd.Short = "Delete schedules (the jobs they enqueued stay)"
		cmd.Long = "remove deletes each schedule given; the jobs it enqueued stay. A schedule that does not exist is not found (exit code 3)."
	}
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		ctx, cancel := s.bound(ctx)
		defer cancel()
		q, err := s.queue(ctx, args[0])
		if err != nil {
			return err
		}
		ids := args[1:]
		// the server takes pausing or resuming an absent schedule as a
		// no-op: the schedules read first tell a mistyped id, and one
		// paused or running already
		var paused map[string]bool
		if verb != "remove" {
			paused = map[string]bool{}
			for info, err := range q.Schedules().List(ctx) {
				if err != nil {
					return s.explain(q, err)
				}
				paused[info.ID] = info.Paused
			}
		}
		errs := make([]error, len(ids))
		results := make([]jobResult, len(ids))
		for i, id := range ids {
			was, known := paused[id]
			switch {
			case verb != "remove" && !known && protocol.ValidBusName([]byte(id)):
				errs[i] = fmt.Errorf("no such schedule: %w", trafikey.ErrNotFound)
			case verb == "pause":
				errs[i] = q.Schedules().Pause(ctx, id)
			case verb == "resume":
				errs[i] = q.Schedules().Resume(ctx, id)
			default:
				errs[i] = q.Schedules().Remove(ctx, id)
			}
			results[i] = jobResult{ID: id, OK: errs[i] == nil}
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s schedule %s: %w", verb, id, s.explain(q, errs[i]))
				results[i].Error = errs[i].Error()
				if !s.json && len(ids) > 1 {
					fmt.Fprintln(s.cmd.ErrOrStderr(), errs[i])
				}
				continue
			}
			switch {
			case s.json:
			case verb == "pause" && was:
				fmt.Fprintf(s.out(), "schedule %s was paused already\n", id)
			case verb == "resume" && !was:
				fmt.Fprintf(s.out(), "schedule %s was not paused\n", id)
			default:
				fmt.Fprintf(s.out(), "%s schedule %s\n", done, id)
			}
		}
		if s.json {
			if err := s.printJSON(results); err != nil {
				return err
			}
		}
		return collectFailures(errs)
	})
}
