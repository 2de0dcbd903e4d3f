package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testLog: EMQ.LOG appends a line to a job's log, keeping the last cap.
func testLog(t *testing.T, env Env) {
	scenario(t, env, "keeps the last cap lines", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		for i, want := range []int64{1, 2, 3, 3, 3} {
			require.Equal(t, Int(want), q.call(protocol.Log, c.id, c.token(), "line "+string(rune('a'+i)), "3"))
		}
		require.Equal(t, Bulks("line c", "line d", "line e"), q.r("LRANGE", q.k.Logs(c.id), "0", "-1"))
	})
	scenario(t, env, "a smaller cap trims", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		for range 4 {
			q.must(protocol.Log, c.id, c.token(), "x", "10")
		}
		require.Equal(t, Int(2), q.call(protocol.Log, c.id, c.token(), "last", "2"))
		require.Equal(t, Bulks("x", "last"), q.r("LRANGE", q.k.Logs(c.id), "0", "-1"))
	})
	scenario(t, env, "an empty line", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		require.Equal(t, Int(1), q.call(protocol.Log, c.id, c.token(), "", "1"))
		require.Equal(t, Bulks(""), q.r("LRANGE", q.k.Logs(c.id), "0", "-1"))
	})
	scenario(t, env, "any job with its token", func(t *testing.T, q *queue) {
		q.install()
		id := q.addOne("a")
		require.Equal(t, Int(1), q.call(protocol.Log, id, "0", "queued", "5"), "LOG checks the token, not the state")
	})
	scenario(t, env, "stale token", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.refuse(protocol.ErrStale("log"), q.verb(protocol.Log, c.id, "0", "x", "10"))
	})
	scenario(t, env, "gone row", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Log, "1", "1", "x", "10")))
	})
}
