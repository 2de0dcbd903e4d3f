package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
)

func (a *app) newLaneCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lane",
		Short: "Show, pause, resume and cap one lane of a queue",
		Long: `lane acts on one lane of a queue (a tenant, a customer, a downstream: the
jobs added with that lane). A paused lane's jobs are not claimed until it is
resumed, while other lanes and the jobs without a lane go on; a lane's cap is
the most of its jobs active at once, across every worker. "lanes <queue>"
lists the lanes with jobs.`,
	}
	cmd.AddCommand(a.newLaneInfoCmd(), a.newLaneSwitchCmd(true), a.newLaneSwitchCmd(false), a.newLaneCapCmd())
	return cmd
}

// laneResult is one lane of a lane action with --json: the lane as it is
// after the action, or the error the action met.
type laneResult struct {
	Queue string `json:"queue"`
	admin.LaneView
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

func (a *app) newLaneInfoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "info <queue> <lane>",
		Short: "Show one lane: waiting, active, cap, paused",
		Long:  "info reads one lane with LANEINFO and never writes; a lane never used reads as all zero.",
		Args:  args(cobra.ExactArgs(2)),
	}
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		ctx, cancel := s.bound(ctx)
		defer cancel()
		q, err := s.queue(ctx, args[0])
		if err != nil {
			return err
		}
		info, err := q.Lane(args[1]).Info(ctx)
		if err != nil {
			return s.explain(q, err)
		}
		v := admin.ViewOfLane(info)
		v.Name = args[1]
		if s.json {
			return s.printJSON(laneResult{Queue: q.Name(), LaneView: v, OK: true})
		}
		return printLanes(s, []admin.LaneView{v}, false, -1)
	})
}

func (a *app) newLaneSwitchCmd(pause bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pause <queue> <lane>…",
		Short: "Stop claims of lanes' jobs until resume",
		Long: `pause stops claims of the jobs of each lane given; other lanes, and the jobs
without a lane, go on, and jobs can still be added to it. Pausing a paused
lane is a no-op.`,
		Args: args(cobra.MinimumNArgs(2)),
	}
	verb, done := "pause", "paused"
	if !pause {
		cmd.Use, cmd.Short = "resume <queue> <lane>…", "Let workers claim paused lanes' jobs again"
		cmd.Long = "resume lets workers claim the jobs of each lane given again and wakes idle ones. Resuming a lane that is not paused is a no-op."
		verb, done = "resume", "resumed"
	}
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		return s.eachLane(ctx, args[0], args[1:], verb, func(lane, queue string) string {
			return done + " lane " + lane + " of " + queue
		}, func(ctx context.Context, l trafikey.Lane) error {
			if pause {
				return l.Pause(ctx)
			}
			return l.Resume(ctx)
		})
	})
}

func (a *app) newLaneCapCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cap <queue> <lane> <n>",
		Short: "Let at most n of a lane's jobs be active at once (0: no cap)",
		Long: `cap lets at most n (1..1000000) jobs of the lane be active at once, across
every worker; 0 removes the cap. A lane at its cap takes no turn until one of
its jobs completes, fails or has its lease recovered; lowering the cap under
the jobs active now takes none of them back.`,
		Args: args(cobra.ExactArgs(3)),
	}
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		n, err := strconv.Atoi(args[2])
		if err != nil || n < 0 {
			return usageErrorf("cap %q: want a count, 0 for no cap", args[2])
		}
		say := func(lane, queue string) string {
			return fmt.Sprintf("capped lane %s of %s at %d active jobs", lane, queue, n)
		}
		if n == 0 {
			say = func(lane, queue string) string { return "removed the cap of lane " + lane + " of " + queue }
		}
		return s.eachLane(ctx, args[0], args[1:2], "cap", say, func(ctx context.Context, l trafikey.Lane) error {
			return l.SetCap(ctx, n)
		})
	})
}

// eachLane runs act on each lane of queue name and prints what it did, a
// line for each lane (say's), or with --json each lane as it is after the
// action.
func (s *session) eachLane(ctx context.Context, name string, lanes []string, verb string, say func(lane, queue string) string, act func(context.Context, trafikey.Lane) error) error {
	openCtx, cancel := s.bound(ctx)
	q, err := s.queue(openCtx, name)
	cancel()
	if err != nil {
		return err
	}
	errs := make([]error, len(lanes))
	results := make([]laneResult, len(lanes))
	for i, lane := range lanes {
		results[i] = laneResult{Queue: q.Name(), LaneView: admin.LaneView{Name: lane}}
		errs[i] = func() error {
			ctx, cancel := s.bound(ctx)
			defer cancel()
			l := q.Lane(lane)
			if err := act(ctx, l); err != nil {
				return s.explain(q, err)
			}
			info, err := l.Info(ctx)
			if err != nil {
				return s.explain(q, err)
			}
			results[i].LaneView = admin.ViewOfLane(info)
			results[i].Name = lane
			return nil
		}()
		results[i].OK = errs[i] == nil
		if errs[i] != nil {
			errs[i] = fmt.Errorf("%s lane %s of %s: %w", verb, shown([]byte(lane)), q.Name(), errs[i])
			results[i].Error = errs[i].Error()
			if !s.json && len(lanes) > 1 {
				fmt.Fprintln(s.cmd.ErrOrStderr(), errs[i])
			}
			continue
		}
		if !s.json {
			fmt.Fprintln(s.out(), say(shown([]byte(lane)), q.Name()))
		}
	}
	if s.json {
		if err := s.printJSON(results); err != nil {
			return err
		}
	}
	return collectFailures(errs)
}
