package main

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/parttest"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

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
		parts := parttest.Fill(t, c, "mail", 6)
		for i := range parts {
			parts[i].Node = parttest.OwnerOf(t, cl, parts[i].Tag)
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
			parts := parttest.Fill(t, c, "mail", 4)
			for i := range parts {
				parts[i].Node = "standalone"
			}
			testStatsPartitions(t, parts, "--addr", s.Addr())
			out, errOut, code := run(t, "stats", "mail", "--addr", s.Addr())
			require.Equal(t, exitOK, code, errOut)
			require.Contains(t, out, "("+string(exec)+" executor, ")
		})
	}
}

func testStatsPartitions(t *testing.T, parts []parttest.Counts, conn ...string) {
	var sum parttest.Counts
	for _, p := range parts {
		sum.Pending += p.Pending
		sum.Delayed += p.Delayed
		sum.Active += p.Active
		sum.Dead += p.Dead
		sum.Completed += p.Completed
	}
	shards := parttest.ShardSums(parts)

	out, errOut, code := run(t, append([]string{"stats", "mail"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, fmt.Sprintf(`(?m)^partitions\s+%d on %d nodes?$`, len(parts), len(shards)), out)
	require.Regexp(t, fmt.Sprintf(`(?m)^pending\s+%d$`, sum.Pending), out)
	require.Regexp(t, fmt.Sprintf(`(?m)^dead\s+%d$`, sum.Dead), out)
	require.Regexp(t, fmt.Sprintf(`(?m)^completed\s+%d$`, sum.Completed), out)
	require.Regexp(t, `(?m)^#\s+tag\s+slot\s+node\s+pending\s+delayed\s+active\s+dead\s+completed\s+paused\s*$`, out)
	for i, p := range parts {
		require.Regexp(t, fmt.Sprintf(`(?m)^%d\s+%s\s+\d+\s+%s\s+%d\s+%d\s+%d\s+%d\s+%d\s+no\s*$`, i, regexp.QuoteMeta(p.Tag), regexp.QuoteMeta(p.Node),
			p.Pending, p.Delayed, p.Active, p.Dead, p.Completed), out)
	}
	require.Regexp(t, `(?m)^node\s+partitions\s+pending\s+delayed\s+active\s+dead\s+completed\s*$`, out)
	for _, s := range shards {
		require.Regexp(t, fmt.Sprintf(`(?m)^%s\s+%d\s+%d\s+%d\s+%d\s+%d\s+%d\s*$`, regexp.QuoteMeta(s.Node), len(s.Tag),
			s.Pending, s.Delayed, s.Active, s.Dead, s.Completed), out)
	}

	out, errOut, code = run(t, append([]string{"stats", "mail", "--json"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	st := decode[map[string]any](t, out)
	require.EqualValues(t, sum.Pending, st["pending"])
	require.EqualValues(t, len(parts), st["partitions"])
	list := st["partition_list"].([]any)
	require.Len(t, list, len(parts))
	for i, p := range parts {
		row := list[i].(map[string]any)
		require.Equal(t, map[string]any{
			"index": float64(i), "tag": p.Tag, "slot": row["slot"], "node": p.Node, "paused": false,
			"pending": float64(p.Pending), "delayed": float64(p.Delayed), "active": float64(p.Active), "dead": float64(p.Dead),
			"waiting": float64(0), "completed": float64(p.Completed), "retained": float64(0),
		}, row)
	}
	byNode := st["shards"].([]any)
	require.Len(t, byNode, len(shards))
	for _, x := range byNode {
		row := x.(map[string]any)
		s := shards[row["node"].(string)]
		require.Equal(t, map[string]any{
			"node": s.Node, "partitions": float64(len(s.Tag)),
			"pending": float64(s.Pending), "delayed": float64(s.Delayed), "active": float64(s.Active), "dead": float64(s.Dead),
			"waiting": float64(0), "completed": float64(s.Completed), "retained": float64(0),
		}, row)
	}

	// The dead jobs, listed through every partition; one of a partition
	// above 0 (its id "<id>~<i>") inspected by its id.
	out, errOut, code = run(t, append([]string{"jobs", "mail", "--state", "dead", "--json"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	dead := decode[map[string]any](t, out)
	require.Len(t, dead["rows"], sum.Dead)
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
		len(parts), sum.Pending, sum.Delayed, sum.Active, sum.Dead), out)
	out, errOut, code = run(t, append([]string{"queues", "--names"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "mail\n", out)
	out, errOut, code = run(t, append([]string{"queues", "--json"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	rows := decode[[]map[string]any](t, out)
	require.Len(t, rows, 1)
	require.EqualValues(t, len(parts), rows[0]["partitions"])
	require.EqualValues(t, sum.Dead, rows[0]["dead"])
	require.NotContains(t, rows[0], "partition_list")
}
