package conformance

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Helpers of the lane scenarios.

// laneKey is the key of lane l's waiting jobs.
func (q *queue) laneKey(l string) string { return q.k.Lane(l) }

// fixed is the key of a fixed suffix (laneinfo, lanes, turns, rate).
func (q *queue) fixed(suffix string) string { return q.k.Fixed(suffix) }

// laned adds one job with data to lane l and returns its id.
func (q *queue) laned(l, data string) string {
	q.t.Helper()
	return q.add(job{data: data, lane: l})[0]
}

// turnsOf is turns as ZRANGE … WITHSCORES renders it in RESP2: members
// and scores, flat.
func (q *queue) turnsOf() string {
	q.t.Helper()
	v, err := q.env.Server.Do(q.t.Context(), "ZRANGE", q.fixed(protocol.SuffixTurns), "0", "-1", "WITHSCORES")
	require.NoError(q.t, err)
	items, ok := v.([]any)
	require.True(q.t, ok, "ZRANGE WITHSCORES: %#v", v)
	out := make([]string, len(items))
	for i, it := range items {
		out[i], ok = it.(string)
		require.True(q.t, ok, "ZRANGE WITHSCORES: %#v", v)
	}
	return Bulks(out...)
}

// lanesOf is the lanes registry as ZRANGE renders it.
func (q *queue) lanesOf() string { return q.r("ZRANGE", q.fixed(protocol.SuffixLanes), "0", "-1") }

// laneinfo is the laneinfo hash's fields and values, in hash order.
func (q *queue) laneinfo() []string { return q.hgetall(q.fixed(protocol.SuffixLaneInfo)) }

// turnMeta is HMGET meta turn pturn lanewait, rendered.
func (q *queue) turnMeta() string { return q.r("HMGET", q.k.Meta, "turn", "pturn", "lanewait") }

// claims renders CLAIM's reply for entries of first attempts: id and data
// pairs.
func claims(idData ...string) string {
	out := make([]string, 0, len(idData)/2)
	for i := 0; i+1 < len(idData); i += 2 {
		out = append(out, Arr(Bulk(idData[i]), Bulk(idData[i+1]), Int(1)))
	}
	return Arr(out...)
}

// laneReply is LANE's reply.
func laneReply(waiting, active, cap, paused int64) string {
	return Arr(Int(waiting), Int(active), Int(cap), Int(paused))
}

// laneEntry is one entry of LANES's reply.
func laneEntry(l string, waiting, active, cap, paused int64) string {
	return Arr(Bulk(l), Int(waiting), Int(active), Int(cap), Int(paused))
}

// signalOf is the signal list, rendered.
func (q *queue) signalOf() string { return q.r("LRANGE", q.k.Signal, "0", "-1") }

