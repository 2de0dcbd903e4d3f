package conformance

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// rateKey is the queue's rate window.
func (q *queue) rateKey() string { return q.k.Fixed(protocol.SuffixRate) }

// pttl is the rate window's PTTL.
func (q *queue) pttl() int64 {
	q.t.Helper()
	v, err := q.cmd("PTTL", q.rateKey()).AsInt64()
	require.NoError(q.t, err)
	return v
}

// refuseRate requires CLAIM's EMQRATE refusal with the window's PTTL (read
// around the call) and a dataset left as it was.
func (q *queue) refuseRate(args ...string) {
	q.t.Helper()
	hi := q.pttl()
	reply := q.unchanged(q.verb(protocol.Claim, args...))
	lo := q.pttl()
	prefix := `(error) "EMQRATE claim rate limited, retry in `
	require.True(q.t, strings.HasPrefix(reply, prefix) && strings.HasSuffix(reply, ` ms"`), reply)
	ms, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(reply, prefix), ` ms"`), 10, 64)
	require.NoError(q.t, err, reply)
	within(q.t, ms, lo, hi, "the wait")
	require.Equal(q.t, Err(protocol.ErrRateLimited(ms)), reply)
}

// testRate: EMQ.RATE and the rate window in CLAIM.
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
	scenario(t, env, "rate keeps the current window", func(t *testing.T, q *queue) {
		q.install()
		q.do("SET", q.rateKey(), "2", "PX", "60000")
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
		require.Equal(t, claims("1", "a", "2", "b"), q.call(protocol.Claim, "30000", "5"))
		require.Equal(t, Bulk("2"), q.r("GET", q.rateKey()))
		within(t, q.pttl(), 1, 60000, "the window")
		q.refuseRate("30000", "5")
		require.Equal(t, statsReplyWith(1, 0, 2, 0, false, [6]int64{0, 0, 2, 60000}, "3"), q.call(protocol.Stats))
	})
	scenario(t, env, "claims count on in the window", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "3", "60000")
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"}, job{data: "d"})
		require.Len(t, q.claim(30000, 1), 1)
		require.Equal(t, Bulk("1"), q.r("GET", q.rateKey()))
		first := q.pttl()
		require.Equal(t, claims("2", "b", "3", "c"), q.call(protocol.Claim, "30000", "5"))
		require.Equal(t, Bulk("3"), q.r("GET", q.rateKey()))
		within(t, q.pttl(), 1, first, "KEEPTTL")
		q.refuseRate("30000", "1")
	})
	scenario(t, env, "the window expires", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "1", "20")
		q.add(job{data: "a"}, job{data: "b"})
		require.Len(t, q.claim(30000, 5), 1)
		pause(30 * leaseWait)
		require.Equal(t, claims("2", "b"), q.call(protocol.Claim, "30000", "5"))
		require.Equal(t, Bulk("1"), q.r("GET", q.rateKey()))
	})
	scenario(t, env, "nothing claimed: no window", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "1", "60000")
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "5")))
		q.addOne("a")
		q.do("DEL", q.k.Job("1"))
		require.Equal(t, Arr(), q.call(protocol.Claim, "30000", "5"))
		require.Equal(t, Int(0), q.r("EXISTS", q.rateKey()), "no job returned")
	})
	scenario(t, env, "a window without a TTL is not open", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "1", "60000")
		q.do("SET", q.rateKey(), "5")
		q.addOne("a")
		require.Len(t, q.claim(30000, 5), 1)
		require.Equal(t, Bulk("1"), q.r("GET", q.rateKey()))
		within(t, q.pttl(), 1, 60000, "a new window")
	})
	scenario(t, env, "a count as stored", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "2", "60000")
		q.do("SET", q.rateKey(), "x", "PX", "60000")
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"})
		require.Len(t, q.claim(30000, 5), 2)
		require.Equal(t, Bulk("2"), q.r("GET", q.rateKey()))
	})
	scenario(t, env, "a count past the max refuses", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "2", "60000")
		q.do("SET", q.rateKey(), "7", "PX", "60000")
		q.addOne("a")
		q.refuseRate("30000", "5")
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
		q.do("SET", q.rateKey(), "1", "PX", "60000")
		q.addOne("a")
		q.must(protocol.Pause)
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Claim, "30000", "5")))
	})
	scenario(t, env, "the rate before pending", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Rate, "1", "60000")
		q.do("SET", q.rateKey(), "1", "PX", "60000")
		q.plant(q.k.Pending, "zset")
		q.refuseRate("30000", "5")
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
		require.Equal(t, Bulk("3"), q.r("GET", q.rateKey()))
		q.refuseRate("30000", "10")
	})
}
