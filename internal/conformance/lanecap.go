package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testLaneCaps: a lane's cap bounds its active jobs; a freed slot
// re-admits it, with a signal.
func testLaneCaps(t *testing.T, env Env) {
	capped := func(q *queue) {
		q.install()
		require.Equal(t, Int(1), q.call(protocol.LaneCap, "a", "1"))
		require.Equal(t, []string{"cap:a", "1"}, q.laneinfo())
		q.add(job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"}, job{data: "b1", lane: "b"})
		require.Equal(t, claims("1", "a1", "3", "b1"), q.call(protocol.Claim, "30000", "10"))
		require.Equal(t, []string{"cap:a", "1", "active:a", "1", "active:b", "1"}, q.laneinfo())
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)), "a is at its cap")
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "10")))
		q.do("DEL", q.k.Signal)
	}
	readmitted := func(q *queue, turn string) {
		q.t.Helper()
		require.Equal(t, Bulks("a", turn), q.turnsOf())
		require.Equal(t, Bulks("1"), q.signalOf())
	}
	scenario(t, env, "complete re-admits", func(t *testing.T, q *queue) {
		capped(q)
		require.Equal(t, Int(1), q.call(protocol.Complete, "1", "1", ""))
		readmitted(q, "2")
		require.Equal(t, []string{"cap:a", "1", "active:b", "1"}, q.laneinfo())
		require.Equal(t, laneReply(1, 0, 1, 0), q.call(protocol.Lane, "a"))
		require.Equal(t, claims("2", "a2"), q.call(protocol.Claim, "30000", "10"))
	})
	scenario(t, env, "completemany re-admits", func(t *testing.T, q *queue) {
		capped(q)
		require.Equal(t, outcomes(1, 1), q.call(protocol.CompleteMany, "2", "1", "1", "", "3", "1", ""))
		readmitted(q, "2")
		require.Equal(t, []string{"cap:a", "1"}, q.laneinfo())
		require.Equal(t, Bulks("a"), q.lanesOf())
	})
	scenario(t, env, "fail with a retry re-admits", func(t *testing.T, q *queue) {
		capped(q)
		require.Equal(t, Bulk(protocol.FailRetry), q.call(protocol.Fail, "1", "1", "1", "x"))
		readmitted(q, "2")
		require.Equal(t, Bulk("a"), q.r("HGET", q.k.Job("1"), "lane"))
	})
	scenario(t, env, "fail to dead re-admits", func(t *testing.T, q *queue) {
		capped(q)
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, "1", "1", "0", "x"))
		readmitted(q, "2")
	})
	scenario(t, env, "recover re-admits", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.LaneCap, "a", "1")
		q.add(job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"})
		require.Len(t, q.claim(1, 10), 1)
		pause(leaseWait)
		q.do("DEL", q.k.Signal)
		require.Equal(t, Arr(Int(1), Int(0)), q.call(protocol.Recover, "10"))
		readmitted(q, "1")
		require.Equal(t, laneReply(2, 0, 1, 0), q.call(protocol.Lane, "a"))
		require.Equal(t, Bulks("1", "2"), q.r("ZRANGE", q.laneKey("a"), "0", "-1"))
		require.Equal(t, Arr(Bulk("1"), Nil, Bulk("2")), q.turnMeta())
	})
	scenario(t, env, "lanecap set, kept, cleared", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(1), q.call(protocol.LaneCap, "a", "3"))
		require.Equal(t, []string{"cap:a", "3"}, q.laneinfo())
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixLanes)), "a cap is no job")
		require.Equal(t, Int(1), q.unchanged(q.verb(protocol.LaneCap, "a", "3")))
		require.Equal(t, Int(1), q.call(protocol.LaneCap, "a", "1000000"))
		require.Equal(t, []string{"cap:a", "1000000"}, q.laneinfo())
		require.Equal(t, Int(1), q.call(protocol.LaneCap, "a", "0"))
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixLaneInfo)))
		require.Equal(t, Int(1), q.unchanged(q.verb(protocol.LaneCap, "a", "0")))
		require.Equal(t, laneReply(0, 0, 0, 0), q.call(protocol.Lane, "a"))
	})
	scenario(t, env, "lanecap below the active count", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"}, job{data: "a3", lane: "a"})
		require.Len(t, q.claim(30000, 2), 2)
		require.Equal(t, Bulks("a", "2"), q.turnsOf())
		require.Equal(t, Int(1), q.call(protocol.LaneCap, "a", "1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)))
		require.Equal(t, laneReply(1, 2, 1, 0), q.call(protocol.Lane, "a"))
		q.do("DEL", q.k.Signal)
		require.Equal(t, Int(1), q.call(protocol.Complete, "1", "1", ""))
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)), "1 active is still the cap")
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal))
		require.Equal(t, Int(1), q.call(protocol.Complete, "2", "1", ""))
		require.Equal(t, Bulks("a", "2"), q.turnsOf())
		require.Equal(t, Bulks("1"), q.signalOf())
	})
	scenario(t, env, "raising or clearing the cap re-admits", func(t *testing.T, q *queue) {
		capped(q)
		require.Equal(t, Int(1), q.call(protocol.LaneCap, "a", "2"))
		readmitted(q, "2")
		q.do("DEL", q.k.Signal)
		require.Len(t, q.claim(30000, 1), 1)
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)))
		require.Equal(t, Int(1), q.call(protocol.LaneCap, "a", "0"))
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)), "no job waits in a")
		require.Equal(t, []string{"active:a", "2", "active:b", "1"}, q.laneinfo())
	})
	scenario(t, env, "a cap as stored", func(t *testing.T, q *queue) {
		q.install()
		q.laned("a", "a1")
		q.do("HSET", q.fixed(protocol.SuffixLaneInfo), "cap:a", "x", "active:a", "5")
		require.Equal(t, laneReply(1, 5, 0, 0), q.call(protocol.Lane, "a"), "a cap that is not a number is no cap")
		require.Equal(t, Int(1), q.call(protocol.LaneCap, "a", "0"))
		require.Equal(t, []string{"active:a", "5"}, q.laneinfo())
	})
}
