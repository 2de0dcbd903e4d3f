package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func (a *app) newWorkersCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workers <queue>",
		Short: "List the workers running on a queue: host, pid, queues, jobs in hand, last beat",
		Long: `workers lists the worker processes running on a queue, as each registers
itself every 5 s (and soon after its jobs in hand change): its id (host:pid:random), the queues it runs, its
concurrency and the jobs its handlers run now, its counters since it started,
and when it last registered. A worker that stops is gone at once; one that
dies, within 15 s.`,
		Args: args(cobra.ExactArgs(1)),
	}
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		ctx, cancel := s.bound(ctx)
		defer cancel()
		q, err := s.queue(ctx, args[0])
		if err != nil {
			return err
		}
		workers, err := q.Admin().Workers(ctx)
		if err != nil {
			return s.explain(q, err)
		}
		if s.json {
			if workers == nil {
				return s.printJSON([]any{})
			}
			return s.printJSON(workers)
		}
		if len(workers) == 0 {
			fmt.Fprintf(s.out(), "no worker runs on %s\n", q.Name())
			return nil
		}
		tw := tabwriter.NewWriter(s.out(), 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "worker\tqueues\trunning\tprocessed\tfailed\tup\tbeat\tjobs\n")
		for _, w := range workers {
			jobs := strings.Join(w.Jobs, ",")
			if len(w.Jobs) < w.Running {
				jobs += ",…"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%d\t%s\t%s ago\t%s\n", shown([]byte(w.ID)), shown([]byte(strings.Join(w.Queues, ","))),
				w.Running, w.Concurrency, w.Processed, w.Failed,
				time.Since(w.Started).Truncate(time.Second), time.Since(w.Beat).Truncate(100*time.Millisecond), jobs)
		}
		return tw.Flush()
	})
}
