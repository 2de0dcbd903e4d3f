package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testClaim: EMQ.CLAIM leases pending jobs, highest priority first, FIFO
// within a priority.
func testClaim(t *testing.T, env Env) {
	scenario(t, env, "one job", func(t *testing.T, q *queue) {
		q.install()
		id := q.addOne("payload")
		t0 := q.now()
		require.Equal(t, Arr(Arr(Bulk(id), Bulk("payload"), Int(1))), q.call(protocol.Claim, "30000", "1"))
		t1 := q.now()
		within(t, q.score(q.k.Active, id), t0+30000, t1+30000, "lease deadline")
		require.Equal(t, Bulks("1", "active"), q.r("HMGET", q.k.Job(id), "att", "state"))
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Pending))
	})
	scenario(t, env, "priority, then FIFO", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", prio: "0"}, job{data: "b", prio: "5"}, job{data: "c", prio: "5"},
			job{data: "d", prio: "1000"}, job{data: "e", prio: "0"})
		require.Equal(t, Arr(
			Arr(Bulk("4"), Bulk("d"), Int(1)),
			Arr(Bulk("2"), Bulk("b"), Int(1)),
			Arr(Bulk("3"), Bulk("c"), Int(1)),
		), q.call(protocol.Claim, "30000", "3"))
		require.Equal(t, Arr(
			Arr(Bulk("1"), Bulk("a"), Int(1)),
			Arr(Bulk("5"), Bulk("e"), Int(1)),
		), q.call(protocol.Claim, "30000", "1000"))
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "1")))
	})
	scenario(t, env, "one deadline for the call", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"})
		require.Len(t, q.claim(5000, 3), 3)
		d := q.score(q.k.Active, "1")
		require.Equal(t, d, q.score(q.k.Active, "2"))
		require.Equal(t, d, q.score(q.k.Active, "3"))
	})
	scenario(t, env, "nothing pending", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "later", delay: "60000"})
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "10")))
	})
	scenario(t, env, "paused", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		q.must(protocol.Pause)
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "10")))
	})
	scenario(t, env, "paused means exactly 1", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		q.do("HSET", q.k.Meta, "paused", "yes")
		require.Len(t, q.claim(30000, 1), 1)
	})
	scenario(t, env, "the attempt counts claims", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", attempts: "5"})[0]
		for att := int64(1); att <= 3; att++ {
			c := q.claimOne()
			require.Equal(t, claimed{id, "a", att}, c)
			require.Equal(t, Bulk(protocol.FailRetry), q.call(protocol.Fail, id, c.token(), "1", "again"))
			require.Equal(t, Int(1), q.call(protocol.Promote, "10"))
		}
	})
	scenario(t, env, "a row without att is dropped", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		q.do("HDEL", q.k.Job("1"), "att")
		require.Equal(t, Arr(Arr(Bulk("2"), Bulk("b"), Int(1))), q.call(protocol.Claim, "30000", "2"))
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Pending))
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.k.Active, "0", "-1"))
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Job("1"), "state"), "the row is left as it was")
		require.Equal(t, Bulk("a"), q.r("HGET", q.k.Job("1"), "data"), "the row is left as it was")
	})
	scenario(t, env, "a gone row is dropped", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		q.do("DEL", q.k.Job("2"))
		require.Equal(t, Arr(Arr(Bulk("1"), Bulk("a"), Int(1))), q.call(protocol.Claim, "30000", "5"))
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Pending))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("2")))
	})
	scenario(t, env, "a member that is not an id is dropped", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", q.k.Pending, "0", "x1")
		q.do("HSET", q.k.Job("x1"), "att", "0", "data", "d")
		require.Equal(t, Arr(), q.call(protocol.Claim, "30000", "5"))
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Pending))
		require.Equal(t, Bulks("0", "d"), q.r("HMGET", q.k.Job("x1"), "att", "data"), "its row is not read")
	})
	scenario(t, env, "a row without data", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		q.do("HDEL", q.k.Job("1"), "data")
		require.Equal(t, Arr(Arr(Bulk("1"), Nil, Int(1))), q.call(protocol.Claim, "30000", "1"))
	})
}
