package protocol_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestQueueOfBase(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("n", protocol.MaxQueueName)
	for _, tc := range []struct {
		base string
		name string
		ok   bool
	}{
		{"emq:{orders}:", "orders", true},
		{"emq:{q}:", "q", true},
		{"emq:{" + long + "}:", long, true},
		{"emq:{a:b}:", "a:b", true},
		{"emq:{\x00\xff}:", "\x00\xff", true},
		{"emq:{" + long + "n}:", "", false}, // 129 bytes
		{"emq:{}:", "", false},
		{"emq:{a{b}:", "", false},
		{"emq:{a}b}:", "", false},
		{"emq:{q}", "", false},
		{"emq:q:", "", false},
		{"emq:{q}:pending", "", false},
		{"EMQ:{q}:", "", false},
		{"xemq:{q}:", "", false},
		{"emq:{", "", false},
		{"", "", false},
	} {
		name, ok := protocol.QueueOfBase([]byte(tc.base))
		require.Equal(t, tc.ok, ok, "%q", tc.base)
		require.Equal(t, tc.name, string(name), "%q", tc.base)
		if ok {
			require.Equal(t, tc.base, protocol.Base(string(name)))
			require.True(t, protocol.ValidQueueName(string(name)))
		}
	}
}

func TestValidQueueName(t *testing.T) {
	t.Parallel()
	require.True(t, protocol.ValidQueueName("a"))
	require.True(t, protocol.ValidQueueName(strings.Repeat("x", 128)))
	require.False(t, protocol.ValidQueueName(""))
	require.False(t, protocol.ValidQueueName(strings.Repeat("x", 129)))
	require.False(t, protocol.ValidQueueName("a{"))
	require.False(t, protocol.ValidQueueName("}"))
}

func TestHashTag(t *testing.T) {
	t.Parallel()
	for key, tag := range map[string]string{
		"emq:{orders}:pending":        "orders",
		"emq:{orders}:unique:{other}": "orders",
		"emq:{orders}:job:7:logs":     "orders",
		"plain":                       "plain",
		"a{}b":                        "a{}b", // an empty tag hashes the whole key
		"a{b":                         "a{b",
		"a}b{c}":                      "c",
		"{x}{y}":                      "x",
		"{}{y}":                       "{}{y}",
	} {
		require.Equal(t, tag, string(protocol.HashTag([]byte(key))), "%q", key)
	}
	// every key of a queue, fixed or derived, carries the queue's tag
	k := protocol.KeysOf("q")
	for _, key := range []string{k.Base, k.Version, k.Meta, k.Stats, k.Pending, k.Delayed, k.Active, k.Dead, k.Signal,
		k.Job("1"), k.Logs("1"), k.Unique("{evil}"), k.Unique("}")} {
		require.Equal(t, "q", string(protocol.HashTag([]byte(key))), "%q", key)
	}
}

func TestPendingScore(t *testing.T) {
	t.Parallel()
	// higher priority first, then FIFO by id
	require.Less(t, protocol.PendingScore(1000, protocol.MaxJobID), protocol.PendingScore(999, 1))
	require.Less(t, protocol.PendingScore(5, 1), protocol.PendingScore(5, 2))
	require.Equal(t, int64(1000)<<42+1, protocol.PendingScore(0, 1))
	require.Equal(t, int64(1), protocol.PendingScore(protocol.MaxPriority, 1))
	// every score is an exact double, so a zset stores it unchanged
	for _, prio := range []int64{0, 1, 499, 999, protocol.MaxPriority} {
		for _, id := range []int64{1, 2, 1 << 32, protocol.MaxJobID - 1, protocol.MaxJobID} {
			s := protocol.PendingScore(prio, id)
			require.Equal(t, s, int64(float64(s)), "prio %d id %d", prio, id)
			require.Less(t, s, int64(1001)<<42)
		}
	}
	require.Equal(t, int64(1)<<42-1, int64(protocol.MaxJobID))
}

