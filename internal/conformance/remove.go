package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testRemove: EMQ.REMOVE deletes a job no worker holds.
func testRemove(t *testing.T, env Env) {
	removed := func(q *queue, id, set string) {
		q.t.Helper()
		require.Equal(t, Int(1), q.call(protocol.Remove, id, "0"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job(id), q.k.Logs(id), set))
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Stats, "removed"))
	}
	scenario(t, env, "pending", func(t *testing.T, q *queue) {
		q.install()
		removed(q, q.addOne("a"), q.k.Pending)
	})
	scenario(t, env, "delayed", func(t *testing.T, q *queue) {
		q.install()
		removed(q, q.add(job{data: "a", delay: "60000"})[0], q.k.Delayed)
	})
	scenario(t, env, "dead, with its logs", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", attempts: "1"})
		q.must(protocol.Log, c.id, c.token(), "line", "10")
		q.must(protocol.Fail, c.id, c.token(), "1", "x")
		removed(q, c.id, q.k.Dead)
	})
	scenario(t, env, "keeps the other jobs", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		require.Equal(t, Int(1), q.call(protocol.Remove, "1", "0"))
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
	})
	scenario(t, env, "active", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.refuse(protocol.ErrRemoveActive, q.verb(protocol.Remove, c.id, "0"))
	})
	scenario(t, env, "gone row", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Remove, "1", "0")))
	})
	scenario(t, env, "the unique key is released", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", unique: "u"})[0]
		require.Equal(t, Int(1), q.call(protocol.Remove, id, "0"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Unique("u")))
	})
	scenario(t, env, "a state naming no set", func(t *testing.T, q *queue) {
		q.install()
		id := q.addOne("a")
		q.do("HSET", q.k.Job(id), "state", "queued")
		q.plant(q.k.Delayed, "zset")
		require.Equal(t, Int(1), q.call(protocol.Remove, id, "0"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job(id)))
		require.Equal(t, Bulks(id), q.r("ZRANGE", q.k.Pending, "0", "-1"), "no set is touched")
	})
}
