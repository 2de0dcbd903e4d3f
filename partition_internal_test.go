package trafikey

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// partitioned builds the handle of a partitioned queue of n partitions
// without a server: routing and ids need none.
func partitioned(t *testing.T, n, keyed int) *Queue {
	t.Helper()
	tags := []string{"q"}
	for i := 1; i < n; i++ {
		tags = append(tags, (&slotOwners{}).tag("q", i, tags))
	}
	cfg := &QueueOptions{LogCap: 10, partsEvery: noRefresh}
	q := newHandle(nil, "q", "q", cfg)
	q.parts.Store(newPartitions(q, tags, keyed, cfg))
	return q
}

// noRefresh is a producer's refresh period that never passes: the handles
// built without a server read no partitions.
const noRefresh = time.Duration(math.MaxInt64)

func TestPartitionIDs(t *testing.T) {
	q := partitioned(t, 6, 6)
	for _, c := range []struct {
		id   string
		part int
	}{{"12", 0}, {"12~1", 1}, {"7~5", 5}} {
		p, err := q.partOf("inspect", c.id)
		require.NoError(t, err, c.id)
		require.Same(t, q.parts.Load().list()[c.part], p, c.id)
		raw, err := p.rawID("inspect", c.id)
		require.NoError(t, err)
		require.Equal(t, c.id, p.outID(raw), "an id goes out as it came in")
	}
	for _, id := range []string{"12~0", "12~6", "12~03", "12~", "12~-1", "12~x"} {
		_, err := q.partOf("inspect", id)
		require.ErrorIs(t, err, ErrInvalid, id)
	}
	// an id of another partition, or none, is refused by a partition
	for _, id := range []string{"12", "12~2", "0~1", "x~1", "12~1~1"} {
		_, err := q.parts.Load().list()[1].rawID("inspect", id)
		require.ErrorIs(t, err, ErrInvalid, id)
	}
	// an unpartitioned queue's ids are plain
	plain := newHandle(nil, "p", "p", &QueueOptions{LogCap: 10})
	p, err := plain.partOf("inspect", "12~1")
	require.NoError(t, err)
	_, err = p.rawID("inspect", "12~1")
	require.ErrorIs(t, err, ErrInvalid)
}

func TestPartitionRouting(t *testing.T) {
	q := partitioned(t, 6, 4)
	// keys and lanes: always the same partition, among the keyed ones
	seen := map[*Queue]bool{}
	for i := range 200 {
		key := "k" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		p := q.parts.Load().route(&JobOptions{UniqueKey: key})
		require.Same(t, q.parts.Load().route(&JobOptions{Lane: "other"}), q.parts.Load().route(&JobOptions{UniqueKey: key, Lane: "other"}), "the lane decides before the key")
		require.Same(t, p, q.parts.Load().keyedPartition(key))
		require.Less(t, indexOf(q, p), 4, "keyed jobs use the keyed partitions")
		seen[p] = true
	}
	require.Len(t, seen, 4, "keys spread over every keyed partition")
	require.Same(t, q.Lane("tenant").q, q.parts.Load().route(&JobOptions{Lane: "tenant"}), "a lane's handle is its jobs' partition")
	// others: in turn, over every partition
	counts := make([]int, 6)
	for range 600 {
		counts[indexOf(q, q.parts.Load().route(nil))]++
	}
	require.Equal(t, []int{100, 100, 100, 100, 100, 100}, counts)
}

func indexOf(q *Queue, p *Queue) int {
	for i, h := range q.parts.Load().list() {
		if h == p {
			return i
		}
	}
	return -1
}

func TestPartitionPlacement(t *testing.T) {
	// three primaries with the slots split evenly, in order
	o := &slotOwners{owner: make([]int, 16384), primaries: 3}
	for s := range o.owner {
		o.owner[s] = s * 3 / 16384
	}
	tags := []string{"orders"}
	for i := 1; i < 12; i++ {
		tags = append(tags, o.tag("orders", i, tags))
	}
	first := o.owner[hashSlot(tags[0])]
	slots := map[uint16]bool{}
	for i, tag := range tags {
		s := hashSlot(tag)
		require.False(t, slots[s], "partition %d (%s) has a slot of its own", i, tag)
		slots[s] = true
		require.Equal(t, (first+i)%3, o.owner[s], "partition %d (%s) is on the primary whose turn it is", i, tag)
	}
	// placed again from the same tags, the same choice: growth only adds
	require.Equal(t, tags[5], o.tag("orders", 5, tags[:5]))
	// outside a cluster: distinct slots
	var plain []string = []string{"orders"}
	for i := 1; i < 40; i++ {
		plain = append(plain, (&slotOwners{}).tag("orders", i, plain))
	}
	seen := map[uint16]bool{}
	for _, tag := range plain {
		require.False(t, seen[hashSlot(tag)])
		seen[hashSlot(tag)] = true
	}
}

