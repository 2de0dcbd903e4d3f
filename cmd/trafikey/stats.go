package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
)

// statsJSON is `trafikey stats --json`: the counts and, when the queue has
// lanes, the first of them.
type statsJSON struct {
	admin.QueueView
	Executor  string           `json:"executor"`
	LaneList  []admin.LaneView `json:"lane_list,omitempty"`
	LanesMore bool             `json:"lane_list_cut,omitempty"`
}

func (a *app) newStatsCmd() *cobra.Command {
	var maxLanes int
	cmd := &cobra.Command{
		Use:   "stats <queue>",
		Short: "Show a queue's counts and lifetime counters",
		Long: `stats reads a queue's counts and counters with one STATS call, and lists its
lanes with jobs. It never writes. Pending counts every ready job, those in
lanes too ("in lanes"); waiting parents are flows' parents waiting for their
children; retained completed are the completed jobs the retention policy
keeps.

A partitioned queue's counts are its partitions' summed; a table then
lists each partition (its index, hash tag, cluster slot, the primary
serving that slot or "standalone" outside a cluster, and its counts:
pending, delayed, active, dead, completed ever, paused) and another sums
them by node. The nodes are read with CLUSTER SLOTS.`,
		Args: args(cobra.ExactArgs(1)),
	}
	cmd.Flags().IntVar(&maxLanes, "lanes", 20, "show at most this many lanes (0: all)")
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		ctx, cancel := s.bound(ctx)
		defer cancel()
		q, err := s.queue(ctx, args[0])
		if err != nil {
			return err
		}
		st, err := q.Stats(ctx)
		if err != nil {
			return s.explain(q, err)
		}
		var lanes []admin.LaneView
		more := false
		if st.Lanes > 0 {
			if lanes, more, err = admin.ReadLanes(ctx, q, maxLanes); err != nil {
				return err
			}
		}
		view := admin.ViewOfStats(q.Name(), st)
		if view.Partitions > 0 {
			client, err := s.client()
			if err != nil {
				return err
			}
			slots, err := admin.ReadSlots(ctx, client)
			if err != nil {
				return err
			}
			slots.Place(&view)
		}
		if s.json {
			return s.printJSON(statsJSON{QueueView: view, Executor: string(q.Executor()), LaneList: lanes, LanesMore: more})
		}
		tw := tabwriter.NewWriter(s.out(), 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "queue\t%s (%s executor, %s)\n", q.Name(), q.Executor(), s.conn.where())
		if view.Partitions > 0 {
			nodes := "nodes"
			if len(view.Shards) == 1 {
				nodes = "node"
			}
			fmt.Fprintf(tw, "partitions\t%d on %d %s\n", view.Partitions, len(view.Shards), nodes)
		}
		fmt.Fprintf(tw, "paused\t%s\n", yesNo(st.Paused))
		if st.RateLimit > 0 {
			fmt.Fprintf(tw, "rate limit\t%d per %v\n", st.RateLimit, st.RateWindow)
		}
		fmt.Fprintf(tw, "\t\n")
		fmt.Fprintf(tw, "pending\t%d\n", st.Pending)
		if st.Lanes > 0 {
			fmt.Fprintf(tw, "  in lanes\t%d\n", st.LaneWaiting)
		}
		fmt.Fprintf(tw, "delayed\t%d\n", st.Delayed)
		fmt.Fprintf(tw, "active\t%d\n", st.Active)
		fmt.Fprintf(tw, "dead\t%d\n", st.Dead)
		fmt.Fprintf(tw, "waiting parents\t%d\n", st.Waiting)
		fmt.Fprintf(tw, "retained completed\t%d\n", st.Retained)
		fmt.Fprintf(tw, "\t\n")
		fmt.Fprintf(tw, "added\t%d\n", st.TotalAdded)
		fmt.Fprintf(tw, "completed\t%d\n", st.TotalCompleted)
		fmt.Fprintf(tw, "failed attempts\t%d (retried %d)\n", st.TotalFailed, st.TotalRetried)
		fmt.Fprintf(tw, "dead-lettered\t%d\n", st.TotalDead)
		fmt.Fprintf(tw, "leases recovered\t%d\n", st.TotalRecovered)
		fmt.Fprintf(tw, "removed\t%d\n", st.TotalRemoved)
		fmt.Fprintf(tw, "requeued\t%d\n", st.TotalRequeued)
		fmt.Fprintf(tw, "cancelled\t%d\n", st.TotalCancelled)
		fmt.Fprintf(tw, "trimmed\t%d\n", st.TotalTrimmed)
		if err := tw.Flush(); err != nil {
			return err
		}
		if view.Partitions > 0 {
			if err := printPartitions(s, view); err != nil {
				return err
			}
		}
		if st.Lanes == 0 {
			return nil
		}
		fmt.Fprintf(s.out(), "\nlanes with jobs: %d\n", st.Lanes)
		return printLanes(s, lanes, more, st.Lanes)
	})
}

