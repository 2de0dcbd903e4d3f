package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// partCounts are the jobs a test put in one partition.
type partCounts struct {
	tag                                       string
	node                                      string
	pending, delayed, active, dead, completed int
}

// fillPartitions makes queue name with n partitions and puts jobs in each
// partition through a handle on that partition alone, so that every
// partition holds counts of its own: partition i has i+1 pending, i%2
// delayed, 1 active when i%3 == 1, 1 dead when i%3 == 0, and i completed.
// Partition 0's jobs are put in while the queue is not partitioned yet
// (its keys are the queue's own, which growing keeps); the others' through
// a handle on their tag.
func fillPartitions(t *testing.T, c valkey.Client, name string, n int) []partCounts {
	t.Helper()
	ctx := t.Context()
	out := make([]partCounts, n)
	fill := func(i int, p *trafikey.Queue) {
		want := partCounts{tag: p.Name(), pending: i + 1, delayed: i % 2, completed: i}
		claimOne := func() *trafikey.Job {
			_, err := p.Add(ctx, []byte("x"), &trafikey.JobOptions{MaxAttempts: 1})
			require.NoError(t, err)
			jobs, err := p.Claim(ctx, time.Minute, 1)
			require.NoError(t, err)
			require.Len(t, jobs, 1)
			return jobs[0]
		}
		for range want.completed {
			require.NoError(t, claimOne().Complete(ctx))
		}
		if i%3 == 0 {
			want.dead = 1
			_, err := claimOne().Fail(ctx, errors.New("boom"), true)
			require.NoError(t, err)
		}
		if i%3 == 1 {
			want.active = 1
			claimOne()
		}
		for range want.pending {
			_, err := p.Add(ctx, []byte("x"), nil)
			require.NoError(t, err)
		}
		for range want.delayed {
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

// ownerOf finds the primary holding tag's keys by asking each primary for
// its version key: the others answer MOVED.
func ownerOf(t *testing.T, cl *valkeyserver.Cluster, tag string) string {
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

// shardSums sums parts by node.
func shardSums(parts []partCounts) map[string]partCounts {
	out := map[string]partCounts{}
	for _, p := range parts {
		s := out[p.node]
		s.node = p.node
		s.tag += "x" // counts the partitions
		s.pending += p.pending
		s.delayed += p.delayed
		s.active += p.active
		s.dead += p.dead
		s.completed += p.completed
		out[p.node] = s
	}
	return out
}

// stats and queues show a partitioned queue as one, with its counts by
// partition and by the primary serving each: on a cluster of three
// primaries, and on a single server with each executor.
func TestStatsPartitions(t *testing.T) {
	t.Parallel()
	t.Run("cluster", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: starts a cluster of three primaries")
		}
		t.Parallel()
		cl := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 3})
		c := valkeytest.ClusterClient(t, cl)
		parts := fillPartitions(t, c, "mail", 6)
		for i := range parts {
			parts[i].node = ownerOf(t, cl, parts[i].tag)
		}
		testStatsPartitions(t, parts, "--cluster", cl.Addrs()[0])
	})
	for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
		t.Run("standalone/"+string(exec), func(t *testing.T) {
			t.Parallel()
			var o valkeyserver.Options
			if exec == trafikey.ExecutorNative {
				o.Module = valkeytest.ModulePath(t)
			}
			s := valkeytest.Start(t, o)
			c := valkeytest.Client(t, s)
			parts := fillPartitions(t, c, "mail", 4)
			for i := range parts {
				parts[i].node = "standalone"
			}
			testStatsPartitions(t, parts, "--addr", s.Addr())
			out, errOut, code := run(t, "stats", "mail", "--addr", s.Addr())
			require.Equal(t, exitOK, code, errOut)
			require.Contains(t, out, "("+string(exec)+" executor, ")
		})
	}
}

