package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testResume: EMQ.RESUME lets claims run again and wakes idle workers.
func testResume(t *testing.T, env Env) {
	scenario(t, env, "resumes and signals waiting jobs", func(t *testing.T, q *queue) {
		fixtures[protocol.Resume](q)
		require.Equal(t, Int(1), q.call(protocol.Resume))
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Meta, "paused"))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		require.Len(t, q.claim(30000, 1), 1)
	})
	scenario(t, env, "resumes an empty queue without a signal", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Pause)
		require.Equal(t, Int(1), q.call(protocol.Resume))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal))
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Meta, "paused"))
	})
	scenario(t, env, "signals jobs waiting in lanes", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Pause)
		q.add(job{data: "a", lane: "t"})
		q.do("DEL", q.k.Signal)
		require.Equal(t, Int(1), q.call(protocol.Resume))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		require.Len(t, q.claim(30000, 1), 1)
	})
	scenario(t, env, "lanewait is read as stored", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Pause)
		q.do("HSET", q.k.Meta, protocol.MetaLaneWait, "01")
		require.Equal(t, Int(1), q.call(protocol.Resume))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal), "01 reads as 0: no signal")
	})
	scenario(t, env, "not paused: nothing written", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		q.do("DEL", q.k.Signal)
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Resume)))
	})
	scenario(t, env, "not paused: other types are not read", func(t *testing.T, q *queue) {
		q.install()
		q.plant(q.k.Pending, "zset")
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Resume)))
	})
	scenario(t, env, "keeps at most one signal", func(t *testing.T, q *queue) {
		fixtures[protocol.Resume](q)
		q.do("RPUSH", q.k.Signal, "1", "1")
		require.Equal(t, Int(1), q.call(protocol.Resume))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
	})
}
