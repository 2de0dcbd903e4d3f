package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testStats: EMQ.STATS, sizes, the pause flag and the counters, in order.
func testStats(t *testing.T, env Env) {
	scenario(t, env, "an empty queue", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, statsReply(0, 0, 0, 0, false), q.unchanged(q.verb(protocol.Stats)))
	})
	scenario(t, env, "after a life", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"}, job{data: "d", delay: "60000"}, job{data: "e"})
		cs := q.claim(60000, 3)
		q.must(protocol.Complete, cs[0].id, cs[0].token(), "")
		q.must(protocol.Fail, cs[1].id, cs[1].token(), "0", "x")
		q.must(protocol.Fail, cs[2].id, cs[2].token(), "1", "x")
		q.must(protocol.Remove, "5", "0")
		q.must(protocol.Requeue, cs[1].id)
		q.must(protocol.Pause)
		require.Equal(t, statsReply(1, 2, 0, 0, true, "5", "1", "2", "1", "1", "0", "1", "1"),
			q.unchanged(q.verb(protocol.Stats)))
	})
	scenario(t, env, "counters as stored", func(t *testing.T, q *queue) {
		q.install()
		q.do("HSET", q.k.Stats, "added", "abc", "dead", "-1")
		require.Equal(t, statsReply(0, 0, 0, 0, false, "abc", "0", "0", "0", "-1"), q.unchanged(q.verb(protocol.Stats)))
	})
	scenario(t, env, "recovered counted", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		q.expired()
		q.must(protocol.Recover, "10")
		require.Equal(t, statsReply(1, 0, 0, 0, false, "1", "0", "0", "0", "0", "1"), q.call(protocol.Stats))
	})
}
