package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
)

// queueRow is one queue of `trafikey queues --json`: its counts, or the
// error its STATS call met.
type queueRow struct {
	admin.QueueView
	Error string `json:"error,omitempty"`
}

func (a *app) newQueuesCmd() *cobra.Command {
	var namesOnly bool
	cmd := &cobra.Command{
		Use:   "queues",
		Short: "List the queues on a server or cluster, with their counts",
		Long: `queues finds every queue on the server, or on every primary of a cluster, by
SCAN for keys emq:{<name>}:version (stamped by a queue's first Open), and
prints them in name order with their counts from STATS: pending (in lanes
too), delayed, active, dead, waiting (flows' parents waiting for their
children), retained (completed jobs the retention policy keeps), lanes with
jobs, paused. A partitioned queue is listed once, with its partitions'
counts summed and how many partitions it has (its partitions hash,
emq:{<name>}:partitions, is found by the same SCAN). SCAN walks the
keyspace in small steps, so it never blocks the server for long, however many
keys it holds.`,
		Args: args(cobra.NoArgs),
	}
	cmd.Flags().BoolVar(&namesOnly, "names", false, "print only the names, one a line")
	return a.connected(cmd, true, func(ctx context.Context, s *session, _ []string) error {
		ctx, cancel := s.bound(ctx)
		defer cancel()
		client, err := s.client()
		if err != nil {
			return err
		}
		names, err := admin.FindQueues(ctx, client)
		if err != nil {
			return err
		}
		if namesOnly && !s.json {
			for _, n := range names {
				fmt.Fprintln(s.out(), n)
			}
			return nil
		}
		rows := make([]queueRow, len(names))
		var wg sync.WaitGroup
		slots := make(chan struct{}, queuesParallel)
		for i, n := range names {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				rows[i] = s.queueRow(ctx, n)
			})
		}
		wg.Wait()
		if s.json {
			if namesOnly {
				return s.printJSON(names)
			}
			return s.printJSON(rows)
		}
		tw := tabwriter.NewWriter(s.out(), 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "queue\tpartitions\tpending\tdelayed\tactive\tdead\twaiting\tretained\tlanes\tpaused\t\n")
		for _, r := range rows {
			if r.Error != "" {
				fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\t\t\t\n", shown([]byte(r.Name)), r.Error)
				continue
			}
			parts := "-"
			if r.Partitions > 0 {
				parts = strconv.Itoa(r.Partitions)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", shown([]byte(r.Name)), parts, r.Pending, r.Delayed, r.Active, r.Dead, r.Waiting, r.Retained, r.Lanes, yesNo(r.Paused))
		}
		return tw.Flush()
	})
}

// queuesParallel is how many queues' STATS `queues` reads at once.
const queuesParallel = 16

// queueRow reads one queue's counts, or the error that met.
func (s *session) queueRow(ctx context.Context, name string) queueRow {
	row := queueRow{QueueView: admin.QueueView{Name: name}}
	q, err := s.queue(ctx, name)
	if err == nil {
		var stats trafikey.Stats
		if stats, err = q.Stats(ctx); err == nil {
			row.QueueView = admin.ViewOfStats(name, stats)
			// The breakdown is stats's; the list keeps the count.
			row.PartitionList = nil
		}
		err = s.explain(q, err)
	}
	if err != nil {
		row.Error = err.Error()
	}
	return row
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
