package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testRetry: EMQ.RETRY moves one delayed job to pending now.
func testRetry(t *testing.T, env Env) {
	scenario(t, env, "a delayed job runs now", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", delay: "600000", prio: "4"})[0]
		require.Equal(t, Int(1), q.call(protocol.Retry, id))
		require.Equal(t, "pending", q.hget(id, "state"))
		require.Equal(t, protocol.PendingScore(4, 1), q.score(q.k.Pending, id))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Delayed))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		require.Equal(t, Arr(Arr(Bulk(id), Bulk("a"), Int(1))), q.call(protocol.Claim, "30000", "1"))
	})
	scenario(t, env, "a retrying job runs now", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", backoffMS: "600000"})
		c := q.claimOne()
		require.Equal(t, Bulk(protocol.FailRetry), q.call(protocol.Fail, c.id, c.token(), "1", "x"))
		require.Equal(t, Int(1), q.call(protocol.Retry, c.id))
		require.Equal(t, Arr(Arr(Bulk(c.id), Bulk("a"), Int(2))), q.call(protocol.Claim, "30000", "1"))
	})
	scenario(t, env, "a laned job goes to its lane", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", delay: "600000", lane: "x"})[0]
		require.Equal(t, Int(1), q.call(protocol.Retry, id))
		require.Equal(t, Bulks(id), q.r("ZRANGE", q.k.Lane("x"), "0", "-1"))
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Meta, protocol.MetaLaneWait))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending))
	})
	scenario(t, env, "not delayed", func(t *testing.T, q *queue) {
		dead := q.deadJobs(job{data: "b"})[0]
		q.refuse(protocol.ErrRetryNotDelayed, q.verb(protocol.Retry, dead))
		pending := q.addOne("a")
		q.refuse(protocol.ErrRetryNotDelayed, q.verb(protocol.Retry, pending))
		id := q.add(job{data: "c", delay: "600000"})[0]
		q.do("ZREM", q.k.Delayed, id)
		q.refuse(protocol.ErrRetryNotDelayed, q.verb(protocol.Retry, id))
	})
	scenario(t, env, "gone row", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", q.k.Delayed, "0", "5")
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Retry, "5")))
	})
	scenario(t, env, "events", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Events, "100")
		id := q.add(job{data: "a", delay: "600000"})[0]
		q.do("DEL", q.k.Fixed(protocol.SuffixEvents))
		require.Equal(t, Int(1), q.call(protocol.Retry, id))
		require.Equal(t, []string{evt("promoted", id)}, q.eventLog())
	})
}
