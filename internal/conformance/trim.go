package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testFlowTrim: TRIM by age and by count, bounded by limit.
func testFlowTrim(t *testing.T, env Env) {
	completeN := func(q *queue, n int) {
		q.t.Helper()
		jobs := make([]job, n)
		for i := range jobs {
			jobs[i] = job{data: "j"}
		}
		q.add(jobs...)
		for _, c := range q.claim(600000, n) {
			q.finish(c, "r")
		}
	}
	deadN := func(q *queue, n int) {
		q.t.Helper()
		jobs := make([]job, n)
		for i := range jobs {
			jobs[i] = job{data: "j", attempts: "1"}
		}
		q.add(jobs...)
		for _, c := range q.claim(600000, n) {
			q.kill(c, "x")
		}
	}
	scenario(t, env, "completed by age", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "1", "0", "0", "0", "0")
		completeN(q, 2)
		pause(leaseWait)
		require.Equal(t, Arr(Int(2), Int(0)), q.call(protocol.Trim, "10"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("1"), q.k.Job("2"), q.completedKey()))
		require.Equal(t, Nil, q.r("HGET", q.k.Stats, "trimmed"))
	})
	scenario(t, env, "completed by count", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "0", "2", "0", "0", "0")
		completeN(q, 3)
		require.Equal(t, Arr(Int(1), Int(0)), q.call(protocol.Trim, "10"))
		require.Equal(t, Bulks("2", "3"), q.r("ZRANGE", q.completedKey(), "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("1")))
		require.Equal(t, Arr(Int(0), Int(0)), q.unchanged(q.verb(protocol.Trim, "10")))
	})
	scenario(t, env, "dead by count", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "0", "0", "0", "1", "0")
		deadN(q, 3)
		require.Equal(t, Arr(Int(0), Int(2)), q.call(protocol.Trim, "10"))
		require.Equal(t, Bulks("3"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, Bulk("2"), q.r("HGET", q.k.Stats, "trimmed"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("1"), q.k.Job("2")))
	})
	scenario(t, env, "dead by age", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "0", "0", "1", "0", "0")
		deadN(q, 2)
		pause(leaseWait)
		require.Equal(t, Arr(Int(0), Int(2)), q.call(protocol.Trim, "10"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Dead))
	})
	scenario(t, env, "dead: the default bound", func(t *testing.T, q *queue) {
		q.install()
		deadN(q, 3)
		require.Equal(t, Arr(Int(0), Int(0)), q.unchanged(q.verb(protocol.Trim, "10")))
	})
	scenario(t, env, "bounded by limit", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "0", "0", "0", "1", "0")
		deadN(q, 4)
		require.Equal(t, Arr(Int(0), Int(2)), q.call(protocol.Trim, "2"))
		require.Equal(t, Arr(Int(0), Int(1)), q.call(protocol.Trim, "2"))
		require.Equal(t, Bulks("4"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
	})
	scenario(t, env, "limit counts completed and dead together", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "0", "1", "0", "1", "0")
		completeN(q, 3)
		deadN(q, 3)
		require.Equal(t, Arr(Int(2), Int(1)), q.call(protocol.Trim, "3"))
		require.Equal(t, Arr(Int(0), Int(1)), q.call(protocol.Trim, "3"))
	})
	scenario(t, env, "age and count together take each id once", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "1", "1", "0", "0", "0")
		completeN(q, 3)
		pause(leaseWait)
		require.Equal(t, Arr(Int(3), Int(0)), q.call(protocol.Trim, "10"))
	})
	scenario(t, env, "a trimmed job's unique key is released", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "0", "0", "0", "1", "0")
		q.add(job{data: "a", attempts: "1", unique: "u"}, job{data: "b", attempts: "1"})
		for _, c := range q.claim(600000, 2) {
			q.kill(c, "x")
		}
		require.Equal(t, Arr(Int(0), Int(1)), q.call(protocol.Trim, "10"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Unique("u")))
	})
	scenario(t, env, "completed denied", func(t *testing.T, q *queue) {
		args := fixtures[protocol.Trim](q)
		user := q.as(map[string]string{classFlows: "R"})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Trim, args...))
	})
}
