package conformance

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// rateKey is the queue's rate log.
func (q *queue) rateKey() string { return q.k.Fixed(protocol.SuffixRate) }

// logEntry is the rate log member of an entry of k claims from before: the
// running count in 15 digits, so that entries of one ms sort as logged.
func logEntry(before, k int) string { return fmt.Sprintf("%015d:%d", before, k) }

// pttl is the rate log's PTTL.
func (q *queue) pttl() int64 {
	q.t.Helper()
	v, err := q.cmd("PTTL", q.rateKey()).AsInt64()
	require.NoError(q.t, err)
	return v
}

// logMembers is the rate log's members, in score order.
func (q *queue) logMembers() []string {
	q.t.Helper()
	v, err := q.cmd("ZRANGE", q.rateKey(), "0", "-1").AsStrSlice()
	require.NoError(q.t, err)
	return v
}

// logScores is the rate log's scores, in order.
func (q *queue) logScores() []int64 {
	q.t.Helper()
	v, err := q.cmd("ZRANGE", q.rateKey(), "0", "-1", "WITHSCORES").AsZScores()
	require.NoError(q.t, err)
	out := make([]int64, len(v))
	for i, z := range v {
		out[i] = int64(z.Score)
	}
	return out
}

// requireLog requires the rate log to hold members, in order, the last
// scored by a clock between lo and hi (read around the call that wrote it).
func (q *queue) requireLog(lo, hi int64, members ...string) {
	q.t.Helper()
	require.Equal(q.t, members, q.logMembers())
	scores := q.logScores()
	within(q.t, scores[len(scores)-1], lo, hi, "the last entry's clock")
}

// refuseRate requires CLAIM's EMQRATE refusal, with the wait until the rate
// log's first live entry leaves a window of window ms (from the clock read
// around the call), and a dataset left as it was.
func (q *queue) refuseRate(window int64, args ...string) {
	q.t.Helper()
	t0 := q.now()
	reply := q.unchanged(q.verb(protocol.Claim, args...))
	t1 := q.now()
	var first int64
	for _, at := range q.logScores() {
		if at > t0-window {
			first = at
			break
		}
	}
	prefix := `(error) "EMQRATE claim rate limited, retry in `
	require.True(q.t, strings.HasPrefix(reply, prefix) && strings.HasSuffix(reply, ` ms"`), reply)
	ms, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(reply, prefix), ` ms"`), 10, 64)
	require.NoError(q.t, err, reply)
	within(q.t, ms, max(1, first+window-t1), min(window, first+window-t0), "the wait")
	require.Equal(q.t, Err(protocol.ErrRateLimited(ms)), reply)
}

