// Package parttest puts partitioned queues with known counts in a server,
// for the tests of the CLI and the dashboard, which show a partitioned
// queue's counts by partition and by node.
package parttest

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// Counts are the jobs a test put in one partition (Tag), and the primary
// that holds it (Node, once known); in ShardSums' sums, Tag holds an "x"
// per partition.
type Counts struct {
	Tag, Node                                 string
	Pending, Delayed, Active, Dead, Completed int
}

// Fill makes queue name with n partitions and puts jobs in each
// partition through a handle on that partition alone, so that every
// partition holds counts of its own: partition i has i+1 pending, i%2
// delayed, 1 active when i%3 == 1, 1 dead when i%3 == 0, and i completed.
// Partition 0's jobs are put in while the queue is not partitioned yet
// (its keys are the queue's own, which growing keeps); the others' through
// a handle on their tag.
func Fill(t testing.TB, c valkey.Client, name string, n int) []Counts {
	t.Helper()
	ctx := t.Context()
	out := make([]Counts, n)
	fill := func(i int, p *trafikey.Queue) {
		want := Counts{Tag: p.Name(), Pending: i + 1, Delayed: i % 2, Completed: i}
		claimOne := func() *trafikey.Job {
			_, err := p.Add(ctx, []byte("x"), &trafikey.JobOptions{MaxAttempts: 1})
			require.NoError(t, err)
			jobs, err := p.Claim(ctx, time.Minute, 1)
			require.NoError(t, err)
			require.Len(t, jobs, 1)
			return jobs[0]
		}
		for range want.Completed {
			require.NoError(t, claimOne().Complete(ctx))
		}
		if i%3 == 0 {
			want.Dead = 1
			_, err := claimOne().Fail(ctx, errors.New("boom"), true)
			require.NoError(t, err)
		}
		if i%3 == 1 {
			want.Active = 1
			claimOne()
		}
		for range want.Pending {
			_, err := p.Add(ctx, []byte("x"), nil)
			require.NoError(t, err)
		}
		for range want.Delayed {
			_, err := p.Add(ctx, []byte("x"), &trafikey.JobOptions{Delay: time.Hour})
			require.NoError(t, err)
		}
		out[i] = want
	}
	first, err := trafikey.Open(ctx, c, name, nil)
	require.NoError(t, err)
	fill(0, first)
	_, err = trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Partitions: n})
	require.NoError(t, err)
	tags, err := c.Do(ctx, c.B().Hgetall().Key("emq:{"+name+"}:partitions").Build()).AsStrMap()
	require.NoError(t, err)
	require.Equal(t, name, tags["0"])
	for i := 1; i < n; i++ {
		p, err := trafikey.Open(ctx, c, tags[strconv.Itoa(i)], nil)
		require.NoError(t, err)
		fill(i, p)
	}
	return out
}

// OwnerOf finds the primary holding tag's keys by asking each primary for
// its version key: the others answer MOVED.
func OwnerOf(t testing.TB, cl *valkeyserver.Cluster, tag string) string {
	t.Helper()
	owner := ""
	for _, p := range cl.Primaries() {
		if n, ok := valkeytest.Reply(t, p, "EXISTS", "emq:{"+tag+"}:version").(int64); ok && n == 1 {
			require.Empty(t, owner, "two primaries hold %s", tag)
			owner = p.Addr()
		}
	}
	require.NotEmpty(t, owner, "no primary holds %s", tag)
	return owner
}

// ShardSums sums parts by node.
func ShardSums(parts []Counts) map[string]Counts {
	out := map[string]Counts{}
	for _, p := range parts {
		s := out[p.Node]
		s.Node = p.Node
		s.Tag += "x" // counts the partitions
		s.Pending += p.Pending
		s.Delayed += p.Delayed
		s.Active += p.Active
		s.Dead += p.Dead
		s.Completed += p.Completed
		out[p.Node] = s
	}
	return out
}
