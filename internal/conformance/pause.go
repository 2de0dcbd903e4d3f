package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testPause: EMQ.PAUSE stops claims; the jobs keep waiting.
func testPause(t *testing.T, env Env) {
	scenario(t, env, "pauses", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		require.Equal(t, Int(1), q.call(protocol.Pause))
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Meta, "paused"))
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "1")))
		require.Equal(t, Int(1), q.r("ZCARD", q.k.Pending))
	})
	scenario(t, env, "already paused", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Pause)
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Pause)))
	})
	scenario(t, env, "paused means exactly 1", func(t *testing.T, q *queue) {
		q.install()
		q.do("HSET", q.k.Meta, "paused", "true")
		require.Equal(t, Int(1), q.call(protocol.Pause))
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Meta, "paused"))
	})
	scenario(t, env, "keeps the sequence", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		q.must(protocol.Pause)
		require.Equal(t, Bulks("1", "1"), q.r("HMGET", q.k.Meta, "seq", "paused"))
	})
}
