package conformance

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testAdd: EMQ.ADD writes rows, their places in pending or delayed, the
// sequence and the counter.
func testAdd(t *testing.T, env Env) {
	scenario(t, env, "one pending job", func(t *testing.T, q *queue) {
		q.install()
		t0 := q.now()
		require.Equal(t, Bulks("1"), q.call(protocol.Add, "1", "0", "payload", "7", "0", "5", "exponential", "250", "", "0"))
		t1 := q.now()
		row := q.hgetall(q.k.Job("1"))
		require.Len(t, row, 12, "no state (pending, its default), uniq, err or prog")
		require.Equal(t, []string{"data", "payload", "att", "0", "max", "5", "prio", "7",
			"bo", "exponential:250", "at"}, row[:11], "the fields in HSET order")
		at, err := strconv.ParseInt(row[11], 10, 64)
		require.NoError(t, err)
		within(t, at, t0, t1, "at")
		require.Equal(t, protocol.PendingScore(7, 1), q.score(q.k.Pending, "1"))
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Delayed))
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Meta, "seq"))
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Stats, "added"))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
	})
	scenario(t, env, "delayed job", func(t *testing.T, q *queue) {
		q.install()
		t0 := q.now()
		id := q.add(job{data: "later", delay: "60000", prio: "3"})[0]
		t1 := q.now()
		within(t, q.score(q.k.Delayed, id), t0+60000, t1+60000, "due time")
		require.Equal(t, Bulk("delayed"), q.r("HGET", q.k.Job(id), "state"))
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Pending))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal), "no job went to pending")
	})
	scenario(t, env, "ids in argument order, continuing the sequence", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, []string{"1", "2"}, q.add(job{data: "a"}, job{data: "b", delay: "5000"}))
		require.Equal(t, []string{"3", "4", "5"}, q.add(job{data: "c"}, job{data: "d", prio: "1000"}, job{data: "e"}))
		require.Equal(t, Bulk("5"), q.r("HGET", q.k.Meta, "seq"))
		require.Equal(t, Bulk("5"), q.r("HGET", q.k.Stats, "added"))
		require.Equal(t, Bulks("4", "1", "3", "5"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.k.Delayed, "0", "-1"))
	})
	scenario(t, env, "priority 1000 and 0 scores", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "low", prio: "0"}, job{data: "high", prio: "1000"})
		require.Equal(t, protocol.PendingScore(0, 1), q.score(q.k.Pending, "1"))
		require.Equal(t, protocol.PendingScore(1000, 2), q.score(q.k.Pending, "2"))
	})
	scenario(t, env, "id exists", func(t *testing.T, q *queue) {
		fixtures[protocol.Add](q)
		q.do("SET", q.k.Job("2"), "planted")
		q.refuse(protocol.ErrAddIDExists, q.verb(protocol.Add, addArgs(job{data: "a"})...))
	})
	scenario(t, env, "a later id of the batch exists", func(t *testing.T, q *queue) {
		fixtures[protocol.Add](q)
		q.do("HSET", q.k.Job("4"), "att", "0")
		q.refuse(protocol.ErrAddIDExists, q.verb(protocol.Add, addArgs(job{data: "a"}, job{data: "b"}, job{data: "c"})...))
	})
	scenario(t, env, "batch of 1000", func(t *testing.T, q *queue) {
		q.install()
		jobs := make([]job, protocol.MaxCount)
		want := make([]string, protocol.MaxCount)
		for i := range jobs {
			jobs[i] = job{data: "job " + strconv.Itoa(i)}
			want[i] = strconv.Itoa(i + 1)
		}
		require.Equal(t, want, q.add(jobs...))
		require.Equal(t, Int(protocol.MaxCount), q.r("ZCARD", q.k.Pending))
		require.Equal(t, Bulk("1000"), q.r("HGET", q.k.Meta, "seq"))
		require.Equal(t, Bulk("1000"), q.r("HGET", q.k.Stats, "added"))
		got := q.claim(60000, protocol.MaxCount)
		require.Len(t, got, protocol.MaxCount)
		for i, c := range got {
			require.Equal(t, claimed{want[i], "job " + strconv.Itoa(i), 1}, c)
		}
		q.do("DEL", q.k.Active) // keep the shared server small
		for _, id := range want {
			q.do("DEL", q.k.Job(id))
		}
	})
}

// hgetall is a hash's fields and values in the server's order (for a small
// hash, the order the fields were first written).
func (q *queue) hgetall(key string) []string {
	q.t.Helper()
	v, err := q.env.Server.Do(q.t.Context(), "HGETALL", key)
	require.NoError(q.t, err)
	items, ok := v.([]any)
	require.True(q.t, ok, "HGETALL %s: %#v", key, v)
	out := make([]string, len(items))
	for i, it := range items {
		out[i], ok = it.(string)
		require.True(q.t, ok, "HGETALL %s: %#v", key, v)
	}
	return out
}