// testLaneAdd: ADD's option columns and its laned jobs.
func testLaneAdd(t *testing.T, env Env) {
	one := job{data: "a"}.args(nil)
	oneLaned := job{data: "a", lane: "l"}.args(laneCol)
	arity, badOptions, badOption := protocol.ErrArity("add"), protocol.ErrBadArg("add", "options"), protocol.ErrBadArg("add", "option")
	with := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		argv []string
		want string
	}{
		{"count alone", []string{"1"}, arity},
		{"bad count before options", []string{"0", "x"}, protocol.ErrBadArg("add", "count")},
		{"options 9", with([]string{"1", "9"}, one), badOptions},
		{"options -1", with([]string{"1", "-1"}, one), badOptions},
		{"options 01", with([]string{"1", "01"}, one), badOptions},
		{"options empty", with([]string{"1", ""}, one), badOptions},
		{"options word", with([]string{"1", "lane"}, one), badOptions},
		{"options 1 with a space", with([]string{"1", "1 "}, one), badOptions},
		{"options alone", []string{"1", "9"}, badOptions},
		{"options 1 without the column", with([]string{"1", "1"}, one), arity},
		{"options 1 without the values", with([]string{"1", "1", "lane"}, one), arity},
		{"options 0 with a lane value", with([]string{"1", "0"}, oneLaned), arity},
		{"options 8 short", with([]string{"1", "8", "lane"}, one), arity},
		{"two jobs, one lane value", with([]string{"2", "1", "lane"}, oneLaned, one), arity},
		{"option Lane", with([]string{"1", "1", "Lane"}, oneLaned), badOption},
		{"option unknown", with([]string{"1", "1", "x"}, oneLaned), badOption},
		{"option empty", with([]string{"1", "1", ""}, oneLaned), badOption},
		{"option lane with a NUL", with([]string{"1", "1", "lane\x00"}, oneLaned), badOption},
		{"option repeated", with([]string{"1", "2", "lane", "lane"}, oneLaned, []string{"l"}), badOption},
		{"option unknown after lane", with([]string{"1", "2", "lane", "x"}, oneLaned, []string{"l"}), badOption},
		{"option before the values", with([]string{"1", "1", "x", "a", "1001", "0", "3", "fixed", "0", "", "0", "l"}), badOption},
		{"lane of 129 bytes", with([]string{"1", "1", "lane"}, job{data: "a", lane: strings.Repeat("l", 129)}.args(laneCol)), protocol.ErrBadArg("add", "lane")},
		{"unique_ttl before lane", with([]string{"1", "1", "lane"}, job{data: "a", unique: "u", uniqueTTL: "0", lane: strings.Repeat("l", 129)}.args(laneCol)), protocol.ErrBadArg("add", "unique_ttl")},
		{"lane job by job", with([]string{"2", "1", "lane"}, job{data: "a", lane: strings.Repeat("l", 129)}.args(laneCol), job{data: "b", prio: "1001"}.args(laneCol)), protocol.ErrBadArg("add", "lane")},
		{"a later job's lane", with([]string{"2", "1", "lane"}, job{data: "a", lane: "l"}.args(laneCol), job{data: "b", lane: strings.Repeat("l", 129)}.args(laneCol)), protocol.ErrBadArg("add", "lane")},
	} {
		scenario(t, env, tc.name, func(t *testing.T, q *queue) {
			fixtures[protocol.Add](q)
			q.refuse(tc.want, q.verb(protocol.Add, tc.argv...))
		})
	}
	scenario(t, env, "bad options before layout", func(t *testing.T, q *queue) {
		fixtures[protocol.Add](q)
		keys := protocol.Add.KeyNames(q.k)
		keys[2] = "bad"
		q.refuse(badOptions, q.keys(protocol.Add, keys, with([]string{"1", "9"}, one)...))
	})
	scenario(t, env, "layout before bad option", func(t *testing.T, q *queue) {
		fixtures[protocol.Add](q)
		keys := protocol.Add.KeyNames(q.k)
		keys[2] = "bad"
		q.refuseKeys(protocol.ErrLayout("add"), keys, q.keys(protocol.Add, keys, with([]string{"1", "1", "x"}, oneLaned)...))
	})
	scenario(t, env, "bad option before the fence", func(t *testing.T, q *queue) {
		fixtures[protocol.Add](q)
		q.do("DEL", q.k.Version)
		q.refuse(badOption, q.verb(protocol.Add, with([]string{"1", "1", "x"}, oneLaned)...))
	})
	scenario(t, env, "bad lane before the fence", func(t *testing.T, q *queue) {
		fixtures[protocol.Add](q)
		q.do("DEL", q.k.Version)
		q.refuse(protocol.ErrBadArg("add", "lane"), q.verb(protocol.Add, addArgs(job{data: "a", lane: strings.Repeat("l", 129)})...))
	})

	scenario(t, env, "a laned job waits in its lane", func(t *testing.T, q *queue) {
		q.install()
		t0 := q.now()
		require.Equal(t, Bulks("1"), q.call(protocol.Add, "1", "1", "lane", "payload", "7", "0", "5", "fixed", "0", "", "0", "tenant"))
		t1 := q.now()
		row := q.hgetall(q.k.Job("1"))
		require.Len(t, row, 14)
		require.Equal(t, []string{"data", "payload", "att", "0", "max", "5", "prio", "7",
			"bo", "fixed:0", "at"}, row[:11], "state pending, its default, left out")
		at, err := strconv.ParseInt(row[11], 10, 64)
		require.NoError(t, err)
		within(t, at, t0, t1, "at")
		require.Equal(t, []string{"lane", "tenant"}, row[12:])
		require.Equal(t, protocol.PendingScore(7, 1), q.score(q.laneKey("tenant"), "1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending))
		require.Equal(t, Bulks("tenant"), q.lanesOf())
		require.Equal(t, Bulks("tenant", "0"), q.turnsOf())
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixLaneInfo)), "no active job, no cap: no field")
		require.Equal(t, []string{"seq", "1", protocol.MetaRowOpts, "1", "lanewait", "1"}, q.hgetall(q.k.Meta))
		require.Equal(t, Bulks("1"), q.signalOf(), "a lane became ready while turns was empty")
		require.Equal(t, statsReplyWith(0, 0, 0, 0, false, [6]int64{1, 1, 0, 0}, "1"), q.call(protocol.Stats))
	})
	scenario(t, env, "k = 1 with an empty lane is no lane", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Bulks("1"), q.call(protocol.Add, "1", "1", "lane", "a", "0", "0", "3", "fixed", "0", "", "0", ""))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Job("1"), "lane"))
		for _, s := range []string{protocol.SuffixLanes, protocol.SuffixTurns, protocol.SuffixLaneInfo} {
			require.Equal(t, Int(0), q.r("EXISTS", q.fixed(s)))
		}
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Meta, "lanewait"))
	})
	scenario(t, env, "a delayed laned job keeps its lane in the row only", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", delay: "60000", lane: "l"})[0]
		require.Equal(t, Bulk("l"), q.r("HGET", q.k.Job(id), "lane"))
		require.Equal(t, Bulk("delayed"), q.r("HGET", q.k.Job(id), "state"))
		require.Equal(t, Bulks(id), q.r("ZRANGE", q.k.Delayed, "0", "-1"))
		require.ElementsMatch(t, []string{q.k.Version, q.k.Meta, q.k.Stats, q.k.Delayed, q.k.Job(id)}, keysOf(q.snapshot()))
	})
	scenario(t, env, "a batch over lanes and pending", func(t *testing.T, q *queue) {
		q.install()
		ids := q.add(job{data: "b1", lane: "b"}, job{data: "p1"}, job{data: "a1", lane: "a"}, job{data: "b2", lane: "b", prio: "9"},
			job{data: "d", lane: "c", delay: "60000"})
		require.Equal(t, []string{"1", "2", "3", "4", "5"}, ids)
		require.Equal(t, Bulks("4", "1"), q.r("ZRANGE", q.laneKey("b"), "0", "-1"))
		require.Equal(t, Bulks("3"), q.r("ZRANGE", q.laneKey("a"), "0", "-1"))
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, Bulks("a", "b"), q.lanesOf())
		require.Equal(t, Bulks("a", "0", "b", "0"), q.turnsOf())
		require.Equal(t, Arr(Nil, Nil, Bulk("3")), q.turnMeta())
		require.Equal(t, Int(0), q.r("EXISTS", q.laneKey("c")))
		require.Equal(t, Bulks("1"), q.signalOf())
	})
	scenario(t, env, "a lane enters turns at the current turn", func(t *testing.T, q *queue) {
		q.install()
		q.laned("a", "a1")
		q.laned("a", "a2")
		require.Len(t, q.claim(60000, 1), 1)
		require.Equal(t, []string{"seq", "2", protocol.MetaRowOpts, "1", "lanewait", "1", "turn", "1"}, q.hgetall(q.k.Meta), "no pturn: pending was not served")
		q.do("DEL", q.k.Signal)
		q.laned("b", "b1")
		require.Equal(t, Bulks("a", "1", "b", "1"), q.turnsOf())
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal), "turns was not empty")
		require.Equal(t, Arr(Bulk("1"), Nil, Bulk("2")), q.turnMeta())
	})
	scenario(t, env, "the signal: pending's rule and the lanes' rule", func(t *testing.T, q *queue) {
		q.install()
		q.laned("a", "a1")
		q.do("DEL", q.k.Signal)
		q.laned("a", "a2")
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal), "the lane was ready already")
		q.addOne("p")
		require.Equal(t, Bulks("1"), q.signalOf(), "pending went from empty to not empty")
	})
	scenario(t, env, "binary lane names", func(t *testing.T, q *queue) {
		q.install()
		names := []string{"\x00", "\xff\xfe", "a b\r\n", "{x}", strings.Repeat("n", protocol.MaxLaneName)}
		for i, l := range names {
			id := q.laned(l, "d"+strconv.Itoa(i))
			require.Equal(t, Bulks(id), q.r("ZRANGE", q.laneKey(l), "0", "-1"))
			require.Equal(t, Bulk(l), q.r("HGET", q.k.Job(id), "lane"))
		}
		require.Equal(t, Bulks("\x00", "a b\r\n", strings.Repeat("n", protocol.MaxLaneName), "{x}", "\xff\xfe"), q.lanesOf())
		for _, l := range names {
			require.Equal(t, laneReply(1, 0, 0, 0), q.call(protocol.Lane, l))
		}
		got := q.claim(60000, 10)
		require.Len(t, got, len(names))
		require.Equal(t, Bulk("\x00"), q.r("HGET", q.k.Job(got[0].id), "lane"), "in turns order: by name at equal turn")
		require.Equal(t, laneReply(0, 1, 0, 0), q.call(protocol.Lane, "\xff\xfe"))
	})
}

