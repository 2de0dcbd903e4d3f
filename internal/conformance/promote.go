package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testPromote: EMQ.PROMOTE moves due delayed jobs to pending.
func testPromote(t *testing.T, env Env) {
	scenario(t, env, "due jobs move", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", delay: "1", prio: "4"})[0]
		require.Equal(t, Arr(), q.call(protocol.Claim, "30000", "1"), "a delayed job is not claimed")
		pause(leaseWait)
		require.Equal(t, Int(1), q.call(protocol.Promote, "10"))
		require.Equal(t, Bulk("pending"), q.r("HGET", q.k.Job(id), "state"))
		require.Equal(t, protocol.PendingScore(4, 1), q.score(q.k.Pending, id))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Delayed))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		require.Equal(t, Arr(Arr(Bulk(id), Bulk("a"), Int(1))), q.call(protocol.Claim, "30000", "1"))
	})
	scenario(t, env, "jobs not due stay", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", delay: "60000"})
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Promote, "10")))
	})
	scenario(t, env, "due in due order", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", delay: "60000"}, job{data: "b", delay: "60000"}, job{data: "c", delay: "60000"})
		q.do("ZADD", q.k.Delayed, "XX", "30", "1", "10", "2", "20", "3")
		require.Equal(t, Int(2), q.call(protocol.Promote, "2"))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Delayed, "0", "-1"))
	})
	scenario(t, env, "bounded by limit", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", delay: "1"}, job{data: "b", delay: "1"}, job{data: "c", delay: "1"},
			job{data: "d", delay: "1"}, job{data: "e", delay: "1"})
		pause(leaseWait)
		for _, moved := range []int64{2, 2, 1} {
			require.Equal(t, Int(moved), q.call(protocol.Promote, "2"))
		}
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Promote, "2")))
		require.Equal(t, Int(5), q.r("ZCARD", q.k.Pending))
	})
	scenario(t, env, "a gone row leaves delayed and is not counted", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", q.k.Delayed, "0", "77", "0", "x")
		require.Equal(t, Int(0), q.call(protocol.Promote, "10"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Delayed, q.k.Pending, q.k.Signal))
	})
}
