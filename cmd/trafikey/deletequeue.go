package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
)

// errNotConfirmed is a deletion the operator did not confirm.
var errNotConfirmed = errors.New("not confirmed")

// deleteQueueJSON is `trafikey delete-queue --json`: the queue's counts
// just before, and the keys deleted.
type deleteQueueJSON struct {
	Queue       string          `json:"queue"`
	Before      admin.QueueView `json:"before"`
	Schedules   int             `json:"schedules"`
	DeletedKeys int             `json:"deleted_keys"`
}

func (a *app) newDeleteQueueCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete-queue <queue>",
		Short: "Delete a queue and everything it holds",
		Long: `delete-queue deletes a queue with its jobs in every state, their logs and
results, its lanes, schedules, settings, counters and events (DeleteQueue).
It first prints the queue's counts, then asks for the queue's name to be
typed on the terminal; without a terminal (a script, a pipe) it refuses
unless --yes is given. It prints how many keys it deleted.

Workers still running on the queue are refused from the first step on (the
queue's wire stamp goes first) until they stop; a worker or producer that
opens the queue again afterwards makes a new, empty queue of that name.`,
		Args: args(cobra.ExactArgs(1)),
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "delete without asking (needed without a terminal)")
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		readCtx, cancel := s.bound(ctx)
		q, err := s.queue(readCtx, args[0])
		if err != nil {
			cancel()
			return err
		}
		st, err := q.Stats(readCtx)
		if err != nil {
			cancel()
			return s.explain(q, err)
		}
		schedules := 0
		for _, err := range q.Schedules().List(readCtx) {
			if err != nil {
				cancel()
				return s.explain(q, err)
			}
			schedules++
		}
		cancel()
		before := admin.ViewOfStats(q.Name(), st)
		stderr := s.cmd.ErrOrStderr()
		fmt.Fprintf(stderr, "queue %s on %s holds %s\n", q.Name(), s.conn.where(), describeCounts(st, schedules))
		if st.Active > 0 {
			fmt.Fprintf(stderr, "%d jobs are active: their workers will be refused\n", st.Active)
		}
		if !yes {
			if !a.terminal(s.cmd.InOrStdin()) {
				return usageErrorf("delete-queue asks for the queue's name on a terminal; give --yes to delete %s without asking", q.Name())
			}
			fmt.Fprintf(stderr, "type the queue's name to delete it: ")
			line, err := bufio.NewReader(s.cmd.InOrStdin()).ReadString('\n')
			if err != nil && line == "" {
				return fmt.Errorf("queue %s not deleted: %w", q.Name(), errNotConfirmed)
			}
			if strings.TrimRight(line, "\r\n") != q.Name() {
				return fmt.Errorf("queue %s not deleted: the name typed does not match: %w", q.Name(), errNotConfirmed)
			}
		}
		// the deletion runs in steps until done: --timeout bounds each
		// read, not the whole of it
		n, err := q.Admin().DeleteQueue(ctx)
		if err != nil {
			if n > 0 {
				fmt.Fprintf(stderr, "deleted %d keys of %s before the error\n", n, q.Name())
			}
			return s.explain(q, err)
		}
		if s.json {
			return s.printJSON(deleteQueueJSON{Queue: q.Name(), Before: before, Schedules: schedules, DeletedKeys: n})
		}
		fmt.Fprintf(s.out(), "deleted queue %s: %d keys\n", q.Name(), n)
		return nil
	})
}

// describeCounts says what a queue holds, for a person about to delete it.
func describeCounts(st trafikey.Stats, schedules int) string {
	return fmt.Sprintf("%d pending (%d in %d lanes), %d delayed, %d active, %d dead, %d waiting parents, %d retained completed, %d schedules",
		st.Pending, st.LaneWaiting, st.Lanes, st.Delayed, st.Active, st.Dead, st.Waiting, st.Retained, schedules)
}