// testLaneClaim: fair claiming over pending and the ready lanes.
func testLaneClaim(t *testing.T, env Env) {
	scenario(t, env, "round robin over pending and the lanes", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p1"}, job{data: "p2"}, job{data: "p3"})
		q.add(job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"})
		q.add(job{data: "b1", lane: "b"}, job{data: "b2", lane: "b"}, job{data: "b3", lane: "b"}, job{data: "b4", lane: "b"})
		require.Equal(t, Arr(Nil, Nil, Bulk("6")), q.turnMeta())
		require.Equal(t, claims("1", "p1", "4", "a1", "6", "b1", "2", "p2", "5", "a2", "7", "b2"), q.call(protocol.Claim, "30000", "6"))
		require.Equal(t, Bulks("6", "4", "2"), q.turnMeta())
		require.Equal(t, []string{"seq", "9", protocol.MetaRowOpts, "1", "lanewait", "2", "turn", "6", "pturn", "4"}, q.hgetall(q.k.Meta), "meta's fields in write order")
		require.Equal(t, Bulks("b", "6"), q.turnsOf(), "a has no job waiting: it left turns")
		require.Equal(t, Bulks("a", "b"), q.lanesOf(), "both lanes have active jobs")
		require.Equal(t, []string{"active:a", "2", "active:b", "2"}, q.laneinfo())
		// pending's turn 4 is before b's 6
		require.Equal(t, claims("3", "p3", "8", "b3", "9", "b4"), q.call(protocol.Claim, "30000", "10"))
		require.Equal(t, Bulks("9", "7", "0"), q.turnMeta())
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)))
		require.Equal(t, []string{"active:a", "2", "active:b", "4"}, q.laneinfo())
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "10")))
		require.Equal(t, statsReplyWith(0, 0, 9, 0, false, [6]int64{2, 0, 0, 0}, "9"), q.call(protocol.Stats))
	})
	scenario(t, env, "pending waits behind lanes of earlier turns", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p1"}, job{data: "p2"}, job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"})
		require.Equal(t, claims("1", "p1"), q.call(protocol.Claim, "30000", "1"))
		require.Equal(t, Bulks("1", "1", "2"), q.turnMeta())
		require.Equal(t, Bulks("a", "0"), q.turnsOf(), "not served: a keeps its turn")
		require.Equal(t, claims("3", "a1", "2", "p2", "4", "a2"), q.call(protocol.Claim, "30000", "3"))
		require.Equal(t, Bulks("4", "3", "0"), q.turnMeta())
	})
	scenario(t, env, "lanes at equal turn in name order, a new lane behind", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"}, job{data: "b1", lane: "b"})
		require.Equal(t, claims("1", "a1"), q.call(protocol.Claim, "30000", "1"))
		q.add(job{data: "c1", lane: "c"})
		require.Equal(t, Bulks("b", "0", "a", "1", "c", "1"), q.turnsOf())
		require.Equal(t, claims("3", "b1", "2", "a2", "4", "c1"), q.call(protocol.Claim, "30000", "3"))
		require.Equal(t, Arr(Bulk("4"), Nil, Bulk("0")), q.turnMeta())
	})
	scenario(t, env, "priority, then FIFO inside a lane", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "x", lane: "a"}, job{data: "y", lane: "a", prio: "5"}, job{data: "z", lane: "a", prio: "5"},
			job{data: "w", lane: "a", prio: "1000"})
		require.Equal(t, claims("4", "w", "2", "y", "3", "z", "1", "x"), q.call(protocol.Claim, "30000", "10"))
		require.Equal(t, Arr(Bulk("4"), Nil, Bulk("0")), q.turnMeta())
	})
	scenario(t, env, "count ends the passes", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"}, job{data: "a3", lane: "a"},
			job{data: "b1", lane: "b"}, job{data: "b2", lane: "b"}, job{data: "b3", lane: "b"})
		require.Equal(t, claims("1", "a1", "4", "b1", "2", "a2"), q.call(protocol.Claim, "30000", "3"))
		require.Equal(t, Bulks("b", "2", "a", "3"), q.turnsOf())
		require.Equal(t, Arr(Bulk("3"), Nil, Bulk("3")), q.turnMeta())
		require.Equal(t, claims("5", "b2", "3", "a3", "6", "b3"), q.call(protocol.Claim, "30000", "3"))
	})
	scenario(t, env, "at most count lanes are read", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "b1", lane: "b"}, job{data: "c1", lane: "c"})
		require.Equal(t, claims("1", "a1", "2", "b1"), q.call(protocol.Claim, "30000", "2"))
		require.Equal(t, Bulks("c", "0"), q.turnsOf())
		require.Equal(t, Arr(Bulk("2"), Nil, Bulk("1")), q.turnMeta())
	})
	scenario(t, env, "the fast path writes no turn", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p1"}, job{data: "p2"})
		require.Equal(t, claims("1", "p1", "2", "p2"), q.call(protocol.Claim, "30000", "5"))
		require.Equal(t, Arr(Nil, Nil, Nil), q.turnMeta())
		require.Equal(t, []string{"seq", "2", protocol.MetaRowOpts, protocol.RowOptsOff}, q.hgetall(q.k.Meta))
	})
	scenario(t, env, "a lane's gone row uses its turn", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"}, job{data: "b1", lane: "b"})
		q.do("DEL", q.k.Job("1"))
		require.Equal(t, claims("3", "b1", "2", "a2"), q.call(protocol.Claim, "30000", "3"))
		require.Equal(t, Int(0), q.r("EXISTS", q.laneKey("a")))
		require.Equal(t, []string{"active:a", "1", "active:b", "1"}, q.laneinfo())
		require.Equal(t, Arr(Bulk("3"), Nil, Bulk("0")), q.turnMeta(), "three turns given")
	})
	scenario(t, env, "a lane whose every row is gone leaves the lanes", func(t *testing.T, q *queue) {
		q.install()
		q.laned("a", "a1")
		q.do("DEL", q.k.Job("1"))
		require.Equal(t, Arr(), q.call(protocol.Claim, "30000", "5"))
		for _, s := range []string{protocol.SuffixLanes, protocol.SuffixTurns, protocol.SuffixLaneInfo} {
			require.Equal(t, Int(0), q.r("EXISTS", q.fixed(s)), s)
		}
		require.Equal(t, Int(0), q.r("EXISTS", q.laneKey("a")))
		require.Equal(t, Arr(Bulk("1"), Nil, Bulk("0")), q.turnMeta())
	})
	scenario(t, env, "a lane member that is not an id uses its turn", func(t *testing.T, q *queue) {
		q.install()
		q.laned("a", "a1")
		q.do("ZADD", q.laneKey("a"), "0", "x")
		q.do("HINCRBY", q.k.Meta, "lanewait", "1")
		require.Equal(t, claims("1", "a1"), q.call(protocol.Claim, "30000", "5"))
		require.Equal(t, Arr(Bulk("2"), Nil, Bulk("0")), q.turnMeta())
		require.Equal(t, []string{"active:a", "1"}, q.laneinfo())
	})
	scenario(t, env, "a pending member that is not an id uses pending's turn", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p1"}, job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"})
		q.do("ZADD", q.k.Pending, "0", "x")
		require.Equal(t, claims("2", "a1", "1", "p1", "3", "a2"), q.call(protocol.Claim, "30000", "4"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending))
		require.Equal(t, Arr(Bulk("4"), Bulk("3"), Bulk("0")), q.turnMeta())
	})
	scenario(t, env, "a thousand lanes, one turn each", func(t *testing.T, q *queue) {
		q.install()
		jobs := make([]job, protocol.MaxCount)
		want := make([]string, 0, 2*protocol.MaxCount)
		for i := range jobs {
			l := "l" + strconv.Itoa(10000+i)
			jobs[i] = job{data: l, lane: l}
			want = append(want, strconv.Itoa(i+1), l)
		}
		q.add(jobs...)
		q.add(job{data: "z", lane: "z"})
		require.Equal(t, claims(want...), q.call(protocol.Claim, "30000", "1000"))
		require.Equal(t, Bulks("z", "0"), q.turnsOf())
		require.Equal(t, Arr(Bulk("1000"), Nil, Bulk("1")), q.turnMeta())
		require.Equal(t, Int(1001), q.r("ZCARD", q.fixed(protocol.SuffixLanes)))
		require.Equal(t, claims("1001", "z"), q.call(protocol.Claim, "30000", "1000"))
	})
	scenario(t, env, "a stale lane leaves turns when turns are given", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("p1")
		q.do("ZADD", q.fixed(protocol.SuffixTurns), "0", "ghost")
		require.Equal(t, claims("1", "p1"), q.call(protocol.Claim, "30000", "5"))
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)))
		require.Equal(t, Arr(Bulk("1"), Bulk("1"), Nil), q.turnMeta())
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixLanes)))
	})
	scenario(t, env, "a lane paused behind the verbs' back is stale", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "b1", lane: "b"})
		q.do("HSET", q.fixed(protocol.SuffixLaneInfo), "paused:a", "1")
		q.do("HSET", q.k.Meta, protocol.MetaLaneSets, "1")
		require.Equal(t, claims("2", "b1"), q.call(protocol.Claim, "30000", "5"))
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.laneKey("a"), "0", "-1"))
		require.Equal(t, Arr(Bulk("1"), Nil, Bulk("1")), q.turnMeta())
	})
	scenario(t, env, "only stale lanes: nothing written", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", q.fixed(protocol.SuffixTurns), "0", "ghost")
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "5")))
	})
	scenario(t, env, "paused queue serves no lane", func(t *testing.T, q *queue) {
		q.install()
		q.laned("a", "a1")
		q.must(protocol.Pause)
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "5")))
	})
	scenario(t, env, "turn values as stored", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("p1")
		q.laned("a", "a1")
		q.do("HSET", q.k.Meta, "turn", "x", "pturn", "07")
		require.Equal(t, claims("1", "p1", "2", "a1"), q.call(protocol.Claim, "30000", "5"))
		require.Equal(t, Arr(Bulk("2"), Bulk("1"), Bulk("0")), q.turnMeta())
	})
}

