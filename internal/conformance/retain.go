package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testFlowRetention: retained jobs stay as completed; others go.
func testFlowRetention(t *testing.T, env Env) {
	scenario(t, env, "a retained job stays with its result", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "60000", "0", "0", "0", "0")
		id := q.add(job{data: "a", unique: "u"})[0]
		c := q.claimOne()
		q.must(protocol.Log, c.id, c.token(), "line", "10")
		q.finish(c, "res")
		require.Equal(t, Arr(Bulk("completed"), Bulk("res"), Bulk("1")), q.fields(id, "state", "res", "keep"))
		require.Equal(t, Bulks(id), q.r("ZRANGE", q.completedKey(), "0", "-1"))
		require.Equal(t, Bulks("line"), q.r("LRANGE", q.k.Logs(id), "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Unique("u")), "the unique key is released")
		reply := q.call(protocol.Inspect, id)
		require.Contains(t, reply, Bulk("state")+", "+Bulk("completed"))
		require.Contains(t, reply, Bulk("keep")+", "+Bulk("1")+", "+Bulk("res")+", "+Bulk("res")+", "+Bulk("logs"))
		require.Equal(t, statsReplyWith(0, 0, 0, 0, false, [6]int64{0, 0, 0, 0, 0, 1}, "1", "1"), q.call(protocol.Stats))
	})
	scenario(t, env, "a retained job without a result", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "0", "10", "0", "0", "0")
		id := q.add(job{data: "a"})[0]
		q.finish(q.claimOne(), "")
		require.Equal(t, Arr(Bulk("completed"), Nil), q.fields(id, "state", "res"))
	})
	scenario(t, env, "retention off: the row goes", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a"})[0]
		q.must(protocol.Retain, "60000", "0", "0", "0", "0")
		q.finish(q.claimOne(), "res")
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job(id), q.completedKey()))
	})
	scenario(t, env, "a retained completemany", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "60000", "0", "0", "0", "0")
		q.add(job{data: "a"}, job{data: "b"})
		cs := q.claimAll()
		require.Equal(t, outcomes(1, 1), q.call(protocol.CompleteMany, manyResults(cs["1"].with("x"), cs["2"].with(""))...))
		require.Equal(t, Bulks("1", "2"), q.r("ZRANGE", q.completedKey(), "0", "-1"))
		require.Equal(t, Arr(Bulk("completed"), Bulk("x")), q.fields("1", "state", "res"))
	})
	scenario(t, env, "remove of a retained job counts nothing", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "60000", "0", "0", "0", "0")
		id := q.add(job{data: "a"})[0]
		q.finish(q.claimOne(), "res")
		require.Equal(t, Int(1), q.call(protocol.Remove, id, "0"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job(id), q.completedKey()))
		require.Equal(t, Nil, q.r("HGET", q.k.Stats, "removed"))
	})
	scenario(t, env, "completed of another type", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "60000", "0", "0", "0", "0")
		q.add(job{data: "a"})
		c := q.claimOne()
		q.plant(q.completedKey(), "zset")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Complete, c.id, c.token(), ""))
	})
	scenario(t, env, "retain writes every field", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(1), q.call(protocol.Retain, "1", "2", "3", "4", "5"))
		require.Equal(t, Bulks("keep_done", "1", "keep_done_max", "2", "keep_dead", "3", "keep_dead_max", "4", "result_max", "5"), Bulks(q.hgetall(q.k.Meta)...))
	})
}