func testStatsPartitions(t *testing.T, parts []partCounts, conn ...string) {
	var sum partCounts
	for _, p := range parts {
		sum.pending += p.pending
		sum.delayed += p.delayed
		sum.active += p.active
		sum.dead += p.dead
		sum.completed += p.completed
	}
	shards := shardSums(parts)

	out, errOut, code := run(t, append([]string{"stats", "mail"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, fmt.Sprintf(`(?m)^partitions\s+%d on %d nodes?$`, len(parts), len(shards)), out)
	require.Regexp(t, fmt.Sprintf(`(?m)^pending\s+%d$`, sum.pending), out)
	require.Regexp(t, fmt.Sprintf(`(?m)^dead\s+%d$`, sum.dead), out)
	require.Regexp(t, fmt.Sprintf(`(?m)^completed\s+%d$`, sum.completed), out)
	require.Regexp(t, `(?m)^#\s+tag\s+slot\s+node\s+pending\s+delayed\s+active\s+dead\s+completed\s+paused\s*$`, out)
	for i, p := range parts {
		require.Regexp(t, fmt.Sprintf(`(?m)^%d\s+%s\s+\d+\s+%s\s+%d\s+%d\s+%d\s+%d\s+%d\s+no\s*$`, i, regexp.QuoteMeta(p.tag), regexp.QuoteMeta(p.node),
			p.pending, p.delayed, p.active, p.dead, p.completed), out)
	}
	require.Regexp(t, `(?m)^node\s+partitions\s+pending\s+delayed\s+active\s+dead\s+completed\s*$`, out)
	for _, s := range shards {
		require.Regexp(t, fmt.Sprintf(`(?m)^%s\s+%d\s+%d\s+%d\s+%d\s+%d\s+%d\s*$`, regexp.QuoteMeta(s.node), len(s.tag),
			s.pending, s.delayed, s.active, s.dead, s.completed), out)
	}

	out, errOut, code = run(t, append([]string{"stats", "mail", "--json"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	st := decode[map[string]any](t, out)
	require.EqualValues(t, sum.pending, st["pending"])
	require.EqualValues(t, len(parts), st["partitions"])
	list := st["partition_list"].([]any)
	require.Len(t, list, len(parts))
	for i, p := range parts {
		row := list[i].(map[string]any)
		require.Equal(t, map[string]any{
			"index": float64(i), "tag": p.tag, "slot": row["slot"], "node": p.node, "paused": false,
			"pending": float64(p.pending), "delayed": float64(p.delayed), "active": float64(p.active), "dead": float64(p.dead),
			"waiting": float64(0), "completed": float64(p.completed), "retained": float64(0),
		}, row)
	}
	byNode := st["shards"].([]any)
	require.Len(t, byNode, len(shards))
	for _, x := range byNode {
		row := x.(map[string]any)
		s := shards[row["node"].(string)]
		require.Equal(t, map[string]any{
			"node": s.node, "partitions": float64(len(s.tag)),
			"pending": float64(s.pending), "delayed": float64(s.delayed), "active": float64(s.active), "dead": float64(s.dead),
			"waiting": float64(0), "completed": float64(s.completed), "retained": float64(0),
		}, row)
	}

	// The dead jobs, listed through every partition; one of a partition
	// above 0 (its id "<id>~<i>") inspected by its id.
	out, errOut, code = run(t, append([]string{"jobs", "mail", "--state", "dead", "--json"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	dead := decode[map[string]any](t, out)
	require.Len(t, dead["rows"], sum.dead)
	suffixed := ""
	for _, r := range dead["rows"].([]any) {
		if id := r.(map[string]any)["id"].(string); regexp.MustCompile(`^\d+~\d+$`).MatchString(id) {
			suffixed = id
		}
	}
	require.NotEmpty(t, suffixed, "a dead job of a partition above 0: %s", out)
	out, errOut, code = run(t, append([]string{"inspect", "mail", suffixed}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, `state\s+dead`, out)
	require.Contains(t, out, "boom")

	// queues lists the queue once, its partitions' counts summed.
	out, errOut, code = run(t, append([]string{"queues"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, fmt.Sprintf(`(?m)\Aqueue\s+partitions\s+pending.*\nmail\s+%d\s+%d\s+%d\s+%d\s+%d\s+0\s+0\s+0\s+no\s*\n\z`,
		len(parts), sum.pending, sum.delayed, sum.active, sum.dead), out)
	out, errOut, code = run(t, append([]string{"queues", "--names"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "mail\n", out)
	out, errOut, code = run(t, append([]string{"queues", "--json"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	rows := decode[[]map[string]any](t, out)
	require.Len(t, rows, 1)
	require.EqualValues(t, len(parts), rows[0]["partitions"])
	require.EqualValues(t, sum.dead, rows[0]["dead"])
	require.NotContains(t, rows[0], "partition_list")
}