// printPartitions prints a partitioned queue's counts by partition, and
// by the node serving them.
func printPartitions(s *session, v admin.QueueView) error {
	fmt.Fprintf(s.out(), "\npartitions\n")
	tw := tabwriter.NewWriter(s.out(), 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "#\ttag\tslot\tnode\tpending\tdelayed\tactive\tdead\tcompleted\tpaused\t\n")
	for _, p := range v.PartitionList {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", p.Index, shown([]byte(p.Tag)), p.Slot, nodeName(p.Node),
			p.Pending, p.Delayed, p.Active, p.Dead, p.Completed, yesNo(p.Paused))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(s.out(), "\nby node\n")
	tw = tabwriter.NewWriter(s.out(), 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "node\tpartitions\tpending\tdelayed\tactive\tdead\tcompleted\t\n")
	for _, sh := range v.Shards {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", nodeName(sh.Node), sh.Partitions, sh.Pending, sh.Delayed, sh.Active, sh.Dead, sh.Completed)
	}
	return tw.Flush()
}

// nodeName is a partition's node as a table shows it.
func nodeName(node string) string {
	if node == "" {
		return "(no node)"
	}
	return node
}

func (a *app) newLanesCmd() *cobra.Command {
	var max int
	cmd := &cobra.Command{
		Use:   "lanes <queue>",
		Short: "List a queue's lanes with jobs: waiting, active, cap, paused",
		Long:  "lanes lists the lanes that have waiting or active jobs, in byte order of their names, read a page at a time.",
		Args:  args(cobra.ExactArgs(1)),
	}
	cmd.Flags().IntVar(&max, "max", 0, "list at most this many lanes (0: all)")
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		ctx, cancel := s.bound(ctx)
		defer cancel()
		q, err := s.queue(ctx, args[0])
		if err != nil {
			return err
		}
		lanes, more, err := admin.ReadLanes(ctx, q, max)
		if err != nil {
			return s.explain(q, err)
		}
		if s.json {
			return s.printJSON(lanes)
		}
		return printLanes(s, lanes, more, -1)
	})
}

// printLanes prints lanes as a table; more says lanes were left out (total
// of them, when known, else -1).
func printLanes(s *session, lanes []admin.LaneView, more bool, total int) error {
	tw := tabwriter.NewWriter(s.out(), 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "lane\twaiting\tactive\tcap\tpaused\n")
	for _, l := range lanes {
		limit := "-"
		if l.Cap > 0 {
			limit = strconv.Itoa(l.Cap)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", shown([]byte(l.Name)), l.Waiting, l.Active, limit, yesNo(l.Paused))
	}
	if more {
		if total >= 0 {
			fmt.Fprintf(tw, "… %d more\t\t\t\t\n", total-len(lanes))
		} else {
			fmt.Fprintf(tw, "… more\t\t\t\t\n")
		}
	}
	return tw.Flush()
}
