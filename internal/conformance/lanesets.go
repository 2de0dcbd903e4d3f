package conformance

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testLaneSets: meta lanesets, the count of the lanes with a cap or a
// pause that LANECAP, LANEPAUSE and LANERESUME keep, read like a row's
// number (absent or not a count: 0), and CLAIM's reads by it: at 0 only the
// lanes' active counts, else their settings too.
func testLaneSets(t *testing.T, env Env) {
	sets := func(q *queue) string {
		q.t.Helper()
		return q.r("HGET", q.k.Meta, protocol.MetaLaneSets)
	}
	scenario(t, env, "caps and pauses counted once a lane", func(t *testing.T, q *queue) {
		q.install()
		steps := []struct {
			v    *protocol.Verb
			args []string
			want string
		}{
			{protocol.LaneCap, []string{"a", "3"}, "1"},
			{protocol.LaneCap, []string{"a", "5"}, "1"}, // a cap changed
			{protocol.LaneCap, []string{"a", "5"}, "1"}, // kept
			{protocol.LanePause, []string{"a"}, "1"},    // capped and paused: one lane
			{protocol.LanePause, []string{"b"}, "2"},
			{protocol.LanePause, []string{"b"}, "2"}, // already paused
			{protocol.LaneCap, []string{"c", "1"}, "3"},
			{protocol.LaneResume, []string{"a"}, "3"}, // still capped
			{protocol.LaneCap, []string{"a", "0"}, "2"},
			{protocol.LaneCap, []string{"a", "0"}, "2"}, // no cap to clear
			{protocol.LaneResume, []string{"a"}, "2"},   // not paused
			{protocol.LaneResume, []string{"b"}, "1"},
			{protocol.LaneCap, []string{"c", "0"}, "0"},
			{protocol.LaneCap, []string{"d", "0"}, "0"},
		}
		for i, s := range steps {
			q.call(s.v, s.args...)
			require.Equal(t, Bulk(s.want), sets(q), "step %d: %s %v", i, s.v.Name, s.args)
			q.laneSetsInvariant(s.v.Name)
		}
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixLaneInfo)))
	})
	scenario(t, env, "a setting verb that changes nothing writes nothing", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.LaneCap, "a", "2")
		require.Equal(t, Int(1), q.unchanged(q.verb(protocol.LaneCap, "a", "2")))
		require.Equal(t, Int(1), q.unchanged(q.verb(protocol.LaneCap, "b", "0")))
		q.must(protocol.LanePause, "a")
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.LanePause, "a")))
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.LaneResume, "b")))
		require.Equal(t, Bulk("1"), sets(q))
	})
	scenario(t, env, "an absent count or one that is not a count reads 0", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(1), q.call(protocol.LaneCap, "a", "0"))
		require.Equal(t, Bulk("0"), sets(q), "absent: 0, written as read")
		q.laned("a", "a1")
		q.laned("b", "b1")
		q.do("HSET", q.fixed(protocol.SuffixLaneInfo), "cap:z", "5")
		for _, stored := range []string{"", "x", "01", "-1", "1000000000000000"} {
			q.do("HDEL", q.k.Meta, protocol.MetaLaneSets)
			if stored != "" {
				q.do("HSET", q.k.Meta, protocol.MetaLaneSets, stored)
			}
			q.do("HDEL", q.fixed(protocol.SuffixLaneInfo), "paused:b")
			require.Equal(t, Int(1), q.call(protocol.LanePause, "b"))
			require.Equal(t, Bulk("1"), sets(q), "lanesets %q with laneinfo's fields: counted from 0", stored)
		}
	})
	scenario(t, env, "a claim writes no count", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"}, job{data: "a3", lane: "a"})
		require.Len(t, q.claim(30000, 1), 1)
		require.Equal(t, Nil, sets(q), "laneinfo was empty")
		require.Len(t, q.claim(30000, 1), 1)
		require.Equal(t, Nil, sets(q), "active:a was in laneinfo")
		q.do("HSET", q.k.Meta, protocol.MetaLaneSets, "x")
		require.Len(t, q.claim(30000, 1), 1)
		require.Equal(t, Bulk("x"), sets(q), "not a count: left as stored")
		require.Equal(t, []string{"active:a", "3"}, q.laneinfo())
		q.laned("b", "b1")
		q.do("DEL", q.k.Job("4"))
		q.do("SET", q.k.Job("4"), "x")
		q.do("HDEL", q.k.Meta, protocol.MetaLaneSets)
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Claim, "30000", "10"))
	})
	scenario(t, env, "a cap cleared while its jobs are active", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.LaneCap, "a", "1")
		q.add(job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"}, job{data: "a3", lane: "a"})
		require.Equal(t, claims("1", "a1"), q.call(protocol.Claim, "30000", "10"))
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "10")), "at its cap")
		require.Equal(t, Int(1), q.call(protocol.LaneCap, "a", "0"))
		require.Equal(t, Bulk("0"), sets(q))
		require.Equal(t, claims("2", "a2", "3", "a3"), q.call(protocol.Claim, "30000", "10"))
		require.Equal(t, []string{"active:a", "3"}, q.laneinfo())
		q.laneInvariants([]string{"a"}, "after the claims")
		require.Equal(t, Int(1), q.call(protocol.Complete, "1", "1", ""))
		require.Equal(t, []string{"active:a", "2"}, q.laneinfo())
	})
	scenario(t, env, "a cap and a pause planted while the count reads 0 are not read", func(t *testing.T, q *queue) {
		q.install()
		for i, stored := range []string{"0", "", "x", "01", "-1"} {
			a, b := "a"+strconv.Itoa(i), "b"+strconv.Itoa(i)
			q.do("HDEL", q.k.Meta, protocol.MetaLaneSets)
			if stored != "" {
				q.do("HSET", q.k.Meta, protocol.MetaLaneSets, stored)
			}
			q.add(job{data: "a1", lane: a}, job{data: "a2", lane: a}, job{data: "b1", lane: b})
			q.do("HSET", q.fixed(protocol.SuffixLaneInfo), "cap:"+a, "1", "paused:"+b, "1")
			require.Len(t, q.claim(30000, 10), 3, "lanesets %q: neither the cap nor the pause is read", stored)
			require.Equal(t, laneReply(0, 2, 1, 0), q.call(protocol.Lane, a), "LANE reads the fields")
			require.Equal(t, laneReply(0, 1, 0, 1), q.call(protocol.Lane, b))
			if stored == "" {
				require.Equal(t, Nil, sets(q), "a claim does not count")
			} else {
				require.Equal(t, Bulk(stored), sets(q))
			}
		}
	})
	scenario(t, env, "a cap planted while the count is above 0 is read", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.LanePause, "p")
		require.Equal(t, Bulk("1"), sets(q))
		q.add(job{data: "d", lane: "a"}, job{data: "d", lane: "a"})
		q.do("HSET", q.fixed(protocol.SuffixLaneInfo), "cap:a", "1")
		require.Len(t, q.claim(30000, 10), 1, "the cap is honoured")
		require.Equal(t, laneReply(1, 1, 1, 0), q.call(protocol.Lane, "a"))
		require.Equal(t, Bulk("1"), sets(q))
	})
	scenario(t, env, "lanecap on planted settings counts from the count read", func(t *testing.T, q *queue) {
		q.install()
		q.laned("a", "a1")
		q.do("HSET", q.fixed(protocol.SuffixLaneInfo), "cap:a", "3")
		require.Equal(t, Nil, sets(q))
		require.Equal(t, Int(1), q.call(protocol.LaneCap, "b", "2"))
		require.Equal(t, Int(1), q.call(protocol.LanePause, "c"))
		require.Equal(t, Bulk("2"), sets(q), "absent: from 0; cap:a planted is not counted")
		require.Equal(t, []string{"cap:a", "3", "cap:b", "2", "paused:c", "1"}, q.laneinfo())
	})
	scenario(t, env, "the count never goes below 0", func(t *testing.T, q *queue) {
		q.install()
		q.laned("a", "a1")
		require.Len(t, q.claim(30000, 1), 1)
		require.Equal(t, Nil, sets(q))
		q.do("HSET", q.fixed(protocol.SuffixLaneInfo), "cap:a", "4", "paused:b", "1")
		require.Equal(t, Int(1), q.call(protocol.LaneCap, "a", "0"))
		require.Equal(t, Bulk("0"), sets(q))
		require.Equal(t, Int(1), q.call(protocol.LaneResume, "b"))
		require.Equal(t, Bulk("0"), sets(q))
		require.Equal(t, []string{"active:a", "1"}, q.laneinfo())
	})
}
