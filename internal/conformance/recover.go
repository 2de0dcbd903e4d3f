package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testRecover: EMQ.RECOVER takes back jobs whose lease expired.
func testRecover(t *testing.T, env Env) {
	scenario(t, env, "to pending", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", prio: "9"})[0]
		q.expired()
		require.Equal(t, Arr(Int(1), Int(0)), q.call(protocol.Recover, "10"))
		require.Equal(t, Bulks("pending", "1"), q.r("HMGET", q.k.Job(id), "state", "att"))
		require.Equal(t, protocol.PendingScore(9, 1), q.score(q.k.Pending, id))
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Active))
		require.Equal(t, Arr(Bulk("1"), Nil), q.r("HMGET", q.k.Stats, "recovered", "dead"))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
	})
	scenario(t, env, "to dead", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", attempts: "1"})[0]
		q.expired()
		t0 := q.now()
		require.Equal(t, Arr(Int(0), Int(1)), q.call(protocol.Recover, "10"))
		t1 := q.now()
		within(t, q.score(q.k.Dead, id), t0, t1, "time of death")
		require.Equal(t, Bulks("dead", protocol.LeaseExpired), q.r("HMGET", q.k.Job(id), "state", "err"))
		require.Equal(t, Arr(Nil, Bulk("1")), q.r("HMGET", q.k.Stats, "recovered", "dead"))
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Pending))
	})
	scenario(t, env, "both at once", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", attempts: "1"}, job{data: "b"}, job{data: "c", attempts: "1"})
		require.Len(t, q.claim(1, 3), 3)
		pause(leaseWait)
		require.Equal(t, Arr(Int(1), Int(2)), q.call(protocol.Recover, "10"))
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, Bulks("1", "3"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
	})
	scenario(t, env, "leases not expired stay", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		q.claimOne()
		require.Equal(t, Arr(Int(0), Int(0)), q.unchanged(q.verb(protocol.Recover, "10")))
	})
	scenario(t, env, "bounded by limit", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"}, job{data: "d"}, job{data: "e"})
		require.Len(t, q.claim(1, 5), 5)
		pause(leaseWait)
		require.Equal(t, Arr(Int(2), Int(0)), q.call(protocol.Recover, "2"))
		require.Equal(t, Arr(Int(2), Int(0)), q.call(protocol.Recover, "2"))
		require.Equal(t, Arr(Int(1), Int(0)), q.call(protocol.Recover, "2"))
		require.Equal(t, Arr(Int(0), Int(0)), q.unchanged(q.verb(protocol.Recover, "2")))
		require.Equal(t, Bulk("5"), q.r("HGET", q.k.Stats, "recovered"))
	})
	scenario(t, env, "a recovered attempt's token is stale once reclaimed", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		old := q.expired()
		q.must(protocol.Recover, "10")
		q.refuse(protocol.ErrNotActive("complete"), q.verb(protocol.Complete, old.id, old.token(), ""))
		c := q.claimOne()
		require.Equal(t, int64(2), c.att)
		q.refuse(protocol.ErrStale("complete"), q.verb(protocol.Complete, old.id, old.token(), ""))
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
	})
	scenario(t, env, "a gone row leaves active and is not counted", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		q.expired()
		q.do("DEL", q.k.Job("1"))
		require.Equal(t, Arr(Int(0), Int(0)), q.call(protocol.Recover, "10"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Active, q.k.Job("1")))
		require.Equal(t, Arr(Nil, Nil), q.r("HMGET", q.k.Stats, "recovered", "dead"))
	})
	scenario(t, env, "a member that is not an id leaves active", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", q.k.Active, "0", "job")
		q.do("HSET", q.k.Job("job"), "att", "0", "max", "3")
		require.Equal(t, Arr(Int(0), Int(0)), q.call(protocol.Recover, "10"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Active, q.k.Pending))
		require.Equal(t, Int(2), q.r("HLEN", q.k.Job("job")))
	})
}
