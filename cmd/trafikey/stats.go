package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey"
)

func newStatsCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "stats <queue>",
		Short: "Show a queue's counts and lifetime counters",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, closeClient, err := openReadOnly(cmd.Context(), addr, args[0])
			if err != nil {
				return err
			}
			defer closeClient()
			s, err := q.Stats(cmd.Context())
			if errors.Is(err, trafikey.ErrWire) {
				return fmt.Errorf("queue %q on %s: %w (no such queue, or another wire version)", args[0], addr, err)
			}
			if err != nil {
				return err
			}
			paused := "no"
			if s.Paused {
				paused = "yes"
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "queue\t%s (%s executor, %s)\n", q.Name(), q.Executor(), addr)
			fmt.Fprintf(tw, "paused\t%s\n", paused)
			fmt.Fprintf(tw, "\t\n")
			fmt.Fprintf(tw, "pending\t%d\n", s.Pending)
			fmt.Fprintf(tw, "delayed\t%d\n", s.Delayed)
			fmt.Fprintf(tw, "active\t%d\n", s.Active)
			fmt.Fprintf(tw, "dead\t%d\n", s.Dead)
			fmt.Fprintf(tw, "\t\n")
			fmt.Fprintf(tw, "added\t%d\n", s.TotalAdded)
			fmt.Fprintf(tw, "completed\t%d\n", s.TotalCompleted)
			fmt.Fprintf(tw, "failed attempts\t%d (retried %d)\n", s.TotalFailed, s.TotalRetried)
			fmt.Fprintf(tw, "dead-lettered\t%d\n", s.TotalDead)
			fmt.Fprintf(tw, "leases recovered\t%d\n", s.TotalRecovered)
			fmt.Fprintf(tw, "removed\t%d\n", s.TotalRemoved)
			fmt.Fprintf(tw, "requeued\t%d\n", s.TotalRequeued)
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&addr, "addr", defaultAddr, "server address host:port")
	return cmd
}
