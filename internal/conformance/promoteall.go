package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testPromoteAll: EMQ.PROMOTEALL moves delayed jobs to pending, due or not.
func testPromoteAll(t *testing.T, env Env) {
	scenario(t, env, "moves jobs not due, soonest first", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", delay: "600000", prio: "2"}, job{data: "b", delay: "300000"}, job{data: "c", delay: "900000", lane: "x"})
		require.Equal(t, Arr(Int(2), Int(1)), q.call(protocol.PromoteAll, "2"))
		require.Equal(t, Bulks("1", "2"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, protocol.PendingScore(2, 1), q.score(q.k.Pending, "1"))
		require.Equal(t, []string{"pending", "pending", "delayed"}, []string{q.hget("1", "state"), q.hget("2", "state"), q.hget("3", "state")})
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		require.Equal(t, Arr(Int(1), Int(0)), q.call(protocol.PromoteAll, "2"))
		require.Equal(t, Bulks("3"), q.r("ZRANGE", q.k.Lane("x"), "0", "-1"))
		require.Equal(t, Arr(Int(0), Int(0)), q.unchanged(q.verb(protocol.PromoteAll, "2")))
	})
	scenario(t, env, "rowless members leave delayed uncounted", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", q.k.Delayed, "0", "77", "0", "x", "5", "8")
		require.Equal(t, Arr(Int(0), Int(1)), q.call(protocol.PromoteAll, "2"))
		require.Equal(t, Bulks("8"), q.r("ZRANGE", q.k.Delayed, "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending, q.k.Signal))
	})
	scenario(t, env, "events", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Events, "100")
		q.add(job{data: "a", delay: "600000"})
		q.do("DEL", q.k.Fixed(protocol.SuffixEvents))
		require.Equal(t, Arr(Int(1), Int(0)), q.call(protocol.PromoteAll, "10"))
		require.Equal(t, []string{evt("promoted", "1")}, q.eventLog())
	})
}
