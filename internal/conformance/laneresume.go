package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testLaneResume: LANERESUME lets CLAIM serve a paused lane again, puts it
// back in turns when it is ready and wakes workers when turns was empty;
// it replies 0 and writes nothing for a lane that is not paused.
// LANEPAUSE's scenarios (lanepause.go) resume the lanes they pause too.
func testLaneResume(t *testing.T, env Env) {
	scenario(t, env, "resume with turns not empty does not signal", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "b1", lane: "b"})
		q.must(protocol.LanePause, "a")
		q.do("DEL", q.k.Signal)
		require.Equal(t, Int(1), q.call(protocol.LaneResume, "a"))
		require.Equal(t, Bulks("a", "0", "b", "0"), q.turnsOf())
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal))
	})
	scenario(t, env, "a lane at its cap stays out of turns", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"})
		q.must(protocol.LaneCap, "a", "1")
		require.Equal(t, claims("1", "a1"), q.call(protocol.Claim, "600000", "10"))
		require.Equal(t, Int(1), q.call(protocol.LanePause, "a"))
		q.do("DEL", q.k.Signal)
		require.Equal(t, Int(1), q.call(protocol.LaneResume, "a"))
		require.ElementsMatch(t, []string{"cap:a", "1", "active:a", "1"}, q.laneinfo())
		require.Equal(t, laneReply(1, 1, 1, 0), q.call(protocol.Lane, "a"))
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal))
	})
	scenario(t, env, "a capped lane stays counted in lanesets", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.LaneCap, "a", "3")
		q.must(protocol.LanePause, "a")
		require.Equal(t, []string{protocol.MetaLaneSets, "1"}, q.hgetall(q.k.Meta))
		require.Equal(t, Int(1), q.call(protocol.LaneResume, "a"))
		require.Equal(t, []string{"cap:a", "3"}, q.laneinfo())
		require.Equal(t, []string{protocol.MetaLaneSets, "1"}, q.hgetall(q.k.Meta))
	})
	scenario(t, env, "a lane not paused: 0, nothing written", func(t *testing.T, q *queue) {
		q.install()
		q.laned("a", "a1")
		q.must(protocol.LaneCap, "a", "2")
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.LaneResume, "a")))
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.LaneResume, "b")), "a lane never used")
		q.must(protocol.LanePause, "a")
		require.Equal(t, Int(1), q.call(protocol.LaneResume, "a"))
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.LaneResume, "a")), "resumed already")
	})
	scenario(t, env, "the fence before the lane keys", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.LanePause, "a")
		q.plant(q.fixed(protocol.SuffixLaneInfo), "hash")
		q.do("DEL", q.k.Version)
		q.refuse(protocol.ErrWireMissing, q.verb(protocol.LaneResume, "a"))
	})
	scenario(t, env, "laneinfo of another type", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.LanePause, "a")
		q.plant(q.fixed(protocol.SuffixLaneInfo), "hash")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.LaneResume, "a"))
	})
	scenario(t, env, "an empty lane name before the fence", func(t *testing.T, q *queue) {
		q.install()
		q.do("DEL", q.k.Version)
		q.refuse(protocol.ErrBadArg(protocol.LaneResume.Name, "lane"), q.verb(protocol.LaneResume, ""))
	})
}
