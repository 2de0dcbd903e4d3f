package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testRequeue: EMQ.REQUEUE sends a dead job back with a fresh set of
// attempts.
func testRequeue(t *testing.T, env Env) {
	scenario(t, env, "requeues", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", attempts: "1", prio: "6"})[0]
		c := q.claimOne()
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, id, c.token(), "1", "boom"))
		require.Equal(t, Int(1), q.call(protocol.Requeue, id))
		require.Equal(t, Bulks("pending", "1", "2", "boom"), q.r("HMGET", q.k.Job(id), "state", "att", "max", "err"))
		require.Equal(t, protocol.PendingScore(6, 1), q.score(q.k.Pending, id))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Dead))
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Stats, "requeued"))

		// a fresh set of attempts; the old token stays stale
		again := q.claimOne()
		require.Equal(t, claimed{id, "a", 2}, again)
		q.refuse(protocol.ErrStale("complete"), q.verb(protocol.Complete, id, c.token(), ""))
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, id, again.token(), "1", "again"))
	})
	scenario(t, env, "max becomes att + max", func(t *testing.T, q *queue) {
		id := q.dead(job{data: "a", attempts: "1"})
		q.do("HSET", q.k.Job(id), "att", "41", "max", "7")
		require.Equal(t, Int(1), q.call(protocol.Requeue, id))
		require.Equal(t, Bulk("48"), q.r("HGET", q.k.Job(id), "max"))
	})
	scenario(t, env, "pending is not dead", func(t *testing.T, q *queue) {
		q.install()
		id := q.addOne("a")
		q.refuse(protocol.ErrRequeueNotDead, q.verb(protocol.Requeue, id))
	})
	scenario(t, env, "active is not dead", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.refuse(protocol.ErrRequeueNotDead, q.verb(protocol.Requeue, c.id))
	})
	scenario(t, env, "delayed is not dead", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", delay: "60000"})[0]
		q.refuse(protocol.ErrRequeueNotDead, q.verb(protocol.Requeue, id))
	})
	scenario(t, env, "gone row", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Requeue, "1")))
	})
}
