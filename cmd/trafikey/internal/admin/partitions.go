package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/slots"
)

// A partitioned queue (docs/PARTITIONS.md) is shown as one queue, its
// counts summed, with a breakdown: each partition's counts and the node
// serving its hash slot, and the partitions' counts summed per node.

// Standalone is the node of every partition outside a cluster.
const Standalone = "standalone"

// PartitionView is one partition of a partitioned queue: its place and its
// counts.
type PartitionView struct {
	Index int `json:"index"`
	// Tag is its hash tag: its keys are emq:{<Tag>}:..., in cluster slot
	// Slot, served by the primary at Node (Standalone outside a cluster;
	// "" when no node serves the slot).
	Tag     string `json:"tag"`
	Slot    int    `json:"slot"`
	Node    string `json:"node"`
	Paused  bool   `json:"paused"`
	Pending int    `json:"pending"`
	Delayed int    `json:"delayed"`
	Active  int    `json:"active"`
	Dead    int    `json:"dead"`
	Waiting int    `json:"waiting"`
	// Completed is its lifetime count of completed jobs; Retained the
	// completed jobs its retention keeps.
	Completed int `json:"completed"`
	Retained  int `json:"retained"`
}

// ShardView sums the partitions of a queue that one node serves.
type ShardView struct {
	Node       string `json:"node"`
	Partitions int    `json:"partitions"`
	Pending    int    `json:"pending"`
	Delayed    int    `json:"delayed"`
	Active     int    `json:"active"`
	Dead       int    `json:"dead"`
	Waiting    int    `json:"waiting"`
	Completed  int    `json:"completed"`
	Retained   int    `json:"retained"`
}

// viewOfPartitions is the breakdown of a partitioned queue's stats, in
// index order, without nodes (see Slots.Place).
func viewOfPartitions(per []trafikey.Stats) []PartitionView {
	out := make([]PartitionView, len(per))
	for i, s := range per {
		out[i] = PartitionView{
			Index: i, Tag: s.Partition, Slot: int(HashSlot(s.Partition)), Paused: s.Paused,
			Pending: s.Pending, Delayed: s.Delayed, Active: s.Active, Dead: s.Dead, Waiting: s.Waiting,
			Completed: s.TotalCompleted, Retained: s.Retained,
		}
	}
	return out
}

// Slots is which node serves each hash slot: the primaries of a cluster,
// as CLUSTER SLOTS lists them, or the one node of a server outside one.
type Slots struct {
	// owner is the address of each slot's primary; nil outside a
	// cluster.
	owner []string
}

// ReadSlots reads which primary serves each slot (CLUSTER SLOTS) on a
// cluster; outside one it reads nothing and every slot is Standalone's.
func ReadSlots(ctx context.Context, client valkey.Client) (*Slots, error) {
	if client.Mode() != valkey.ClientModeCluster {
		return &Slots{}, nil
	}
	owner, err := slots.Primaries(ctx, client)
	if err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS: %w", err)
	}
	return &Slots{owner: owner}, nil
}

// Node is the address of the primary serving slot: Standalone outside a
// cluster, "" for a slot no primary serves.
func (s *Slots) Node(slot int) string {
	if s == nil || s.owner == nil {
		return Standalone
	}
	if slot < 0 || slot >= len(s.owner) {
		return ""
	}
	return s.owner[slot]
}

// Place sets the node of each partition of v, and v's per-node sums (in
// byte order of the nodes). It does nothing to an unpartitioned queue's.
func (s *Slots) Place(v *QueueView) {
	if len(v.PartitionList) == 0 {
		return
	}
	by := map[string]*ShardView{}
	for i := range v.PartitionList {
		p := &v.PartitionList[i]
		p.Node = s.Node(p.Slot)
		sh := by[p.Node]
		if sh == nil {
			sh = &ShardView{Node: p.Node}
			by[p.Node] = sh
		}
		sh.Partitions++
		sh.Pending += p.Pending
		sh.Delayed += p.Delayed
		sh.Active += p.Active
		sh.Dead += p.Dead
		sh.Waiting += p.Waiting
		sh.Completed += p.Completed
		sh.Retained += p.Retained
	}
	v.Shards = make([]ShardView, 0, len(by))
	for _, sh := range by {
		v.Shards = append(v.Shards, *sh)
	}
	slices.SortFunc(v.Shards, func(a, b ShardView) int { return strings.Compare(a.Node, b.Node) })
}

// HashSlot is the cluster hash slot of a queue's keys, whose hash tag is
// tag.
func HashSlot(tag string) uint16 { return slots.Of(tag) }
