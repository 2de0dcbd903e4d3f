package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
	"github.com/trafikey/trafikey/internal/protocol"
)

func (a *app) newJobsCmd() *cobra.Command {
	var (
		state, lane, cursor string
		kind                string
		limit, clipAt       int
		perLane, maxLanes   int
		newest, noLane      bool
	)
	cmd := &cobra.Command{
		Use:   "jobs <queue> --state <state>",
		Short: "List a queue's jobs in one state, a page at a time",
		Long: `jobs lists the jobs of a queue in one state with JOBS and never writes:
pending in claim order (priority, then id), delayed by due time, active by lease deadline, dead by time of death, completed (jobs kept by
the retention policy) by time of completion, waiting (parents of flows) by id.
The oldest come first; --newest turns the order around (the latest deaths
first). A page holds at most --limit jobs (1..1000); the line after it gives
the --cursor that continues after its last job, whatever changed meanwhile.
Errors, progress and payload previews are cut to --clip bytes; a payload over
16 KiB has its size and no preview. With --json the page is one object whose
"next" is the cursor ("" when done) and whose previews are base64.

Pending jobs live in one list for the jobs without a lane and one per lane.
Without --lane, jobs --state pending shows them all: the total and where the
jobs are ("54 pending: 2 without a lane, 52 in 3 lanes"), the page of the
jobs without a lane, then each lane with waiting jobs (in byte order of the
names, at most --lanes of them) with its first --per-lane jobs and the
--lane/--cursor pair that continues it. --lane NAME lists one lane's,
--no-lane (or a --cursor without --lane) the jobs without a lane only. With
--json the page of the jobs without a lane carries "pending", "without_lane",
"in_lanes" and "lanes": each lane's counts, "rows" and "next".

--kind lists only the jobs of that kind (JobOptions.Kind) of one list (with
--state pending, the jobs without a lane unless --lane names one): the server
has no index of kinds, so the command reads pages of 100 on until the page
holds --limit jobs of the kind, the list is read, or 10,000 jobs were
examined; the cursor continues after the last job examined.`,
		Args: args(cobra.ExactArgs(1)),
	}
	f := cmd.Flags()
	f.StringVar(&state, "state", "", "pending, delayed, active, dead, completed or waiting (required)")
	f.StringVar(&lane, "lane", "", "with --state pending: only the jobs waiting in this lane")
	f.BoolVar(&noLane, "no-lane", false, "with --state pending: only the jobs without a lane")
	f.IntVar(&perLane, "per-lane", 5, "with --state pending and no --lane: the first jobs of each lane shown, 1..1000")
	f.IntVar(&maxLanes, "lanes", 20, "with --state pending and no --lane: the most lanes shown (0: all)")
	f.IntVar(&limit, "limit", 20, "jobs per page, 1..1000")
	f.StringVar(&cursor, "cursor", "", "continue after this cursor, as a previous page printed it")
	f.BoolVar(&newest, "newest", false, "newest first")
	f.IntVar(&clipAt, "clip", 120, "bytes of each error, progress and payload preview shown, 0..1024")
	f.StringVar(&kind, "kind", "", "only the jobs of this kind, read on through further pages (at most 10,000 jobs examined)")
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		if state == "" {
			return usageErrorf("--state is required: pending, delayed, active, dead, completed or waiting")
		}
		if clipAt < 0 || clipAt > protocol.MaxClip {
			return usageErrorf("--clip %d outside 0..%d", clipAt, protocol.MaxClip)
		}
		clipOpt := clipAt
		if clipAt == 0 {
			clipOpt = -1 // sizes only
		}
		ctx, cancel := s.bound(ctx)
		defer cancel()
		q, err := s.queue(ctx, args[0])
		if err != nil {
			return err
		}
		st := trafikey.JobState(state)
		if noLane && (lane != "" || st != trafikey.StatePending) {
			return usageErrorf("--no-lane goes with --state pending, without --lane")
		}
		if kind != "" {
			opts := trafikey.JobsOptions{Lane: lane, Newest: newest, After: cursor, Limit: limit, Clip: clipOpt}
			return listKind(ctx, s, q, st, opts, kind)
		}
		if st == trafikey.StatePending && lane == "" && cursor == "" && !noLane {
			if perLane < 1 || perLane > protocol.MaxCount {
				return usageErrorf("--per-lane %d outside 1..%d", perLane, protocol.MaxCount)
			}
			if maxLanes < 0 {
				return usageErrorf("--lanes %d is negative", maxLanes)
			}
			opts := trafikey.JobsOptions{Newest: newest, Limit: limit, Clip: clipOpt}
			v, err := readPending(ctx, q, opts, perLane, maxLanes)
			if err != nil {
				return s.explain(q, err)
			}
			if s.json {
				return s.printJSON(v)
			}
			return printPending(s, v)
		}
		p, err := q.Jobs(ctx, st, trafikey.JobsOptions{
			Lane: lane, Newest: newest, After: cursor, Limit: limit, Clip: clipOpt,
		})
		if err != nil {
			return s.explain(q, err)
		}
		if s.json {
			return s.printJSON(admin.ViewOfJobsPage(q.Name(), st, lane, p))
		}
		return printJobs(s, q.Name(), st, p)
	})
}