// testLaneCounts: every verb that moves a laned job keeps the lane's
// counts, the lanes registry, turns and lanewait exact.
func testLaneCounts(t *testing.T, env Env) {
	none := func(q *queue) {
		q.t.Helper()
		for _, s := range []string{protocol.SuffixLanes, protocol.SuffixTurns, protocol.SuffixLaneInfo} {
			require.Equal(q.t, Int(0), q.r("EXISTS", q.fixed(s)), s)
		}
	}
	scenario(t, env, "complete", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", lane: "a"})
		require.Equal(t, []string{"active:a", "1"}, q.laneinfo())
		require.Equal(t, Bulks("a"), q.lanesOf())
		q.do("DEL", q.k.Signal)
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		none(q)
		require.Equal(t, Arr(Bulk("1"), Nil, Bulk("0")), q.turnMeta())
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal), "the lane has no job: not ready")
	})
	scenario(t, env, "completemany over lanes, with outcomes other than 1", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"}, job{data: "b1", lane: "b"}, job{data: "a3", lane: "a"})
		require.Len(t, q.claim(30000, 3), 3) // a1, b1, a2
		require.Equal(t, []string{"active:a", "2", "active:b", "1"}, q.laneinfo())
		require.Equal(t, outcomes(1, -1, 1, 0), q.call(protocol.CompleteMany, "4", "1", "1", "", "2", "9", "", "3", "1", "", "9", "1", ""))
		require.Equal(t, []string{"active:a", "1"}, q.laneinfo())
		require.Equal(t, Bulks("a"), q.lanesOf())
		require.Equal(t, Bulks("a", "3"), q.turnsOf())
		require.Equal(t, outcomes(1), q.call(protocol.CompleteMany, "1", "2", "1", ""))
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixLaneInfo)))
		require.Equal(t, Bulks("a"), q.lanesOf(), "a3 waits")
	})
	scenario(t, env, "fail with a retry, then promote back to the lane", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", lane: "a", attempts: "3"})
		require.Equal(t, Bulk(protocol.FailRetry), q.call(protocol.Fail, c.id, c.token(), "1", "x"))
		none(q)
		require.Equal(t, Bulks(c.id), q.r("ZRANGE", q.k.Delayed, "0", "-1"))
		q.do("DEL", q.k.Signal)
		pause(leaseWait)
		require.Equal(t, Int(1), q.call(protocol.Promote, "10"))
		require.Equal(t, Bulks(c.id), q.r("ZRANGE", q.laneKey("a"), "0", "-1"))
		require.Equal(t, protocol.PendingScore(0, 1), q.score(q.laneKey("a"), c.id))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending))
		require.Equal(t, Bulks("a"), q.lanesOf())
		require.Equal(t, Bulks("a", "1"), q.turnsOf())
		require.Equal(t, Arr(Bulk("1"), Nil, Bulk("1")), q.turnMeta())
		require.Equal(t, Bulks("1"), q.signalOf())
		require.Equal(t, Bulk("pending"), q.r("HGET", q.k.Job(c.id), "state"))
		got := q.claimOne()
		require.Equal(t, claimed{c.id, "a", 2}, got)
	})
	scenario(t, env, "fail to dead", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", lane: "a"})
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "0", "x"))
		none(q)
		require.Equal(t, Bulks(c.id), q.r("ZRANGE", q.k.Dead, "0", "-1"))
	})
	scenario(t, env, "recover to the lane and to dead", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a", attempts: "1"}, job{data: "a2", lane: "a", attempts: "3"}, job{data: "p"})
		require.Len(t, q.claim(1, 10), 3)
		pause(leaseWait)
		q.do("DEL", q.k.Signal)
		require.Equal(t, Arr(Int(2), Int(1)), q.call(protocol.Recover, "10"))
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.laneKey("a"), "0", "-1"))
		require.Equal(t, Bulks("3"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixLaneInfo)))
		require.Equal(t, Bulks("a"), q.lanesOf())
		require.Equal(t, Bulks("a", "3"), q.turnsOf())
		require.Equal(t, Arr(Bulk("3"), Bulk("1"), Bulk("1")), q.turnMeta())
		require.Equal(t, Bulks("1"), q.signalOf(), "one token for pending and the lane")
	})
	scenario(t, env, "remove from a lane", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"})
		require.Equal(t, Int(1), q.call(protocol.Remove, "1", "0"))
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.laneKey("a"), "0", "-1"))
		require.Equal(t, Arr(Nil, Nil, Bulk("1")), q.turnMeta())
		require.Equal(t, Bulks("a", "0"), q.turnsOf())
		require.Equal(t, Int(1), q.call(protocol.Remove, "2", "0"))
		none(q)
		require.Equal(t, Int(0), q.r("EXISTS", q.laneKey("a")))
		require.Equal(t, Arr(Nil, Nil, Bulk("0")), q.turnMeta())
	})
	scenario(t, env, "remove of a delayed or dead laned job touches no lane key", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", lane: "a", delay: "60000"})[0]
		q.written(q.verb(protocol.Remove, id, "0"), []string{q.k.Job(id), q.k.Delayed}, []string{q.k.Stats})
		q.add(job{data: "b", lane: "b", attempts: "1"})
		c := q.claimOne()
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "0", "x"))
		q.written(q.verb(protocol.Remove, c.id, "0"), []string{q.k.Job(c.id), q.k.Dead}, []string{q.k.Stats})
	})
	scenario(t, env, "requeue to the lane", func(t *testing.T, q *queue) {
		id := q.dead(job{data: "a", lane: "a"})
		none(q)
		q.do("DEL", q.k.Signal)
		require.Equal(t, Int(1), q.call(protocol.Requeue, id))
		require.Equal(t, Bulks(id), q.r("ZRANGE", q.laneKey("a"), "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending))
		require.Equal(t, Bulks("a"), q.lanesOf())
		require.Equal(t, Bulks("a", "1"), q.turnsOf())
		require.Equal(t, Bulks("1"), q.signalOf())
		require.Equal(t, Arr(Bulk("1"), Nil, Bulk("1")), q.turnMeta())
	})
	scenario(t, env, "promote of a delayed laned job", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", lane: "a", delay: "1"}, job{data: "p", delay: "1"})
		pause(leaseWait)
		require.Equal(t, Int(2), q.call(protocol.Promote, "10"))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.laneKey("a"), "0", "-1"))
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, Arr(Nil, Nil, Bulk("1")), q.turnMeta())
		require.Equal(t, Bulks("1"), q.signalOf())
		require.Equal(t, claims("2", "p", "1", "a"), q.call(protocol.Claim, "30000", "10"))
	})
	scenario(t, env, "promote into a paused lane", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.LanePause, "a")
		q.add(job{data: "a", lane: "a", delay: "1"})
		pause(leaseWait)
		require.Equal(t, Int(1), q.call(protocol.Promote, "10"))
		require.Equal(t, Bulks("a"), q.lanesOf())
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal))
		require.Equal(t, laneReply(1, 0, 0, 1), q.call(protocol.Lane, "a"))
	})
	scenario(t, env, "requeue into a lane at its cap", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.LaneCap, "a", "1")
		q.add(job{data: "a1", lane: "a", attempts: "1"}, job{data: "a2", lane: "a"})
		c := q.claimOne()
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "0", "x"))
		c = q.claimOne()
		q.do("DEL", q.k.Signal)
		require.Equal(t, Int(1), q.call(protocol.Requeue, "1"))
		require.Equal(t, laneReply(1, 1, 1, 0), q.call(protocol.Lane, "a"))
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixTurns)))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal))
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		require.Equal(t, Bulks("a", "2"), q.turnsOf())
		require.Equal(t, Bulks("1"), q.signalOf())
	})
	scenario(t, env, "a row's lane as read", func(t *testing.T, q *queue) {
		q.install()
		id := q.addOne("a")
		q.do("HSET", q.k.Job(id), "lane", strings.Repeat("l", 129))
		q.do("HSET", q.k.Meta, protocol.MetaRowOpts, protocol.RowOptsOn) // as an ADD of a row with a lane sets it
		c := q.claimOne()
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		none(q)
		require.Equal(t, []string{"seq", "1", protocol.MetaRowOpts, protocol.RowOptsOn}, q.hgetall(q.k.Meta), "a lane of 129 bytes is no lane")
	})
	scenario(t, env, "lanewait as stored", func(t *testing.T, q *queue) {
		q.install()
		q.do("HSET", q.k.Meta, "lanewait", "x")
		q.laned("a", "a1")
		require.Equal(t, Arr(Nil, Nil, Bulk("1")), q.turnMeta())
		q.do("HSET", q.k.Meta, "lanewait", "0")
		require.Len(t, q.claim(30000, 5), 1)
		require.Equal(t, Arr(Bulk("1"), Nil, Bulk("0")), q.turnMeta(), "never below 0, and unchanged: not written")
	})
}