func TestPartitionMarks(t *testing.T) {
	q := partitioned(t, 3, 3)
	a, b := q.parts.Load().list()[1], q.parts.Load().list()[2]
	var m partitionMarks
	require.False(t, m.skip(a))
	m.empty(a)
	require.True(t, m.skip(a), "an empty partition is passed over")
	require.False(t, m.skip(b))
	// idle waits keep it passed over, but for a sweep
	for range partitionSweepEvery - 1 {
		m.woken(time.Hour)
		require.True(t, m.skip(a))
	}
	m.woken(time.Hour)
	require.False(t, m.skip(a), "the sweep tries it again")
	// an announcement has its partition tried again, and only it
	m.empty(a)
	m.empty(b)
	m.readied(a)
	m.woken(time.Hour)
	require.False(t, m.skip(a), "an announced partition is tried again")
	require.True(t, m.skip(b), "the others stay passed over")
	m.empty(a)
	m.readied(b)

	// a failing partition is passed over longer and longer, announced or not
	m.failed(b)
	require.Equal(t, partitionFailedHold, m.backoff[b])
	m.failed(b)
	require.Equal(t, 2*partitionFailedHold, m.backoff[b])
	m.readied(b)
	m.woken(time.Hour)
	require.True(t, m.skip(b))
	for range 20 {
		m.failed(b)
	}
	require.Equal(t, partitionFailedMax, m.backoff[b])
	m.served(b)
	m.failed(b)
	require.Equal(t, partitionFailedHold, m.backoff[b], "a claim that went through starts the backoff over")
}

func TestExpandParts(t *testing.T) {
	q6 := partitioned(t, 6, 6)
	q4 := partitioned(t, 4, 4)
	plain := newHandle(nil, "p", "p", &QueueOptions{LogCap: 10})
	out := expandParts([]QueueWeight{{q6, 2}, {plain, 1}, {q4, 3}})
	require.Len(t, out, 11)
	share := map[*Queue]int{}
	for _, qw := range out {
		share[qw.Queue.logical()] += qw.Weight
	}
	// each queue keeps its share: 2 : 1 : 3, scaled by lcm(6, 4) = 12
	require.Equal(t, map[*Queue]int{q6: 24, plain: 12, q4: 36}, share)
	require.Equal(t, []QueueWeight{{plain, 1}}, expandParts([]QueueWeight{{plain, 1}}))
}

func TestPartitionCadence(t *testing.T) {
	q := partitioned(t, 2, 2)
	p := q.parts.Load().list()[1]
	var m partitionMarks
	every := 500 * time.Millisecond
	t0 := time.Unix(1000, 0)
	require.True(t, m.due(&m.promote, p, t0), "due before any call")
	// calls that move nothing space out: 1, 2, 4, 4 ticks
	var calls []int
	for tick := range 20 {
		now := t0.Add(time.Duration(tick) * every)
		if m.due(&m.promote, p, now) {
			calls = append(calls, tick)
			m.called(&m.promote, p, 0, now, every)
		}
	}
	require.Equal(t, []int{0, 1, 3, 7, 11, 15, 19}, calls)
	// one that moves jobs brings it back to every tick
	now := t0.Add(20 * every)
	m.called(&m.promote, p, 3, now, every)
	require.True(t, m.due(&m.promote, p, now.Add(every)))
	// as does a retry the worker reported
	m.called(&m.promote, p, 0, now.Add(every), every)
	m.called(&m.promote, p, 0, now.Add(2*every), every)
	require.False(t, m.due(&m.promote, p, now.Add(3*every)))
	m.delayed(p)
	require.True(t, m.due(&m.promote, p, now.Add(3*every)))
	// the trim's cadence is its own
	require.True(t, m.due(&m.trim, p, now))
}
