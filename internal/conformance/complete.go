package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testComplete: EMQ.COMPLETE deletes an active job, its logs and its unique
// key, and counts it.
func testComplete(t *testing.T, env Env) {
	scenario(t, env, "completes", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		require.Equal(t, Int(1), q.call(protocol.Log, c.id, c.token(), "line", "10"))
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job(c.id), q.k.Logs(c.id)))
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Active))
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Stats, "completed"))
	})
	scenario(t, env, "twice: the row is gone", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Complete, c.id, c.token(), "")))
	})
	scenario(t, env, "logs of any type are deleted", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.do("SET", q.k.Logs(c.id), "planted")
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Logs(c.id)))
	})
	scenario(t, env, "the unique key is released", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", unique: "u"})
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Unique("u")))
	})
	scenario(t, env, "a unique key held by another job stays", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", unique: "u"})
		q.do("SET", q.k.Unique("u"), "99")
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		require.Equal(t, Bulk("99"), q.r("GET", q.k.Unique("u")))
	})
	for _, token := range []string{"2", "0", ""} {
		scenario(t, env, "stale token "+quote(token), func(t *testing.T, q *queue) {
			c := q.active(job{data: "a"})
			q.refuse(protocol.ErrStale("complete"), q.verb(protocol.Complete, c.id, token, ""))
		})
	}
	scenario(t, env, "not active", func(t *testing.T, q *queue) {
		q.install()
		id := q.addOne("a")
		q.refuse(protocol.ErrNotActive("complete"), q.verb(protocol.Complete, id, "0", ""))
	})
	scenario(t, env, "not active once dead", func(t *testing.T, q *queue) {
		id := q.dead(job{data: "a"})
		q.refuse(protocol.ErrNotActive("complete"), q.verb(protocol.Complete, id, "1", ""))
	})
	scenario(t, env, "gone row", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Complete, "1", "1", "")))
	})
}
