package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testLaneRead: LANE and LANES.
func testLaneRead(t *testing.T, env Env) {
	scenario(t, env, "lane never used", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, laneReply(0, 0, 0, 0), q.unchanged(q.verb(protocol.Lane, "x")))
		require.Equal(t, []string{q.k.Version}, keysOf(q.snapshot()))
	})
	scenario(t, env, "lanes in pages", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "b1", lane: "b"}, job{data: "b2", lane: "b"}, job{data: "c1", lane: "c"})
		q.must(protocol.LaneCap, "b", "7")
		q.must(protocol.LanePause, "c")
		q.must(protocol.LaneCap, "z", "1")   // a setting is no job
		require.Len(t, q.claim(30000, 1), 1) // a1
		a, b, c := laneEntry("a", 0, 1, 0, 0), laneEntry("b", 2, 0, 7, 0), laneEntry("c", 1, 0, 0, 1)
		require.Equal(t, Arr(a, b), q.unchanged(q.verb(protocol.Lanes, "", "2")))
		require.Equal(t, Arr(c), q.unchanged(q.verb(protocol.Lanes, "b", "2")))
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Lanes, "c", "2")))
		require.Equal(t, Arr(b, c), q.unchanged(q.verb(protocol.Lanes, "aa", "1000")))
		require.Equal(t, Arr(a, b, c), q.unchanged(q.verb(protocol.Lanes, "", "1000")))
		require.Equal(t, Arr(a), q.unchanged(q.verb(protocol.Lanes, "\x00", "1")))
		require.Equal(t, statsReplyWith(0, 0, 1, 0, false, [6]int64{3, 3, 0, 0}, "4"), q.call(protocol.Stats))
	})
	scenario(t, env, "no lanes", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Lanes, "", "10")))
	})
	scenario(t, env, "lane counts as stored", func(t *testing.T, q *queue) {
		q.install()
		q.do("HSET", q.fixed(protocol.SuffixLaneInfo), "active:a", "012", "cap:a", "1000001", "paused:a", "1")
		q.do("ZADD", q.laneKey("a"), "0", "9")
		q.do("ZADD", q.fixed(protocol.SuffixLanes), "0", "a")
		require.Equal(t, laneReply(1, 0, 1000001, 1), q.call(protocol.Lane, "a"))
		require.Equal(t, Arr(laneEntry("a", 1, 0, 1000001, 1)), q.call(protocol.Lanes, "", "5"))
	})
}