// laneFixtures prepare each verb that runs the lane accounting to run it
// on lane l (job 1), as fixtures do for the job core.
var laneFixtures = map[*protocol.Verb]func(q *queue) []string{
	protocol.Add: func(q *queue) []string {
		q.install()
		return addArgs(job{data: "a", lane: fixtureLane})
	},
	protocol.Claim: func(q *queue) []string {
		q.install()
		q.laned(fixtureLane, "a")
		return []string{"30000", "1"}
	},
	protocol.Complete: func(q *queue) []string {
		c := q.active(job{data: "a", lane: fixtureLane})
		return []string{c.id, c.token(), ""}
	},
	protocol.CompleteMany: func(q *queue) []string {
		c := q.active(job{data: "a", lane: fixtureLane})
		return []string{"1", c.id, c.token(), ""}
	},
	protocol.Fail: func(q *queue) []string {
		c := q.active(job{data: "a", lane: fixtureLane})
		return []string{c.id, c.token(), "1", "boom"}
	},
	protocol.Recover: func(q *queue) []string {
		q.install()
		q.laned(fixtureLane, "a")
		q.expired()
		return []string{"10"}
	},
	protocol.Promote: func(q *queue) []string {
		q.install()
		q.add(job{data: "a", delay: "1", lane: fixtureLane})
		pause(leaseWait)
		return []string{"10"}
	},
	protocol.Remove: func(q *queue) []string {
		q.install()
		return []string{q.laned(fixtureLane, "a"), "0"}
	},
	protocol.Requeue: func(q *queue) []string {
		return []string{q.dead(job{data: "a", lane: fixtureLane})}
	},
	protocol.LaneCap:    fixtures[protocol.LaneCap],
	protocol.LanePause:  fixtures[protocol.LanePause],
	protocol.LaneResume: fixtures[protocol.LaneResume],
	protocol.RequeueDead: func(q *queue) []string {
		q.dead(job{data: "a", lane: fixtureLane})
		return deadFilter("10", "", "")
	},
	protocol.PromoteAll: func(q *queue) []string {
		q.install()
		q.add(job{data: "a", delay: "600000", lane: fixtureLane})
		return []string{"10"}
	},
	protocol.Retry: func(q *queue) []string {
		q.install()
		return []string{q.add(job{data: "a", delay: "600000", lane: fixtureLane})[0]}
	},
}

