package conformance

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testClaimBlock: CLAIM's fourth value, block_ms. Both executors check it
// alike; a call that finds a job answers it at once, and one that finds
// nothing answers the empty array and writes nothing (the Lua executor at
// once, the native one after blocking that long: the block times here are
// a few ms).
func testClaimBlock(t *testing.T, env Env) {
	v := protocol.Claim
	scenario(t, env, "claim bad block", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		bad := []string{"", "-1", "01", "+1", "1 ", "1.5", "x", "1\x00",
			strconv.Itoa(protocol.MaxBlockMS + 1), "1000000000000000"}
		for _, b := range bad {
			q.refuse(protocol.ErrBadArg("claim", "block"), q.verb(v, "600000", "1", "0", b))
			q.refuse(protocol.ErrBadArg("claim", "block"), q.verb(v, "600000", "1", protocol.ClaimExtended, b))
			q.refuse(protocol.ErrBadArg("claim", "block"), q.verb(v, "600000", "1", protocol.ClaimWaits, b))
		}
		// the values in order: lease, count, ext, then block
		q.refuse(protocol.ErrBadArg("claim", "ext"), q.verb(v, "600000", "1", "3", "x"))
		q.refuse(protocol.ErrBadArg("claim", "count"), q.verb(v, "600000", "0", "0", "x"))
		q.refuse(protocol.ErrArity("claim"), q.verb(v, "600000", "1", "0", "0", "0"))
	})
	scenario(t, env, "claim block 0 is the call without it", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Arr(), q.unchanged(q.verb(v, "600000", "1", "0", "0")))
		id := q.addOne("a")
		require.Equal(t, Arr(Arr(Bulk(id), Bulk("a"), Int(1))), q.call(v, "600000", "1", "0", "0"))
	})
	scenario(t, env, "claim block answers a ready job at once", func(t *testing.T, q *queue) {
		q.install()
		a, b := q.addOne("a"), q.addOne("b")
		max := strconv.Itoa(protocol.MaxBlockMS)
		require.Equal(t, Arr(Arr(Bulk(a), Bulk("a"), Int(1))), q.call(v, "600000", "1", "0", max))
		require.Equal(t, Arr(Arr(Bulk(b), Bulk("b"), Int(1), Int(3), Nil, Int(0), Nil, Nil)),
			q.call(v, "600000", "5", protocol.ClaimExtended, max))
	})
	scenario(t, env, "claim block on an empty queue", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Arr(), q.unchanged(q.verb(v, "600000", "1", "0", "5")))
		// pending emptied by claims
		q.addOne("a")
		q.claimOne()
		require.Equal(t, Arr(), q.unchanged(q.verb(v, "600000", "3", protocol.ClaimExtended, "3")))
	})
	scenario(t, env, "claim block on a paused queue", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		q.must(protocol.Pause)
		require.Equal(t, Arr(), q.unchanged(q.verb(v, "600000", "1", "0", "5")))
	})
	scenario(t, env, "claim block with the lanes at their caps", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.LaneCap, "l", "1")
		q.add(job{data: "a", lane: "l"}, job{data: "b", lane: "l"})
		require.Len(t, q.claim(600000, 5), 1)
		require.Equal(t, Arr(), q.unchanged(q.verb(v, "600000", "1", "0", "5")))
	})
}
