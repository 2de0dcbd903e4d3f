package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testFail: EMQ.FAIL retries an active job after its backoff while attempts
// remain, else dead-letters it.
func testFail(t *testing.T, env Env) {
	// failRetry fails c with retry 1 and returns the due time and the server
	// clock around the call.
	failRetry := func(q *queue, c claimed, text string) (due, t0, t1 int64) {
		t0 = q.now()
		require.Equal(t, Bulk(protocol.FailRetry), q.call(protocol.Fail, c.id, c.token(), "1", text))
		t1 = q.now()
		return q.score(q.k.Delayed, c.id), t0, t1
	}
	scenario(t, env, "retry with fixed backoff", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", backoffMS: "5000"})
		due, t0, t1 := failRetry(q, c, "boom")
		within(t, due, t0+5000, t1+5000, "due")
		require.Equal(t, Bulks("delayed", "boom", "1"), q.r("HMGET", q.k.Job(c.id), "state", "err", "att"))
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Active))
		require.Equal(t, Arr(Bulk("1"), Bulk("1"), Nil), q.r("HMGET", q.k.Stats, "failed", "retried", "dead"))
	})
	scenario(t, env, "retry with backoff 0 is due at once", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		due, t0, t1 := failRetry(q, c, "x")
		within(t, due, t0, t1, "due")
	})
	scenario(t, env, "retry with exponential backoff", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", attempts: "10", backoff: "exponential", backoffMS: "1000"})[0]
		for _, delay := range []int64{1000, 2000, 4000, 8000} {
			c := q.claimOne()
			due, t0, t1 := failRetry(q, c, "x")
			within(t, due, t0+delay, t1+delay, "due")
			q.do("ZADD", q.k.Delayed, "XX", "0", id) // make it due now
			require.Equal(t, Int(1), q.call(protocol.Promote, "1"))
		}
	})
	scenario(t, env, "exponential backoff is capped at a week", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", attempts: "100", backoff: "exponential", backoffMS: "86400000"})[0]
		for _, delay := range []int64{86400000, 172800000, 345600000, protocol.MaxRetryDelay, protocol.MaxRetryDelay} {
			c := q.claimOne()
			due, t0, t1 := failRetry(q, c, "x")
			within(t, due, t0+delay, t1+delay, "due")
			q.do("ZADD", q.k.Delayed, "XX", "0", id)
			require.Equal(t, Int(1), q.call(protocol.Promote, "1"))
		}
	})
	scenario(t, env, "exponential backoff of 0 ms", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", backoff: "exponential"})
		due, t0, t1 := failRetry(q, c, "x")
		within(t, due, t0, t1, "due")
	})
	scenario(t, env, "exponential backoff after many attempts", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", backoff: "exponential", backoffMS: "1", attempts: "1000000"})
		q.do("HSET", q.k.Job(c.id), "att", "999999", "max", "1000000")
		c.att = 999999
		due, t0, t1 := failRetry(q, c, "x")
		within(t, due, t0+protocol.MaxRetryDelay, t1+protocol.MaxRetryDelay, "due")
	})
	scenario(t, env, "a malformed bo waits 0", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", backoffMS: "5000"})
		q.do("HSET", q.k.Job(c.id), "bo", "linear:5000")
		due, t0, t1 := failRetry(q, c, "x")
		within(t, due, t0, t1, "due")
	})
	scenario(t, env, "dead at max attempts", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", attempts: "2"})[0]
		c := q.claimOne()
		failRetry(q, c, "first")
		require.Equal(t, Int(1), q.call(protocol.Promote, "1"))
		c = q.claimOne()
		t0 := q.now()
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, id, c.token(), "1", "second"))
		t1 := q.now()
		within(t, q.score(q.k.Dead, id), t0, t1, "time of death")
		require.Equal(t, Bulks("dead", "second", "2"), q.r("HMGET", q.k.Job(id), "state", "err", "att"))
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Delayed))
		require.Equal(t, Bulks("2", "1", "1"), q.r("HMGET", q.k.Stats, "failed", "retried", "dead"))
	})
	scenario(t, env, "retry 0 dead-letters now", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", attempts: "3"})
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "0", "fatal"))
		require.Equal(t, Bulks("dead", "fatal"), q.r("HMGET", q.k.Job(c.id), "state", "err"))
		require.Equal(t, Bulks(c.id), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, Arr(Bulk("1"), Nil, Bulk("1")), q.r("HMGET", q.k.Stats, "failed", "retried", "dead"))
	})
	for _, token := range []string{"2", ""} {
		scenario(t, env, "stale token "+quote(token), func(t *testing.T, q *queue) {
			c := q.active(job{data: "a"})
			q.refuse(protocol.ErrStale("fail"), q.verb(protocol.Fail, c.id, token, "1", "x"))
		})
	}
	scenario(t, env, "not active", func(t *testing.T, q *queue) {
		q.install()
		id := q.addOne("a")
		q.refuse(protocol.ErrNotActive("fail"), q.verb(protocol.Fail, id, "0", "1", "x"))
	})
	scenario(t, env, "gone row", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Fail, "1", "1", "0", "x")))
	})
}
