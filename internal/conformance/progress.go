package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testProgress: EMQ.PROGRESS stores a job's progress value.
func testProgress(t *testing.T, env Env) {
	scenario(t, env, "stores and overwrites", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		require.Equal(t, Int(1), q.call(protocol.Progress, c.id, c.token(), "10%"))
		require.Equal(t, Bulk("10%"), q.r("HGET", q.k.Job(c.id), "prog"))
		require.Equal(t, Int(1), q.call(protocol.Progress, c.id, c.token(), ""))
		require.Equal(t, Bulk(""), q.r("HGET", q.k.Job(c.id), "prog"))
	})
	scenario(t, env, "stale token", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.refuse(protocol.ErrStale("progress"), q.verb(protocol.Progress, c.id, "2", "x"))
	})
	scenario(t, env, "gone row", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Progress, "1", "1", "x")))
	})
}