// whenHeader names the time column of each state's listing.
var whenHeader = map[trafikey.JobState]string{
	trafikey.StateDelayed: "DUE", trafikey.StateActive: "LEASE UNTIL",
	trafikey.StateDead: "DIED", trafikey.StateCompleted: "COMPLETED",
}

func printJobs(s *session, queue string, state trafikey.JobState, p trafikey.JobsPage) error {
	out := s.out()
	if len(p.Rows) == 0 {
		fmt.Fprintf(out, "no %s jobs in %s on this page (%d in all)\n", state, queue, p.Total)
		return nil
	}
	if err := printJobRows(out, state, p.Rows); err != nil {
		return err
	}
	if p.Next != "" {
		fmt.Fprintf(out, "%d of %d %s jobs; next page: --cursor %s\n", len(p.Rows), p.Total, state, shellWord(string(p.Next)))
	} else {
		fmt.Fprintf(out, "%d %s jobs on this page, %d in all; no more pages\n", len(p.Rows), state, p.Total)
	}
	return nil
}

// printJobRows prints rows of a listing of state as a table.
func printJobRows(out io.Writer, state trafikey.JobState, rows []trafikey.JobRow) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	when, timed := whenHeader[state]
	head := []string{"ID", "KIND"}
	if timed {
		head = append(head, when)
	}
	head = append(head, "ATTEMPTS", "PRIO", "LANE", "PARENT", "ADDED", "SIZE", "ERROR / PREVIEW")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	now := time.Now()
	for _, r := range rows {
		if !r.Exists {
			fmt.Fprintf(tw, "%s\t(gone)\n", shown([]byte(r.ID)))
			continue
		}
		cols := []string{r.ID, orDash(shownName(r.Kind))}
		if timed {
			cols = append(cols, relative(r.At, now))
		}
		parent := r.Parent
		if r.Waiting > 0 {
			parent = strconv.Itoa(r.Waiting) + " children left"
		}
		detail := ""
		switch {
		case r.LastError != "":
			detail = oneLine(r.LastError, r.ErrorSize)
		case r.Preview != nil:
			detail = oneLine(string(r.Preview), r.PayloadSize)
		}
		cols = append(cols, fmt.Sprintf("%d/%d", r.Attempts, r.MaxAttempts), strconv.Itoa(r.Priority),
			orDash(shownName(r.Lane)), orDash(parent), relative(r.AddedAt, now), strconv.Itoa(r.PayloadSize), detail)
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	return tw.Flush()
}

// relative prints t against now: "3m ago", "in 5s".
func relative(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t).Round(time.Second)
	if d >= 0 {
		return d.String() + " ago"
	}
	return "in " + (-d).String()
}

// oneLine shows a text on one table line: its first line, escaped when not
// printable, with "…" when more of it was left out (size is its whole
// length).
func oneLine(s string, size int) string {
	cut := size > len(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s, cut = s[:i], true
	}
	s = shown([]byte(s))
	if cut {
		s += " …"
	}
	return s
}

func shownName(s string) string {
	if s == "" {
		return ""
	}
	return shown([]byte(s))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shellWord quotes s for a shell when it holds anything but the characters
// of a plain cursor or name.
func shellWord(s string) string {
	plain := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@", r)
	}
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !plain(r) }) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// deadFlags are the filter flags of the bulk forms of requeue and remove.
type deadFlags struct {
	allDead               bool
	lane, errorContains   string
	diedAfter, diedBefore string
	olderThan             time.Duration
	deadBefore            string // remove's shorthand of --all-dead --died-before
}

