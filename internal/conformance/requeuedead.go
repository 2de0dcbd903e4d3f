package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testRequeueDead: EMQ.REQUEUEDEAD is REQUEUE for the dead jobs a filter
// takes, walking dead oldest first in bounded calls.
func testRequeueDead(t *testing.T, env Env) {
	scenario(t, env, "requeues every dead job, in calls of limit", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", prio: "3"}, job{data: "b"}, job{data: "c"}, job{data: "d"}, job{data: "e"})
		q.do("ZADD", q.k.Dead, "XX", "10", "1", "20", "2", "20", "3", "20", "4", "30", "5")
		q.do("DEL", q.k.Signal)
		require.Equal(t, walk(2, 2, 20, "2"), q.call(protocol.RequeueDead, "2", "", "", "0", maxScore, "", ""))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		require.Equal(t, walk(2, 2, 20, "4"), q.call(protocol.RequeueDead, "2", "20", "2", "0", maxScore, "", ""))
		require.Equal(t, walk(1, 1, 0, ""), q.call(protocol.RequeueDead, "2", "20", "4", "0", maxScore, "", ""))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Dead))
		require.Equal(t, Bulks("1", "2", "3", "4", "5"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, protocol.PendingScore(3, 1), q.score(q.k.Pending, "1"))
		require.Equal(t, Bulks("pending", "1", "2", "boom 1"), q.r("HMGET", q.k.Job("1"), "state", "att", "max", "err"))
		require.Equal(t, Bulk("5"), q.r("HGET", q.k.Stats, "requeued"))
		// a fresh set of attempts
		c := q.claimOne()
		require.Equal(t, claimed{"1", "a", 2}, c)
	})
	scenario(t, env, "a page of exactly the rest ends the walk", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"})
		require.Equal(t, walk(2, 2, 0, ""), q.call(protocol.RequeueDead, "2", "", "", "0", maxScore, "", ""))
	})
	scenario(t, env, "by lane", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", lane: "x"}, job{data: "b"}, job{data: "c", lane: "y"}, job{data: "d", lane: "x"})
		require.Equal(t, walk(2, 4, 0, ""), q.call(protocol.RequeueDead, deadFilter("10", "x", "")...))
		require.Equal(t, Bulks("2", "3"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, Bulks("1", "4"), q.r("ZRANGE", q.k.Lane("x"), "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending))
		require.Equal(t, Bulk("2"), q.r("HGET", q.k.Meta, protocol.MetaLaneWait))
		require.Equal(t, Bulks("x"), q.r("ZRANGE", q.k.Fixed(protocol.SuffixTurns), "0", "-1"))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		require.Equal(t, Bulk("2"), q.r("HGET", q.k.Stats, "requeued"))
	})
	scenario(t, env, "by error text", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"}, job{data: "c"})
		q.do("HSET", q.k.Job("2"), "err", "timeout: upstream 502")
		q.do("HSET", q.k.Job("3"), "err", "upstream\x00bin")
		require.Equal(t, walk(2, 3, 0, ""), q.call(protocol.RequeueDead, deadFilter("10", "", "upstream")...))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		q.do("HDEL", q.k.Job("1"), "err")
		require.Equal(t, walk(0, 1, 0, ""), q.unchanged(q.verb(protocol.RequeueDead, deadFilter("10", "", "b")...)),
			"an absent error contains nothing")
		// a pattern character is a byte like any other
		q.do("HSET", q.k.Job("1"), "err", "50% done")
		require.Equal(t, walk(0, 1, 0, ""), q.unchanged(q.verb(protocol.RequeueDead, deadFilter("10", "", "%d")...)))
		require.Equal(t, walk(1, 1, 0, ""), q.call(protocol.RequeueDead, deadFilter("10", "", "% d")...))
	})
	scenario(t, env, "by time of death, the walk ends past max", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"}, job{data: "c"}, job{data: "d"})
		q.do("ZADD", q.k.Dead, "XX", "10", "1", "20", "2", "30", "3", "40", "4")
		require.Equal(t, walk(1, 1, 20, "2"), q.call(protocol.RequeueDead, "1", "", "", "15", "30", "", ""))
		require.Equal(t, walk(1, 1, 0, ""), q.call(protocol.RequeueDead, "1", "20", "2", "15", "30", "", ""))
		require.Equal(t, Bulks("1", "4"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, walk(0, 0, 0, ""), q.unchanged(q.verb(protocol.RequeueDead, "10", "", "", "50", "60", "", "")))
		require.Equal(t, walk(0, 0, 0, ""), q.unchanged(q.verb(protocol.RequeueDead, "10", "", "", "30", "20", "", "")))
		// a cursor before min starts at min
		require.Equal(t, walk(1, 1, 0, ""), q.call(protocol.RequeueDead, "10", "5", "1", "40", "40", "", ""))
	})
	scenario(t, env, "the walk passes the jobs it does not take", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b", lane: "x"}, job{data: "c"}, job{data: "d", lane: "x"})
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Job("1"), "att"))
		q.do("ZADD", q.k.Dead, "XX", "10", "1", "20", "2", "30", "3", "40", "4")
		require.Equal(t, walk(1, 2, 20, "2"), q.call(protocol.RequeueDead, "2", "", "", "0", maxScore, "x", ""))
		require.Equal(t, walk(1, 2, 0, ""), q.call(protocol.RequeueDead, "2", "20", "2", "0", maxScore, "x", ""))
		require.Equal(t, Bulks("1", "3"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
	})
	scenario(t, env, "a member not dead by its row stays", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"})
		q.do("HSET", q.k.Job("1"), "state", "pending")
		q.do("ZADD", q.k.Dead, "0", "x", "0", "99")
		require.Equal(t, walk(1, 4, 0, ""), q.call(protocol.RequeueDead, deadFilter("10", "", "")...))
		require.Equal(t, Bulks("99", "x", "1"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
	})
	scenario(t, env, "a child is detached, a parent loses cfail", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "c", parent: "1", attempts: "1"})
		c := q.claimOne()
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "0", "x"))
		require.Equal(t, Bulks("dead", "2"), q.r("HMGET", q.k.Job("1"), "state", "cfail"))
		require.Equal(t, walk(2, 2, 0, ""), q.call(protocol.RequeueDead, deadFilter("10", "", "")...))
		require.Equal(t, "[(nil), (nil), (nil)]", q.r("HMGET", q.k.Job("2"), "parent", "onfail", "cfail"))
		require.Equal(t, "[(nil)]", q.r("HMGET", q.k.Job("1"), "cfail"))
		require.Equal(t, Bulks("1", "2"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
	})
	scenario(t, env, "events", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Events, "100")
		q.deadJobs(job{data: "a"}, job{data: "b"})
		q.do("DEL", q.k.Fixed(protocol.SuffixEvents))
		require.Equal(t, walk(2, 2, 0, ""), q.call(protocol.RequeueDead, deadFilter("10", "", "")...))
		require.Equal(t, []string{entry(event("requeued", "1"), event("requeued", "2"))}, q.eventLog())
	})
	scenario(t, env, "the counter is predicted", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"})
		q.do("HSET", q.k.Stats, "requeued", "9223372036854775806")
		q.refuse(protocol.ErrOverflow, q.verb(protocol.RequeueDead, deadFilter("10", "", "")...))
		q.do("HSET", q.k.Stats, "requeued", "x")
		q.refuse(protocol.ErrHashNotInteger, q.verb(protocol.RequeueDead, deadFilter("10", "", "")...))
	})
	scenario(t, env, "a later denied row refuses the whole call", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"})
		user := q.as(map[string]string{classRows: ""}, "%RW~"+q.k.Job("1"))
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.RequeueDead, deadFilter("10", "", "")...))
	})
}
