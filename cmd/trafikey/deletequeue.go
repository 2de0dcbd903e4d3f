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
	Queue string `json:"queue"`
	// Before and Schedules are absent for a queue of another wire
	// version, whose counts cannot be read.
	Before      *admin.QueueView `json:"before,omitempty"`
	Schedules   *int             `json:"schedules,omitempty"`
	DeletedKeys int              `json:"deleted_keys"`
}

func (a *app) newDeleteQueueCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete-queue <queue>",
		Short: "Delete a queue and everything it holds",
		Long: `delete-queue deletes a queue with its jobs in every state, their logs and
results, its lanes, schedules, settings, counters and events (DeleteQueue).
It first prints the queue's counts (not readable on a queue written by
another wire version, which it deletes all the same), then asks for the queue's name to be
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
		stderr := s.cmd.ErrOrStderr()
		out := deleteQueueJSON{Queue: q.Name()}
		st, schedules, err := readQueueContents(readCtx, q)
		cancel()
		switch {
		case errors.Is(err, trafikey.ErrWire):
			// a queue of another version of trafikey: its counts cannot
			// be read, and deleting it is how to be rid of it
			fmt.Fprintf(stderr, "queue %s on %s was written by another wire version: its counts cannot be read (%v)\n", q.Name(), s.conn.where(), err)
		case err != nil:
			return s.explain(q, err)
		default:
			before := admin.ViewOfStats(q.Name(), st)
			out.Before, out.Schedules = &before, &schedules
			fmt.Fprintf(stderr, "queue %s on %s holds %s\n", q.Name(), s.conn.where(), describeCounts(st, schedules))
			if st.Active > 0 {
				fmt.Fprintf(stderr, "%d jobs are active: their workers will be refused\n", st.Active)
			}
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
			out.DeletedKeys = n
			return s.printJSON(out)
		}
		fmt.Fprintf(s.out(), "deleted queue %s: %d keys\n", q.Name(), n)
		return nil
	})
}

// readQueueContents reads the queue's counts and how many schedules it
// has.
func readQueueContents(ctx context.Context, q *trafikey.Queue) (trafikey.Stats, int, error) {
	st, err := q.Stats(ctx)
	if err != nil {
		return st, 0, err
	}
	schedules := 0
	for _, err := range q.Schedules().List(ctx) {
		if err != nil {
			return st, 0, err
		}
		schedules++
	}
	return st, schedules, nil
}

// describeCounts says what a queue holds, for a person about to delete it.
func describeCounts(st trafikey.Stats, schedules int) string {
	return fmt.Sprintf("%d pending (%d in %d lanes), %d delayed, %d active, %d dead, %d waiting parents, %d retained completed, %d schedules",
		st.Pending, st.LaneWaiting, st.Lanes, st.Delayed, st.Active, st.Dead, st.Waiting, st.Retained, schedules)
}
