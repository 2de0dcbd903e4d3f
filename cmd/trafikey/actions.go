package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/trafikey/trafikey"
)

func (a *app) newPauseCmd(pause bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pause <queue>…",
		Short: "Stop claims on queues: workers get no jobs until resume",
		Long: `pause stops claims on each queue given: adding, completing and failing go on,
and workers claim nothing until resume. Pausing a paused queue is a no-op.`,
		Args: args(cobra.MinimumNArgs(1)),
	}
	verb, done := "pause", "paused"
	if !pause {
		cmd.Use, cmd.Short = "resume <queue>…", "Let workers claim again on paused queues"
		cmd.Long = "resume lets workers claim again on each queue given and wakes idle ones. Resuming a running queue is a no-op."
		verb, done = "resume", "resumed"
	}
	return a.connected(cmd, false, func(ctx context.Context, s *session, args []string) error {
		errs := make([]error, len(args))
		for i, name := range args {
			errs[i] = func() error {
				ctx, cancel := s.bound(ctx)
				defer cancel()
				q, err := s.queue(ctx, name)
				if err != nil {
					return err
				}
				if pause {
					err = q.Admin().Pause(ctx)
				} else {
					err = q.Admin().Resume(ctx)
				}
				return s.explain(q, err)
			}()
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s %s: %w", verb, name, errs[i])
				if len(args) > 1 {
					fmt.Fprintln(s.cmd.ErrOrStderr(), errs[i])
				}
				continue
			}
			fmt.Fprintf(s.out(), "%s %s\n", done, name)
		}
		return collectFailures(errs)
	})
}

func (a *app) newPromoteCmd() *cobra.Command {
	var all bool
	var progress string
	cmd := &cobra.Command{
		Use:   "promote <queue>",
		Short: "Move a queue's due delayed jobs to pending now",
		Long: `promote moves every delayed or retrying job whose time has come to pending, in
PROMOTE calls of at most 1,000 jobs, and prints how many it moved. Workers do
the same on a timer; this is for a queue without running workers, or to see
the count. Jobs not yet due stay delayed.

With --all, every delayed job moves, due or not, in PROMOTEALL calls of at most
100, with a progress bar on a terminal; it stops once it has moved as many
jobs as were delayed when it started. "retry <queue> <id>" moves one.`,
		Args: args(cobra.ExactArgs(1)),
	}
	cmd.Flags().BoolVar(&all, "all", false, "every delayed job, not only the due ones")
	cmd.Flags().StringVar(&progress, "progress", "auto", "with --all, progress bar on stderr: auto (on a terminal, for 100 jobs or more), always, never")
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		openCtx, cancel := s.bound(ctx)
		q, err := s.queue(openCtx, args[0])
		cancel()
		if err != nil {
			return err
		}
		if all {
			bar := &bulkBar{s: s, mode: progress, what: "promote"}
			n, err := q.Admin().PromoteAll(ctx, bar.report)
			bar.finish()
			if bar.err != nil {
				return bar.err
			}
			if err != nil {
				return s.explain(q, err)
			}
			if s.json {
				return s.printJSON(map[string]any{"queue": q.Name(), "promoted": n})
			}
			fmt.Fprintf(s.out(), "promoted %d delayed jobs of %s\n", n, q.Name())
			return nil
		}
		const page = 1000
		total := 0
		for {
			callCtx, cancel := s.bound(ctx)
			mt, err := q.Admin().Maintain(callCtx, page)
			n := mt.Promoted
			cancel()
			total += n
			if err != nil {
				return s.explain(q, err)
			}
			if n < page {
				break
			}
		}
		if s.json {
			return s.printJSON(map[string]any{"queue": q.Name(), "promoted": total})
		}
		fmt.Fprintf(s.out(), "promoted %d jobs of %s\n", total, q.Name())
		return nil
	})
}

// jobAction is a verb on one job by id, and for requeue and remove also
// on every dead job a filter takes (bulk).
type jobAction struct {
	name, done, short, long string
	do                      func(ctx context.Context, q *trafikey.Queue, id string) error
	bulk                    func(ctx context.Context, q *trafikey.Queue, f trafikey.DeadFilter, progress func(trafikey.BulkProgress)) (int, error)
	bulkLong                string
	// flows makes the command read each job before it acts, to say when
	// the job was a parent waiting for children, whose flow goes with it.
	flows bool
}