func (d *deadFlags) register(f *pflag.FlagSet, remove bool) {
	f.BoolVar(&d.allDead, "all-dead", false, "act on every dead job the filter flags take, in calls of 1,000")
	f.StringVar(&d.lane, "lane", "", "with --all-dead: the dead jobs of this lane")
	f.StringVar(&d.errorContains, "error-contains", "", "with --all-dead: the dead jobs whose last error contains this text")
	f.StringVar(&d.diedAfter, "died-after", "", "with --all-dead: the jobs that died at or after this time (RFC 3339)")
	f.StringVar(&d.diedBefore, "died-before", "", "with --all-dead: the jobs that died before this time (RFC 3339), or this long ago (a duration: 24h)")
	f.DurationVar(&d.olderThan, "older-than", 0, "with --all-dead: the jobs that died at least this long ago (server clock)")
	if remove {
		f.StringVar(&d.deadBefore, "dead-before", "", "remove the dead jobs that died before this time (RFC 3339) or this long ago (24h); short for --all-dead --died-before")
	}
}

// bulk reports whether the flags ask for the bulk form.
func (d *deadFlags) bulk() bool { return d.allDead || d.deadBefore != "" }

// filter builds the dead filter of the flags.
func (d *deadFlags) filter() (trafikey.DeadFilter, error) {
	f := trafikey.DeadFilter{Lane: d.lane, ErrorContains: d.errorContains, OlderThan: d.olderThan}
	if d.olderThan < 0 {
		return f, usageErrorf("--older-than %v is negative", d.olderThan)
	}
	if d.diedAfter != "" {
		t, err := time.Parse(time.RFC3339Nano, d.diedAfter)
		if err != nil {
			return f, usageErrorf("--died-after %q: want an RFC 3339 time (2006-01-02T15:04:05Z)", d.diedAfter)
		}
		f.DiedAfter = t
	}
	before := d.diedBefore
	if d.deadBefore != "" {
		if before != "" {
			return f, usageErrorf("give --dead-before or --died-before, not both")
		}
		before = d.deadBefore
	}
	if before != "" {
		if t, err := time.Parse(time.RFC3339Nano, before); err == nil {
			f.DiedBefore = t
		} else if ago, err := time.ParseDuration(before); err == nil && ago >= 0 {
			// an age by the server's clock, as --older-than
			f.OlderThan = max(f.OlderThan, ago)
		} else {
			return f, usageErrorf("%q: want an RFC 3339 time (2006-01-02T15:04:05Z) or a duration (24h)", before)
		}
	}
	return f, nil
}

// anyFilter reports whether a filter flag was given, so one given without
// --all-dead can be refused.
func (d *deadFlags) anyFilter() bool {
	return d.lane != "" || d.errorContains != "" || d.diedAfter != "" || d.diedBefore != "" || d.olderThan != 0
}

// bulkBar reports a bulk operation's progress on a bar made at its first
// report, once its total is known.
type bulkBar struct {
	s    *session
	mode string
	what string
	bar  *progressbar.ProgressBar
	err  error
}

func (b *bulkBar) report(p trafikey.BulkProgress) {
	if b.bar == nil && b.err == nil {
		b.bar, b.err = progressBar(b.mode, b.s.cmd.ErrOrStderr(), int(p.Total), b.what)
	}
	if b.bar != nil {
		_ = b.bar.Set(min(p.Examined, p.Total))
	}
}

func (b *bulkBar) finish() {
	if b.bar != nil {
		_ = b.bar.Finish()
	}
}

// runDeadBulk runs the bulk form of requeue or remove on queue name.
func runDeadBulk(ctx context.Context, s *session, act jobAction, name string, d *deadFlags, mode string) error {
	f, err := d.filter()
	if err != nil {
		return err
	}
	openCtx, cancel := s.bound(ctx)
	q, err := s.queue(openCtx, name)
	cancel()
	if err != nil {
		return err
	}
	// the walk is bounded by ctx only: --timeout would cut a long one short
	bar := &bulkBar{s: s, mode: mode, what: act.name + " dead"}
	var last trafikey.BulkProgress
	n, err := act.bulk(ctx, q, f, func(p trafikey.BulkProgress) {
		last = p
		bar.report(p)
	})
	bar.finish()
	if bar.err != nil {
		return bar.err
	}
	if err != nil {
		if n > 0 {
			fmt.Fprintf(s.cmd.ErrOrStderr(), "%s %d dead jobs of %s before the error\n", act.done, n, q.Name())
		}
		return s.explain(q, err)
	}
	if s.json {
		return s.printJSON(map[string]any{"queue": q.Name(), act.done: n, "examined": last.Examined})
	}
	fmt.Fprintf(s.out(), "%s %d dead jobs of %s (%d examined)\n", act.done, n, q.Name(), last.Examined)
	return nil
}