// testRate: EMQ.RATE and the rate log in CLAIM.
func testRate(t *testing.T, env Env) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"1000001", "1"}, "max"},
		{[]string{"x", "1"}, "max"},
		{[]string{"-1", "1"}, "max"},
		{[]string{"01", "1"}, "max"},
		{[]string{"", "1"}, "max"},
		{[]string{"x", "x"}, "max"},
		{[]string{"1", "86400001"}, "window"},
		{[]string{"1", "x"}, "window"},
		{[]string{"1", ""}, "window"},
		{[]string{"1", "0"}, "window"},
		{[]string{"0", "1"}, "window"},
		{[]string{"0", "01"}, "window"},
	} {
		scenario(t, env, "bad "+strings.Join(tc.args, " "), func(t *testing.T, q *queue) {
			fixtures[protocol.Rate](q)
			q.refuse(protocol.ErrBadArg("rate", tc.want), q.verb(protocol.Rate, tc.args...))
		})
	}
	scenario(t, env, "set, change, clear", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(1), q.call(protocol.Rate, "1000000", "86400000"))
		require.Equal(t, []string{"rate_max", "1000000", "rate_window", "86400000"}, q.hgetall(q.k.Meta))
		require.Equal(t, Int(1), q.call(protocol.Rate, "5", "1000"))
		require.Equal(t, []string{"rate_max", "5", "rate_window", "1000"}, q.hgetall(q.k.Meta))
		require.Equal(t, statsReplyWith(0, 0, 0, 0, false, [6]int64{0, 0, 5, 1000}), q.call(protocol.Stats))
		require.Equal(t, Int(1), q.call(protocol.Rate, "0", "0"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Meta))
		require.Equal(t, Int(1), q.unchanged(q.verb(protocol.Rate, "0", "0")))
	})
	scenario(t, env, "clear with one field left", func(t *testing.T, q *queue) {
		q.install()
		q.do("HSET", q.k.Meta, "seq", "3", "rate_window", "9")
		require.Equal(t, Int(1), q.call(protocol.Rate, "0", "0"))
		require.Equal(t, []string{"seq", "3"}, q.hgetall(q.k.Meta))
	})
	scenario(t, env, "rate keeps the log", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", q.rateKey(), "1700000000000", logEntry(0, 2))
		q.do("PEXPIRE", q.rateKey(), "60000")
		before := q.r("DUMP", q.rateKey())
		require.Equal(t, Int(1), q.call(protocol.Rate, "5", "1000"))
		require.Equal(t, before, q.r("DUMP", q.rateKey()))
	})
	scenario(t, env, "meta of another type", func(t *testing.T, q *queue) {
		q.install()
		q.plant(q.k.Meta, "hash")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Rate, "1", "1"))
	})

	scenario(t, env, "claim cut to the allowance, then refused", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "2", "60000")
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"})
		t0 := q.now()
		require.Equal(t, claims("1", "a", "2", "b"), q.call(protocol.Claim, "30000", "5"))
		q.requireLog(t0, q.now(), logEntry(0, 2))
		within(t, q.pttl(), 1, 60000, "the log lives a window")
		q.refuseRate(60000, "30000", "5")
		require.Equal(t, statsReplyWith(1, 0, 2, 0, false, [6]int64{0, 0, 2, 60000}, "3"), q.call(protocol.Stats))
	})
	scenario(t, env, "claims count on in the window", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "3", "60000")
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"}, job{data: "d"})
		t0 := q.now()
		require.Len(t, q.claim(30000, 1), 1)
		require.Equal(t, claims("2", "b", "3", "c"), q.call(protocol.Claim, "30000", "5"))
		q.requireLog(t0, q.now(), logEntry(0, 1), logEntry(1, 2))
		q.refuseRate(60000, "30000", "1")
	})
	scenario(t, env, "the window slides", func(t *testing.T, q *queue) {
		// 2 claims in any second: one at t0, one 500 ms later; the third
		// waits for the first to leave the window, not for the second
		q.install()
		q.must(protocol.Rate, "2", "1000")
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"}, job{data: "d"})
		t0 := q.now()
		require.Len(t, q.claim(30000, 1), 1)
		first := q.logScores()[0]
		pause(500 * time.Millisecond)
		require.Len(t, q.claim(30000, 5), 1, "one claim left in the window")
		q.refuseRate(1000, "30000", "5")
		for q.now() <= first+1000 {
			pause(leaseWait)
		}
		require.Equal(t, claims("3", "c"), q.call(protocol.Claim, "30000", "5"), "the first entry left: one claim again")
		q.refuseRate(1000, "30000", "5")
		q.requireLog(t0, q.now(), logEntry(1, 1), logEntry(2, 1))
	})
	scenario(t, env, "an entry leaves the window", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "1", "20")
		q.add(job{data: "a"}, job{data: "b"})
		require.Len(t, q.claim(30000, 5), 1)
		pause(30 * leaseWait)
		t0 := q.now()
		require.Equal(t, claims("2", "b"), q.call(protocol.Claim, "30000", "5"))
		q.requireLog(t0, q.now(), logEntry(0, 1))
	})
	scenario(t, env, "nothing claimed: nothing logged", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "1", "60000")
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "5")))
		q.addOne("a")
		q.do("DEL", q.k.Job("1"))
		require.Equal(t, Arr(), q.call(protocol.Claim, "30000", "5"))
		require.Equal(t, Int(0), q.r("EXISTS", q.rateKey()), "no job returned")
	})
	scenario(t, env, "entries out of the window count nothing and go", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "1", "60000")
		gone := strconv.FormatInt(q.now()-120000, 10)
		q.do("ZADD", q.rateKey(), gone, logEntry(0, 5), gone, logEntry(5, 9))
		q.addOne("a")
		t0 := q.now()
		require.Len(t, q.claim(30000, 5), 1)
		q.requireLog(t0, q.now(), logEntry(0, 1))
		within(t, q.pttl(), 1, 60000, "the log lives a window")
	})
	scenario(t, env, "members as stored", func(t *testing.T, q *queue) {
		// a member out of form reads as 0 and 0: the count before it must be
		// 15 digits, its claims a row's number
		q.install()
		q.must(protocol.Rate, "2", "60000")
		at := strconv.FormatInt(q.now()-10, 10)
		q.do("ZADD", q.rateKey(), at, "x", at, "000000000000004:01")
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"})
		// the first live entry is 4 and 01 (4, and 0 claims), the last x
		// (0 and 0): the next entry starts at 0, and 0 - 4 counts as none
		// used
		require.Len(t, q.claim(30000, 5), 2)
		require.Equal(t, []string{"000000000000004:01", "x", logEntry(0, 2)}, q.logMembers())
	})
	scenario(t, env, "entries of one ms in the order logged", func(t *testing.T, q *queue) {
		// 9 and 10 sort as logged only padded ("10:5" < "9:1"): the last
		// is 10 and 5, so the next starts at 15 and 6 are used of 7
		q.install()
		q.must(protocol.Rate, "7", "60000")
		at := strconv.FormatInt(q.now()-10, 10)
		q.do("ZADD", q.rateKey(), at, logEntry(9, 1), at, logEntry(10, 5))
		q.add(job{data: "a"}, job{data: "b"})
		t0 := q.now()
		require.Len(t, q.claim(30000, 5), 1)
		q.requireLog(t0, q.now(), logEntry(9, 1), logEntry(10, 5), logEntry(15, 1))
		q.refuseRate(60000, "30000", "5")
	})
	scenario(t, env, "an entry ahead of the clock scores the next", func(t *testing.T, q *queue) {
		// scores never go down (the clock stepped back): the new entry
		// takes the last one's score, and the log lives until it leaves
		q.install()
		q.must(protocol.Rate, "5", "60000")
		ahead := q.now() + 5000
		q.do("ZADD", q.rateKey(), strconv.FormatInt(ahead, 10), logEntry(0, 1))
		q.addOne("a")
		require.Len(t, q.claim(30000, 5), 1)
		require.Equal(t, []string{logEntry(0, 1), logEntry(1, 1)}, q.logMembers())
		require.Equal(t, []int64{ahead, ahead}, q.logScores())
		within(t, q.pttl(), 60000, 65000, "until the new entry leaves the window")
	})
	scenario(t, env, "at most a window ahead", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "5", "1000")
		q.do("ZADD", q.rateKey(), strconv.FormatInt(q.now()+3600000, 10), logEntry(0, 1))
		q.addOne("a")
		t0 := q.now()
		require.Len(t, q.claim(30000, 5), 1)
		t1 := q.now()
		within(t, q.logScores()[0], t0+1000, t1+1000, "the new entry, a window ahead")
		within(t, q.pttl(), 1000, 2000, "until the new entry leaves the window")
	})
	scenario(t, env, "a count past the max refuses", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "2", "60000")
		q.do("ZADD", q.rateKey(), strconv.FormatInt(q.now(), 10), logEntry(0, 7))
		q.addOne("a")
		q.refuseRate(60000, "30000", "5")
	})
	scenario(t, env, "a wait within the window", func(t *testing.T, q *queue) {
		// an entry ahead of the clock waits at most the window
		q.install()
		q.must(protocol.Rate, "2", "60000")
		q.do("ZADD", q.rateKey(), strconv.FormatInt(q.now()+3600000, 10), logEntry(0, 2))
		q.addOne("a")
		require.Equal(t, Err(protocol.ErrRateLimited(60000)), q.unchanged(q.verb(protocol.Claim, "30000", "5")))
	})
	scenario(t, env, "settings as stored", func(t *testing.T, q *queue) {
		q.install()
		q.do("HSET", q.k.Meta, "rate_max", "1", "rate_window", "x")
		q.add(job{data: "a"}, job{data: "b"})
		require.Len(t, q.claim(30000, 5), 2, "a window of 0: no rate")
		require.Equal(t, Int(0), q.r("EXISTS", q.rateKey()))
	})
	scenario(t, env, "paused before the rate", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "1", "60000")
		q.do("ZADD", q.rateKey(), strconv.FormatInt(q.now(), 10), logEntry(0, 1))
		q.addOne("a")
		q.must(protocol.Pause)
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "5")))
	})
	scenario(t, env, "the rate before pending", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "1", "60000")
		q.do("ZADD", q.rateKey(), strconv.FormatInt(q.now(), 10), logEntry(0, 1))
		q.plant(q.k.Pending, "zset")
		q.refuseRate(60000, "30000", "5")
	})
	scenario(t, env, "rate of another type", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		q.plant(q.rateKey(), "string")
		require.Len(t, q.claim(30000, 5), 1, "no rate set: rate is not read")
		q.addOne("b")
		q.must(protocol.Rate, "1", "60000")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Claim, "30000", "5"))
	})
	scenario(t, env, "rate denied", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		user := q.as(map[string]string{classRate: ""})
		require.Len(t, user.claim(30000, 1), 1, "no rate set: rate is not touched")
		q.must(protocol.Rate, "5", "60000")
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Claim, "30000", "1"))
		reader := q.as(map[string]string{classRate: "R"})
		reader.refuse(protocol.ErrNoPerm, reader.verb(protocol.Claim, "30000", "1"))
	})
	scenario(t, env, "the allowance cuts the lanes' turns", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "3", "60000")
		q.add(job{data: "p1"}, job{data: "p2"}, job{data: "a1", lane: "a"}, job{data: "a2", lane: "a"})
		require.Equal(t, claims("1", "p1", "3", "a1", "2", "p2"), q.call(protocol.Claim, "30000", "10"))
		require.Equal(t, Arr(Bulk("3"), Bulk("3"), Bulk("1")), q.turnMeta())
		require.Equal(t, []string{logEntry(0, 3)}, q.logMembers())
		q.refuseRate(60000, "30000", "10")
	})
}