func requeueAction() jobAction {
	return jobAction{
		name: "requeue", done: "requeued",
		short: "Move dead jobs back to pending with a fresh set of attempts",
		long: `requeue moves each dead job given back to pending, with a fresh set of
attempts. A job that is not dead is refused (exit code 4); one that does not
exist is not found (3).`,
		do: func(ctx context.Context, q *trafikey.Queue, id string) error { return q.Admin().Requeue(ctx, id) },
		bulk: func(ctx context.Context, q *trafikey.Queue, f trafikey.DeadFilter, p func(trafikey.BulkProgress)) (int, error) {
			return q.Admin().RequeueDead(ctx, f, p)
		},
		bulkLong: `

With --all-dead and no ids, requeue moves every dead job the filter flags take
(all of them without any): --lane, --error-contains (a text of the last error),
--died-after and --died-before (RFC 3339 times; --died-before also takes a
duration: that long ago), --older-than (a duration). It walks the dead jobs
oldest first in REQUEUEDEAD calls of at most 100 and stops at the jobs that
died after it started, so a job that fails again at once is not requeued twice.`,
	}
}

func removeAction() jobAction {
	return jobAction{
		name: "remove", done: "removed",
		short: "Delete pending, delayed, dead or retained jobs, and waiting parents with their flows",
		long: `remove deletes each pending, delayed, dead or retained completed job given, with
its logs, and releases its unique key; a parent waiting for it is told, as if
it had finished. A parent still waiting for its children is removed with its
whole flow, every descendant (at most 1,000 jobs), all or none: remove says
"removed job <id> and its flow" for it (it looks each id up among the waiting
parents first, a one-row read).
An active job, or a flow with an active job, is refused (exit code 4): a
worker holds it. A job that does not exist is not found (3).`,
		flows: true,
		do:    func(ctx context.Context, q *trafikey.Queue, id string) error { return q.Admin().Remove(ctx, id) },
		bulk: func(ctx context.Context, q *trafikey.Queue, f trafikey.DeadFilter, p func(trafikey.BulkProgress)) (int, error) {
			return q.Admin().RemoveDead(ctx, f, p)
		},
		bulkLong: `

With --dead-before <time or duration> and no ids, remove deletes the dead jobs
that died before that time (RFC 3339) or that long ago (24h, by the server's
clock); --all-dead with the filter flags of requeue (--lane, --error-contains,
--died-after, --died-before, --older-than) chooses them as requeue does. It
walks the dead jobs oldest first in REMOVEDEAD calls of at most 100.`,
	}
}

func retryAction() jobAction {
	return jobAction{
		name: "retry", done: "retried",
		short: "Run delayed jobs now, without waiting for their retry or scheduled time",
		long: `retry moves each delayed job given (waiting for its retry backoff or its
scheduled time) to pending now; it keeps its attempts. A job that is not
delayed or pending is refused (exit code 4); one that does not exist is not
found (3).
"promote <queue> --all" does it for every delayed job.`,
		do: func(ctx context.Context, q *trafikey.Queue, id string) error {
			_, err := q.Admin().Reschedule(ctx, id, 0)
			return err
		},
	}
}

func cancelAction() jobAction {
	return jobAction{
		name: "cancel", done: "cancelled",
		short: "End pending, delayed or running jobs: they go to the dead jobs as cancelled",
		long: `cancel ends each pending, delayed or running job given: it goes to the dead
jobs with the error "cancelled" (requeue runs it again). A running job's
worker learns it at its next heartbeat and stops the handler. A job in
another state is refused (exit code 4); one that does not exist is not
found (3).`,
		do: func(ctx context.Context, q *trafikey.Queue, id string) error { return q.Cancel(ctx, id) },
	}
}

// jobResult is one job of a requeue, remove or cancel with --json.
type jobResult struct {
	ID string `json:"id"`
	OK bool   `json:"ok"`
	// Flow reports a parent waiting for children when it was removed:
	// its flow was removed with it.
	Flow  bool   `json:"flow,omitempty"`
	Error string `json:"error,omitempty"`
}

// actionParallel is how many calls a bulk requeue or remove keeps in
// flight; the client pipelines them on its connection.
const actionParallel = 16