// testLaneRefusals: the lane keys are typed and ACL-checked where the
// lane accounting (or CLAIM) reads them, and a refusal writes nothing.
func testLaneRefusals(t *testing.T, env Env) {
	for _, v := range protocol.All {
		fixture, ok := laneFixtures[v]
		if !ok {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			scenario(t, env, "runs", func(t *testing.T, q *queue) {
				args := fixture(q)
				q.must(v, args...)
			})
			keys := laneAccountingKeys
			if v == protocol.Claim {
				keys = []string{"turns", "laneinfo", fixtureLaneKey, "lanes"}
			}
			for _, name := range keys {
				scenario(t, env, "wrongtype "+name, func(t *testing.T, q *queue) {
					args := fixture(q)
					q.plant(q.keyOf(name), keyTypes[name])
					q.refuse(protocol.ErrWrongType, q.verb(v, args...))
				})
			}
			for _, class := range []string{classLanes, classTurns} {
				for _, have := range []string{"", "R"} {
					scenario(t, env, "acl "+class+" "+orDefault(have, "denied"), func(t *testing.T, q *queue) {
						args := fixture(q)
						user := q.as(map[string]string{class: have})
						user.refuse(protocol.ErrNoPerm, user.verb(v, args...))
					})
				}
			}
			scenario(t, env, "acl one lane key denied", func(t *testing.T, q *queue) {
				args := fixture(q)
				// every lane key but lane:l
				user := q.as(map[string]string{classLanes: ""}, "%RW~"+q.fixed(protocol.SuffixLaneInfo), "%RW~"+q.fixed(protocol.SuffixLanes))
				user.refuse(protocol.ErrNoPerm, user.verb(v, args...))
			})
		})
	}

	// the place of the lane reads among the verbs' other refusals
	scenario(t, env, "complete: a stale token before the lane keys", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", lane: "l"})
		user := q.as(map[string]string{classLanes: ""})
		user.refuse(protocol.ErrStale("complete"), user.verb(protocol.Complete, c.id, "9", ""))
	})
	scenario(t, env, "complete: the lane keys before the counter", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", lane: "l"})
		q.do("HSET", q.k.Stats, "completed", "x")
		q.plant(q.fixed(protocol.SuffixLaneInfo), "hash")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Complete, c.id, c.token(), ""))
		user := q.as(map[string]string{classLanes: ""})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Complete, c.id, c.token(), ""))
	})
	scenario(t, env, "complete: the lane keys before denied logs", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", lane: "l"})
		q.plant(q.fixed(protocol.SuffixTurns), "zset")
		user := q.as(map[string]string{classLogs: ""})
		user.refuse(protocol.ErrWrongType, user.verb(protocol.Complete, c.id, c.token(), ""))
	})
	scenario(t, env, "add: the rows' existence before the lane keys", func(t *testing.T, q *queue) {
		q.install()
		q.do("HSET", q.k.Job("1"), "att", "0")
		q.plant(q.fixed(protocol.SuffixLaneInfo), "hash")
		q.refuse(protocol.ErrAddIDExists, q.verb(protocol.Add, addArgs(job{data: "a", lane: "l"})...))
	})
	scenario(t, env, "add: the lane keys before the counter", func(t *testing.T, q *queue) {
		q.install()
		q.do("HSET", q.k.Stats, "added", "x")
		q.plant(q.laneKey("l"), "zset")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Add, addArgs(job{data: "a", lane: "l"})...))
	})
	scenario(t, env, "add: a delayed laned job reads no lane key", func(t *testing.T, q *queue) {
		q.install()
		q.plant(q.fixed(protocol.SuffixLaneInfo), "hash")
		user := q.as(map[string]string{classLanes: "", classTurns: ""})
		require.Equal(t, Bulks("1"), user.call(protocol.Add, addArgs(job{data: "a", lane: "l", delay: "60000"})...))
	})
	scenario(t, env, "a verb on jobs without a lane reads no lane key", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.plant(q.fixed(protocol.SuffixLaneInfo), "hash")
		user := q.as(map[string]string{classLanes: "", classTurns: ""}, "%RW~"+q.k.Fixed(protocol.SuffixTurns))
		require.Equal(t, Bulk(protocol.FailRetry), user.call(protocol.Fail, c.id, c.token(), "1", "x"))
	})
	scenario(t, env, "claim: the rows after the lanes", func(t *testing.T, q *queue) {
		q.install()
		q.laned("l", "a")
		q.plant(q.k.Job("1"), "hash")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Claim, "30000", "1"))
		user := q.as(map[string]string{classRows: ""})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Claim, "30000", "1"))
	})
	scenario(t, env, "claim: a lane not served is typed", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "a", lane: "a"}, job{data: "b", lane: "b"})
		q.plant(q.laneKey("b"), "zset")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Claim, "30000", "2"))
	})
	scenario(t, env, "claim: a lane past count is not read", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", lane: "a"}, job{data: "b", lane: "b"})
		q.plant(q.laneKey("b"), "zset")
		require.Equal(t, claims("1", "a"), q.call(protocol.Claim, "30000", "1"))
	})
	scenario(t, env, "lane and lanes: read access", func(t *testing.T, q *queue) {
		q.install()
		q.laned("l", "a")
		reader := q.as(map[string]string{classLanes: "R"})
		require.Equal(t, laneReply(1, 0, 0, 0), reader.call(protocol.Lane, "l"))
		require.Equal(t, Arr(laneEntry("l", 1, 0, 0, 0)), reader.call(protocol.Lanes, "", "10"))
		denied := q.as(map[string]string{classLanes: ""}, "%R~"+q.fixed(protocol.SuffixLaneInfo), "%R~"+q.fixed(protocol.SuffixLanes))
		denied.refuse(protocol.ErrNoPerm, denied.verb(protocol.Lane, "l"))
		denied.refuse(protocol.ErrNoPerm, denied.verb(protocol.Lanes, "", "10"))
		require.Equal(t, Arr(), denied.call(protocol.Lanes, "l", "10"), "a page without lanes reads no lane key")
	})
	for _, suffix := range []string{protocol.SuffixMeta, protocol.SuffixSignal} {
		scenario(t, env, "complete: the accounting checks "+suffix, func(t *testing.T, q *queue) {
			c := q.active(job{data: "a", lane: "l"})
			user := q.as(map[string]string{suffix: ""})
			user.refuse(protocol.ErrNoPerm, user.verb(protocol.Complete, c.id, c.token(), ""))
			user = q.as(map[string]string{suffix: "R"})
			user.refuse(protocol.ErrNoPerm, user.verb(protocol.Complete, c.id, c.token(), ""))
		})
		scenario(t, env, "complete without a lane: no "+suffix, func(t *testing.T, q *queue) {
			c := q.active(job{data: "a"})
			user := q.as(map[string]string{suffix: ""})
			require.Equal(t, Int(1), user.call(protocol.Complete, c.id, c.token(), ""))
		})
	}
	scenario(t, env, "the ACL check before the lane reads", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", lane: "l"})
		q.plant(q.fixed(protocol.SuffixLaneInfo), "hash")
		user := q.as(map[string]string{classLanes: ""}, "%RW~"+q.fixed(protocol.SuffixLaneInfo), "%RW~"+q.fixed(protocol.SuffixLanes))
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Fail, c.id, c.token(), "1", "x"))
	})
	scenario(t, env, "recover: the rows before the lane keys", func(t *testing.T, q *queue) {
		args := laneFixtures[protocol.Recover](q)
		q.plant(q.fixed(protocol.SuffixLaneInfo), "hash")
		user := q.as(map[string]string{classRows: ""})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Recover, args...))
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Recover, args...))
	})
	scenario(t, env, "claim: the lane keys before the rows", func(t *testing.T, q *queue) {
		args := laneFixtures[protocol.Claim](q)
		q.plant(q.fixed(protocol.SuffixLaneInfo), "hash")
		user := q.as(map[string]string{classRows: ""})
		user.refuse(protocol.ErrWrongType, user.verb(protocol.Claim, args...))
	})
	scenario(t, env, "requeue: not dead before the lane keys", func(t *testing.T, q *queue) {
		q.install()
		id := q.laned("l", "a")
		user := q.as(map[string]string{classLanes: ""})
		user.refuse(protocol.ErrRequeueNotDead, user.verb(protocol.Requeue, id))
	})
	scenario(t, env, "remove: an active laned job before the lane keys", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", lane: "l"})
		user := q.as(map[string]string{classLanes: ""})
		user.refuse(protocol.ErrRemoveActive, user.verb(protocol.Remove, c.id, "0"))
	})
	for _, v := range []*protocol.Verb{protocol.LanePause, protocol.LaneResume, protocol.Lane} {
		scenario(t, env, v.Name+": bad lane before the fence", func(t *testing.T, q *queue) {
			args := fixtures[v](q)
			q.do("DEL", q.k.Version)
			args[0] = strings.Repeat("l", protocol.MaxLaneName+1)
			q.refuse(protocol.ErrBadArg(v.Name, "lane"), q.verb(v, args...))
		})
	}
	scenario(t, env, "lanecap: lane before cap", func(t *testing.T, q *queue) {
		fixtures[protocol.LaneCap](q)
		q.refuse(protocol.ErrBadArg("lanecap", "lane"), q.verb(protocol.LaneCap, "", "x"))
	})
	scenario(t, env, "lanes: after before count", func(t *testing.T, q *queue) {
		fixtures[protocol.Lanes](q)
		q.refuse(protocol.ErrBadArg("lanes", "after"), q.verb(protocol.Lanes, strings.Repeat("a", 129), "0"))
	})
	scenario(t, env, "stats: lanes read access", func(t *testing.T, q *queue) {
		fixtures[protocol.Stats](q)
		user := q.as(map[string]string{classLanes: "W"})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Stats))
	})
}
