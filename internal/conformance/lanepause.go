package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testLanePause: LANEPAUSE and LANERESUME take a lane out of turns and
// back.
func testLanePause(t *testing.T, env Env) {
	scenario(t, env, "pause and resume a lane", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "b1", lane: "b"})
		require.Equal(t, Int(1), q.call(protocol.LanePause, "a"))
		require.Equal(t, []string{"paused:a", "1"}, q.laneinfo())
		require.Equal(t, Bulks("b", "0"), q.turnsOf())
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.LanePause, "a")))
		require.Equal(t, laneReply(1, 0, 0, 1), q.call(protocol.Lane, "a"))
		require.Equal(t, claims("2", "b1"), q.call(protocol.Claim, "30000", "10"))
		q.do("DEL", q.k.Signal)
		require.Equal(t, Int(1), q.call(protocol.LaneResume, "a"))
		require.Equal(t, []string{"active:b", "1"}, q.laneinfo(), "paused:a is gone")
		require.Equal(t, Bulks("a", "1"), q.turnsOf())
		require.Equal(t, Bulks("1"), q.signalOf())
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.LaneResume, "a")))
		require.Equal(t, claims("1", "a1"), q.call(protocol.Claim, "30000", "10"))
	})
	scenario(t, env, "an unused lane", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.LaneResume, "x")))
		require.Equal(t, Int(1), q.call(protocol.LanePause, "x"))
		require.ElementsMatch(t, []string{q.k.Version, q.k.Meta, q.fixed(protocol.SuffixLaneInfo)}, keysOf(q.snapshot()))
		require.Equal(t, []string{protocol.MetaLaneSets, "1"}, q.hgetall(q.k.Meta))
		require.Equal(t, laneReply(0, 0, 0, 1), q.call(protocol.Lane, "x"))
		require.Equal(t, Int(1), q.call(protocol.LaneResume, "x"))
		require.ElementsMatch(t, []string{q.k.Version, q.k.Meta}, keysOf(q.snapshot()))
		require.Equal(t, []string{protocol.MetaLaneSets, "0"}, q.hgetall(q.k.Meta))
	})
	scenario(t, env, "paused means exactly 1", func(t *testing.T, q *queue) {
		q.install()
		q.laned("a", "a1")
		q.do("HSET", q.fixed(protocol.SuffixLaneInfo), "paused:a", "yes")
		require.Equal(t, laneReply(1, 0, 0, 0), q.call(protocol.Lane, "a"))
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.LaneResume, "a")))
		require.Equal(t, Int(1), q.call(protocol.LanePause, "a"))
		require.Equal(t, []string{"paused:a", "1"}, q.laneinfo())
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)))
	})
	scenario(t, env, "a paused lane's jobs still count", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.LanePause, "a")
		q.laned("a", "a1")
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal), "no lane became ready")
		require.Equal(t, Bulks("a"), q.lanesOf())
		require.Equal(t, Arr(Nil, Nil, Bulk("1")), q.turnMeta())
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "5")))
	})
}