func (a *app) newJobActionCmd(act jobAction) *cobra.Command {
	var progress string
	var dead deadFlags
	cmd := &cobra.Command{
		Use:   act.name + " <queue> <id>…",
		Short: act.short,
		Long: act.long + `

Give ids as arguments, or "-" to read them from standard input, one a line
(e.g. from a script). Each id is one call; with many, up to 16 are in flight
at once and a progress bar is shown on a terminal.` + act.bulkLong,
		Args: args(func(cmd *cobra.Command, a []string) error {
			if act.bulk != nil && dead.bulk() {
				return cobra.ExactArgs(1)(cmd, a)
			}
			return cobra.MinimumNArgs(2)(cmd, a)
		}),
	}
	cmd.Flags().StringVar(&progress, "progress", "auto", "progress bar on stderr: auto (on a terminal, for 100 jobs or more), always, never")
	if act.bulk != nil {
		dead.register(cmd.Flags(), act.name == "remove")
	}
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		if act.bulk != nil {
			if dead.bulk() {
				return runDeadBulk(ctx, s, act, args[0], &dead, progress)
			}
			if dead.anyFilter() {
				return usageErrorf("the filter flags choose dead jobs with --all-dead, not ids")
			}
		}
		ids, err := readIDs(args[1:], s.cmd.InOrStdin())
		if err != nil {
			return err
		}
		openCtx, cancel := s.bound(ctx)
		q, err := s.queue(openCtx, args[0])
		cancel()
		if err != nil {
			return err
		}
		bar, err := progressBar(progress, s.cmd.ErrOrStderr(), len(ids), act.name)
		if err != nil {
			return err
		}
		errs := make([]error, len(ids))
		flows := make([]bool, len(ids))
		var wg sync.WaitGroup
		next := make(chan int)
		for range min(actionParallel, len(ids)) {
			wg.Go(func() {
				for i := range next {
					callCtx, cancel := s.bound(ctx)
					if act.flows {
						flows[i] = waitingParent(callCtx, q, ids[i])
					}
					errs[i] = s.explain(q, act.do(callCtx, q, ids[i]))
					cancel()
					if bar != nil {
						_ = bar.Add(1)
					}
				}
			})
		}
	feed:
		for i := range ids {
			select {
			case next <- i:
			case <-ctx.Done():
				break feed
			}
		}
		close(next)
		wg.Wait()
		if bar != nil {
			_ = bar.Finish()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		ok := 0
		results := make([]jobResult, len(ids))
		for i, err := range errs {
			results[i] = jobResult{ID: ids[i], OK: err == nil, Flow: err == nil && flows[i]}
			if err != nil {
				results[i].Error = err.Error()
				errs[i] = fmt.Errorf("%s %s: %w", act.name, ids[i], err)
				if !s.json && len(ids) > 1 {
					fmt.Fprintln(s.cmd.ErrOrStderr(), errs[i])
				}
				continue
			}
			ok++
			if flows[i] && !s.json {
				fmt.Fprintf(s.out(), "%s job %s and its flow\n", act.done, ids[i])
			}
		}
		if s.json {
			if err := s.printJSON(results); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(s.out(), "%s %d of %d jobs of %s\n", act.done, ok, len(ids), q.Name())
		}
		return collectFailures(errs)
	})
}

// waitingParent reports whether job id is a parent waiting for its
// children. It reads the one row of the waiting parents' listing at the id
// (their score is the id), without the payload, which INSPECT would read
// whole however large. Any error reads as no: the action that follows
// meets it too.
func waitingParent(ctx context.Context, q *trafikey.Queue, id string) bool {
	n, err := strconv.ParseUint(id, 10, 63)
	if err != nil || n == 0 || strconv.FormatUint(n, 10) != id {
		return false
	}
	before := strconv.FormatUint(n-1, 10)
	p, err := q.Jobs(ctx, trafikey.StateWaiting, trafikey.JobsOptions{After: before + ":" + before, Limit: 1, Clip: -1})
	return err == nil && len(p.Rows) == 1 && p.Rows[0].ID == id
}

// readIDs returns the ids of the arguments, reading "-" from in.
func readIDs(args []string, in io.Reader) ([]string, error) {
	var ids []string
	for _, a := range args {
		if a != "-" {
			ids = append(ids, a)
			continue
		}
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			if id := strings.TrimSpace(sc.Text()); id != "" {
				ids = append(ids, id)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read ids from standard input: %w", err)
		}
	}
	if len(ids) == 0 {
		return nil, usageErrorf("no job ids given")
	}
	return ids, nil
}

// progressBar returns a bar of n steps on w as mode says, or nil for none.
func progressBar(mode string, w io.Writer, n int, what string) (*progressbar.ProgressBar, error) {
	switch mode {
	case "never":
		return nil, nil
	case "always":
	case "auto":
		f, ok := w.(*os.File)
		if n < 100 || !ok || !term.IsTerminal(int(f.Fd())) {
			return nil, nil
		}
	default:
		return nil, usageErrorf("--progress %q: want auto, always or never", mode)
	}
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	), nil
}