func TestKeys(t *testing.T) {
	t.Parallel()
	k := protocol.KeysOf("orders")
	require.Equal(t, protocol.Keys{
		Base:    "emq:{orders}:",
		Version: "emq:{orders}:version",
		Meta:    "emq:{orders}:meta",
		Stats:   "emq:{orders}:stats",
		Pending: "emq:{orders}:pending",
		Delayed: "emq:{orders}:delayed",
		Active:  "emq:{orders}:active",
		Dead:    "emq:{orders}:dead",
		Signal:  "emq:{orders}:signal",
	}, k)
	require.Equal(t, "emq:{orders}:job:42", k.Job("42"))
	require.Equal(t, "emq:{orders}:job:42:logs", k.Logs("42"))
	require.Equal(t, "emq:{orders}:unique:u-1", k.Unique("u-1"))
	require.Equal(t, "emq:{orders}:dead", k.Fixed(protocol.SuffixDead))
	require.Equal(t, "emq:{orders}:lane:t-1", k.Lane("t-1"))
	require.Equal(t, "emq:{orders}:turns", k.Fixed(protocol.SuffixTurns))
}

func TestKeyNames(t *testing.T) {
	t.Parallel()
	k := protocol.KeysOf("q")
	require.Equal(t, []string{"emq:{q}:", "emq:{q}:version", "emq:{q}:meta", "emq:{q}:pending", "emq:{q}:active"},
		protocol.Claim.KeyNames(k))
	require.Equal(t, []string{"emq:{q}:", "emq:{q}:version"}, protocol.Inspect.KeyNames(k))
	for _, v := range protocol.All {
		names := v.KeyNames(k)
		require.Len(t, names, v.NumKeys(), v.Name)
		require.Equal(t, k.Base, names[0], v.Name)
		require.Equal(t, k.Version, names[1], "%s: the fence key comes first", v.Name)
	}
}

func TestVerbTable(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, v := range protocol.All {
		require.False(t, seen[v.Name], "verb %s listed twice", v.Name)
		seen[v.Name] = true
		require.Equal(t, "EMQ."+strings.ToUpper(v.Name), v.Command)
		require.Equal(t, v.Name+".lua", v.Script)
		require.Equal(t, v.Mode != protocol.Reads, v.Write, v.Name)
		suffixes := map[string]bool{}
		for _, s := range v.Keys {
			require.False(t, suffixes[s], "%s declares %s twice", v.Name, s)
			suffixes[s] = true
		}
	}
	require.Len(t, protocol.JobCore, 17)
	require.Len(t, protocol.BusVerbs, 3)
	require.Len(t, protocol.EventVerbs, 1)
	require.Len(t, protocol.OpsVerbs, 5)
	require.Len(t, protocol.HandlerVerbs, 2)
	require.Len(t, protocol.ScheduleVerbs, 7)
	require.Len(t, protocol.All, 44)
	for _, read := range []*protocol.Verb{protocol.Stats, protocol.Inspect, protocol.Lane, protocol.Lanes, protocol.Children, protocol.Jobs} {
		require.Equal(t, protocol.Reads, read.Mode, read.Name)
	}
	require.Equal(t, 7, protocol.Add.NumKeys())
	require.Equal(t, protocol.StatsCounters, []string{"added", "completed", "failed", "retried", "dead", "recovered", "removed", "requeued", "trimmed", "cancelled"})
	require.Equal(t, []string{"state", "data", "att", "max", "prio", "bo", "at", "err", "prog", "uniq", "lane",
		"keep", "parent", "onfail", "deps", "cfail", "wait", "res", "kind", "timeout", "headers", "cancelled",
		"sched", "sat"}, protocol.InspectFields)
}

func TestFormatInt(t *testing.T) {
	t.Parallel()
	require.Equal(t, "0", protocol.FormatInt(0))
	require.Equal(t, "4398046511103", protocol.FormatInt(protocol.MaxJobID))
	require.Equal(t, "-9223372036854775808", protocol.FormatInt(-1<<63))
}
