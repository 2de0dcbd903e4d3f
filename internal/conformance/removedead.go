package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testRemoveDead: EMQ.REMOVEDEAD is REMOVE for the dead jobs a filter takes.
func testRemoveDead(t *testing.T, env Env) {
	scenario(t, env, "removes dead jobs older than max", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", unique: "u"}, job{data: "b"}, job{data: "c"})
		q.do("ZADD", q.k.Dead, "XX", "10", "1", "20", "2", "30", "3")
		q.do("RPUSH", q.k.Logs("1"), "line")
		q.do("SET", q.k.Unique("u"), "1")
		require.Equal(t, walk(1, 1, 10, "1"), q.call(protocol.RemoveDead, "1", "", "", "0", "20", "", ""))
		require.Equal(t, walk(1, 1, 0, ""), q.call(protocol.RemoveDead, "1", "10", "1", "0", "20", "", ""))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("1"), q.k.Logs("1"), q.k.Unique("u"), q.k.Job("2")))
		require.Equal(t, Bulks("3"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, Bulk("2"), q.r("HGET", q.k.Stats, "removed"))
		require.Equal(t, Int(1), q.r("EXISTS", q.k.Job("3")))
	})
	scenario(t, env, "a unique key held by another job stays", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", unique: "u"})
		q.do("SET", q.k.Unique("u"), "7")
		require.Equal(t, walk(1, 1, 0, ""), q.call(protocol.RemoveDead, deadFilter("10", "", "")...))
		require.Equal(t, Bulk("7"), q.r("GET", q.k.Unique("u")))
	})
	scenario(t, env, "by lane and error", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", lane: "x"}, job{data: "b", lane: "x"}, job{data: "c"})
		q.do("HSET", q.k.Job("2"), "err", "disk full")
		require.Equal(t, walk(1, 3, 0, ""), q.call(protocol.RemoveDead, deadFilter("10", "x", "full")...))
		require.Equal(t, Bulks("1", "3"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("2")))
	})
	scenario(t, env, "rowless members leave dead uncounted", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"})
		q.do("ZADD", q.k.Dead, "0", "x", "0", "99")
		q.do("HSET", q.k.Job("99"), "data", "no att")
		require.Equal(t, walk(0, 2, 0, "x"), q.call(protocol.RemoveDead, "2", "", "", "0", maxScore, "lane", ""))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, Bulk("no att"), q.r("HGET", q.k.Job("99"), "data"), "a row without att is left as it is")
		require.Equal(t, Nil, q.r("HGET", q.k.Stats, "removed"))
	})
	scenario(t, env, "a member not dead by its row stays", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"})
		q.do("HSET", q.k.Job("1"), "state", "pending")
		require.Equal(t, walk(0, 1, 0, ""), q.unchanged(q.verb(protocol.RemoveDead, deadFilter("10", "", "")...)))
	})
	scenario(t, env, "a dead parent's flow keys go with it", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "c", parent: "1", attempts: "1", onfail: protocol.OnFailContinue},
			job{data: "d", parent: "1", attempts: "1"})
		for _, c := range q.claim(600000, 2) {
			require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "0", "x"+c.id))
		}
		require.Equal(t, Bulk("dead"), q.r("HGET", q.k.Job("1"), "state"))
		require.Equal(t, Int(2), q.r("EXISTS", q.k.Kids("1"), q.k.Failures("1")))
		require.Equal(t, walk(3, 3, 0, ""), q.call(protocol.RemoveDead, deadFilter("10", "", "")...))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("1"), q.k.Kids("1"), q.k.Failures("1"), q.k.Job("2"), q.k.Job("3")))
		require.Equal(t, Bulk("3"), q.r("HGET", q.k.Stats, "removed"))
	})
	scenario(t, env, "events", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Events, "100")
		q.deadJobs(job{data: "a"}, job{data: "b"})
		q.do("DEL", q.k.Fixed(protocol.SuffixEvents))
		require.Equal(t, walk(2, 2, 0, ""), q.call(protocol.RemoveDead, deadFilter("10", "", "")...))
		require.Equal(t, []string{entry(event("removed", "1"), event("removed", "2"))}, q.eventLog())
	})
	scenario(t, env, "the counter is predicted", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"})
		q.do("HSET", q.k.Stats, "removed", "9223372036854775807")
		q.refuse(protocol.ErrOverflow, q.verb(protocol.RemoveDead, deadFilter("10", "", "")...))
	})
	scenario(t, env, "a unique key read-only", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", unique: "u"})
		q.do("SET", q.k.Unique("u"), "1")
		user := q.as(map[string]string{classUnique: "R"})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.RemoveDead, deadFilter("10", "", "")...))
	})
	scenario(t, env, "a unique key of another type", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", unique: "u"})
		q.plant(q.k.Unique("u"), "string")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.RemoveDead, deadFilter("10", "", "")...))
	})
}
