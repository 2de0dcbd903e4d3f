package admin

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// The slot of a tag is the cluster's: CLUSTER KEYSLOT of a key with that
// hash tag says the same.
func TestHashSlot(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{Cluster: true})
	for _, tag := range []string{"mail", "mail~1", "mail~2~7", "x", "team/a", "ünïcode"} {
		want := valkeytest.Do(t, s, "CLUSTER", "KEYSLOT", "emq:{"+tag+"}:version")
		require.EqualValues(t, want, HashSlot(tag), tag)
	}
}

// Discovery lists a partitioned queue once, under its name, with its
// partitions' tags; a name that only looks like a tag is a queue of its
// own. On a cluster the partitions are on several primaries, found by one
// SCAN each.
func TestDiscoverPartitions(t *testing.T) {
	t.Parallel()
	t.Run("standalone", func(t *testing.T) {
		t.Parallel()
		s := valkeytest.Start(t, valkeyserver.Options{})
		testDiscoverPartitions(t, valkeytest.Client(t, s), false)
	})
	t.Run("cluster", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: starts a cluster of three primaries")
		}
		t.Parallel()
		cl := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 3})
		testDiscoverPartitions(t, valkeytest.ClusterClient(t, cl), true)
	})
}

func testDiscoverPartitions(t *testing.T, c valkey.Client, cluster bool) {
	ctx := t.Context()
	open := func(name string, parts int) *trafikey.Queue {
		q, err := trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Partitions: parts})
		require.NoError(t, err)
		return q
	}
	open("mail", 4)
	open("solo", 0)
	open("x~1", 0) // no partition of any queue
	found, err := Discover(ctx, c)
	require.NoError(t, err)
	require.Len(t, found, 3, "%+v", found)
	require.Equal(t, "mail", found[0].Name)
	require.Len(t, found[0].Partitions, 4)
	require.Equal(t, "mail", found[0].Partitions[0])
	for i, tag := range found[0].Partitions[1:] {
		require.Regexp(t, fmt.Sprintf(`^mail~%d(~\d+)?$`, i+1), tag)
		// each partition has its own version key, and its own slot
		n, err := c.Do(ctx, c.B().Exists().Key("emq:{"+tag+"}:version").Build()).AsInt64()
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		require.NotEqual(t, HashSlot("mail"), HashSlot(tag))
	}
	require.Equal(t, Found{Name: "solo"}, found[1])
	require.Equal(t, Found{Name: "x~1"}, found[2])
	names, err := FindQueues(ctx, c)
	require.NoError(t, err)
	require.Equal(t, []string{"mail", "solo", "x~1"}, names)

	// Placed on nodes: every primary of the cluster serves a partition.
	slots, err := ReadSlots(ctx, c)
	require.NoError(t, err)
	nodes := map[string]int{}
	for _, tag := range found[0].Partitions {
		nodes[slots.Node(int(HashSlot(tag)))]++
	}
	if cluster {
		require.Len(t, nodes, 3, "%v", nodes)
		require.NotContains(t, nodes, Standalone)
	} else {
		require.Equal(t, map[string]int{Standalone: 4}, nodes)
	}

	// A catalog opens the queue again once it grew, and its handle reads
	// every partition.
	cat := NewCatalog(c)
	qs, _, err := cat.Queues(ctx)
	require.NoError(t, err)
	require.Len(t, qs, 3)
	st, err := qs[0].Stats(ctx)
	require.NoError(t, err)
	require.Len(t, st.Partitions, 4)
	open("mail", 6)
	qs, layouts, err := cat.Queues(ctx)
	require.NoError(t, err)
	require.Len(t, layouts[0].Partitions, 6)
	st, err = qs[0].Stats(ctx)
	require.NoError(t, err)
	require.Len(t, st.Partitions, 6)
	again, err := cat.Queue(ctx, "mail")
	require.NoError(t, err)
	require.Same(t, qs[0], again)

	// Deleted, the queue and its partitions go from the list.
	_, err = qs[0].Admin().DeleteQueue(context.WithoutCancel(ctx))
	require.NoError(t, err)
	names, err = FindQueues(ctx, c)
	require.NoError(t, err)
	require.Equal(t, []string{"solo", "x~1"}, names)
}
