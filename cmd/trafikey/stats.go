package main

import (
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey"
)

func newStatsCmd() *cobra.Command {
	var addr string
	var maxLanes int
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
			if s.RateLimit > 0 {
				fmt.Fprintf(tw, "rate limit\t%d per %v\n", s.RateLimit, s.RateWindow)
			}
			fmt.Fprintf(tw, "\t\n")
			fmt.Fprintf(tw, "pending\t%d (in lanes %d)\n", s.Pending, s.LaneWaiting)
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
			if err := tw.Flush(); err != nil || s.Lanes == 0 {
				return err
			}
			return printLanes(cmd, q, s.Lanes, maxLanes)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", defaultAddr, "server address host:port")
	cmd.Flags().IntVar(&maxLanes, "lanes", 20, "show at most this many lanes (0: all)")
	return cmd
}

// printLanes lists the queue's lanes with jobs, in name order, up to max.
func printLanes(cmd *cobra.Command, q *trafikey.Queue, total int64, max int) error {
	fmt.Fprintf(cmd.OutOrStdout(), "\nlanes with jobs: %d\n", total)
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "lane\twaiting\tactive\tcap\tpaused\n")
	shown := 0
	for l, err := range q.Lanes(cmd.Context()) {
		if err != nil {
			return err
		}
		if max > 0 && shown == max {
			fmt.Fprintf(tw, "… %d more\t\t\t\t\n", total-int64(shown))
			break
		}
		limit, paused := "-", "no"
		if l.Cap > 0 {
			limit = strconv.Itoa(l.Cap)
		}
		if l.Paused {
			paused = "yes"
		}
		fmt.Fprintf(tw, "%q\t%d\t%d\t%s\t%s\n", l.Name, l.Waiting, l.Active, limit, paused)
		shown++
	}
	return tw.Flush()
}
