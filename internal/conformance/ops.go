package conformance

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// maxScore is the largest cursor score and filter time, as an argument.
var maxScore = strconv.FormatInt(protocol.MaxScore, 10)

// deadFilter is the ARGV of REQUEUEDEAD and REMOVEDEAD from the start of
// dead, over every time of death, with the given limit, lane and error.
func deadFilter(limit, lane, errText string) []string {
	return []string{limit, "", "", "0", maxScore, lane, errText}
}

// deadJobs installs the queue (unless it is), adds jobs of one attempt
// each, claims them and fails every one to dead, their times of death in id
// order; it returns their ids.
func (q *queue) deadJobs(jobs ...job) []string {
	q.t.Helper()
	if q.r("EXISTS", q.k.Version) == Int(0) {
		q.install()
	}
	for i := range jobs {
		jobs[i].attempts = "1"
	}
	ids := q.add(jobs...)
	cs := q.claim(600000, len(ids))
	require.Len(q.t, cs, len(ids))
	for _, c := range cs {
		require.Equal(q.t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "1", "boom "+c.id))
	}
	// claims come in lane turns, not id order: times of death one ms apart
	// in id order make the dead set's order the ids'
	died := q.score(q.k.Dead, ids[0])
	for i, id := range ids {
		q.do("ZADD", q.k.Dead, "XX", strconv.FormatInt(died+int64(i), 10), id)
	}
	return ids
}

// jrow is one row of a JOBS reply; an empty text field renders as null.
type jrow struct {
	id                                       string
	score                                    int64
	state, lane, parent, err, prog, preview  string
	att, max, prio, deps, at, errSize, dsize int64
	emptyPreview                             bool // preview is an empty bulk, not null
	emptyTexts                               bool // err and prog are empty bulks, not null
}

func (r jrow) String() string {
	orNil := func(s string) string {
		if s == "" {
			return Nil
		}
		return Bulk(s)
	}
	preview, errText, prog := orNil(r.preview), orNil(r.err), orNil(r.prog)
	if r.emptyPreview {
		preview = Bulk("")
	}
	if r.emptyTexts {
		errText, prog = Bulk(""), Bulk("")
	}
	return Arr(Bulk(r.id), Int(r.score), orNil(r.state), Int(r.att), Int(r.max), Int(r.prio), orNil(r.lane),
		orNil(r.parent), Int(r.deps), Int(r.at), errText, Int(r.errSize), prog, Int(r.dsize),
		preview)
}

// absentRow is the row of a member without a job row.
func absentRow(id string, score int64) jrow { return jrow{id: id, score: score} }

// page renders a JOBS reply: total, the next cursor (none when member is
// empty) and the rows.
func page(total int64, score int64, member string, rows ...jrow) string {
	next := []string{Nil, Nil}
	if member != "" {
		next = []string{Int(score), Bulk(member)}
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	return Arr(Int(total), next[0], next[1], Arr(out...))
}

// ids renders a JOBS reply's ids only, for order checks.
func (q *queue) jobsIDs(args ...string) []string {
	q.t.Helper()
	arr, err := q.exec(protocol.Jobs, args...).ToArray()
	require.NoError(q.t, err)
	rows, err := arr[3].ToArray()
	require.NoError(q.t, err)
	out := []string{}
	for _, r := range rows {
		f, err := r.ToArray()
		require.NoError(q.t, err)
		s, err := f[0].ToString()
		require.NoError(q.t, err)
		out = append(out, s)
	}
	return out
}

// jobsHead renders a JOBS reply's total and next cursor: [total, score,
// member].
func (q *queue) jobsHead(args ...string) string {
	q.t.Helper()
	arr, err := q.exec(protocol.Jobs, args...).ToArray()
	require.NoError(q.t, err)
	return Arr(RenderMessage(arr[0]), RenderMessage(arr[1]), RenderMessage(arr[2]))
}

// at is a row's added-at time as stored.
func (q *queue) at(id string) int64 {
	q.t.Helper()
	v, err := q.cmd("HGET", q.k.Job(id), "at").AsInt64()
	require.NoError(q.t, err)
	return v
}

// walk renders a REQUEUEDEAD or REMOVEDEAD reply.
func walk(taken, examined int64, score int64, member string) string {
	if member == "" {
		return Arr(Int(taken), Int(examined), Nil, Nil)
	}
	return Arr(Int(taken), Int(examined), Int(score), Bulk(member))
}

// testJobs: EMQ.JOBS pages a state's set in set order or newest first, with
// a cursor that holds its place whatever changes.
func testJobs(t *testing.T, env Env) {
	// five dead jobs, two of them sharing a time of death with a third
	fiveDead := func(q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"}, job{data: "c"}, job{data: "d"}, job{data: "e"})
		q.do("ZADD", q.k.Dead, "XX", "10", "1", "20", "2", "20", "3", "20", "4", "30", "5")
	}
	jobs := func(state, newest, score, member, count string) []string {
		return []string{state, "", newest, score, member, count, "0"}
	}
	scenario(t, env, "oldest first, in pages", func(t *testing.T, q *queue) {
		fiveDead(q)
		require.Equal(t, []string{"1", "2"}, q.jobsIDs(jobs("dead", "0", "", "", "2")...))
		require.Equal(t, []string{"3", "4"}, q.jobsIDs(jobs("dead", "0", "20", "2", "2")...))
		require.Equal(t, []string{"5"}, q.jobsIDs(jobs("dead", "0", "20", "4", "2")...))
		q.unchanged(q.verb(protocol.Jobs, jobs("dead", "0", "", "", "2")...))
		require.Equal(t, Arr(Int(5), Int(20), Bulk("2")), q.jobsHead(jobs("dead", "0", "", "", "2")...))
		require.Equal(t, Arr(Int(5), Int(20), Bulk("4")), q.jobsHead(jobs("dead", "0", "20", "2", "2")...))
		require.Equal(t, Arr(Int(5), Nil, Nil), q.jobsHead(jobs("dead", "0", "20", "4", "2")...), "the last page")
	})
	scenario(t, env, "newest first, in pages", func(t *testing.T, q *queue) {
		fiveDead(q)
		require.Equal(t, []string{"5", "4"}, q.jobsIDs(jobs("dead", "1", "", "", "2")...))
		require.Equal(t, Arr(Int(5), Int(20), Bulk("4")), q.jobsHead(jobs("dead", "1", "", "", "2")...))
		require.Equal(t, []string{"3", "2"}, q.jobsIDs(jobs("dead", "1", "20", "4", "2")...))
		require.Equal(t, []string{"1"}, q.jobsIDs(jobs("dead", "1", "20", "2", "2")...))
		require.Equal(t, Arr(Int(5), Nil, Nil), q.jobsHead(jobs("dead", "1", "20", "2", "2")...))
		require.Equal(t, []string{}, q.jobsIDs(jobs("dead", "1", "10", "1", "2")...))
	})
	scenario(t, env, "a page of exactly the rest ends the walk", func(t *testing.T, q *queue) {
		fiveDead(q)
		require.Equal(t, Arr(Int(5), Nil, Nil), q.jobsHead(jobs("dead", "0", "20", "3", "2")...))
	})
	scenario(t, env, "the cursor's job left the set", func(t *testing.T, q *queue) {
		fiveDead(q)
		require.Equal(t, Int(1), q.call(protocol.Requeue, "3"))
		require.Equal(t, []string{"4", "5"}, q.jobsIDs(jobs("dead", "0", "20", "3", "10")...))
		require.Equal(t, []string{"2", "1"}, q.jobsIDs(jobs("dead", "1", "20", "3", "10")...))
		// a cursor between two scores
		require.Equal(t, []string{"5"}, q.jobsIDs(jobs("dead", "0", "25", "9", "10")...))
		require.Equal(t, []string{"4", "2", "1"}, q.jobsIDs(jobs("dead", "1", "25", "9", "10")...))
		// a cursor past either end
		require.Equal(t, []string{}, q.jobsIDs(jobs("dead", "0", "99", "1", "10")...))
		require.Equal(t, []string{"5", "4", "2", "1"}, q.jobsIDs(jobs("dead", "1", "99", "1", "10")...))
		require.Equal(t, []string{"1", "2", "4", "5"}, q.jobsIDs(jobs("dead", "0", "0", "", "10")...))
	})
	scenario(t, env, "the cursor's job moved to another score", func(t *testing.T, q *queue) {
		fiveDead(q)
		q.do("ZADD", q.k.Dead, "XX", "40", "3")
		require.Equal(t, []string{"4", "5", "3"}, q.jobsIDs(jobs("dead", "0", "20", "3", "10")...))
		require.Equal(t, []string{"2", "1"}, q.jobsIDs(jobs("dead", "1", "20", "3", "10")...))
	})
	scenario(t, env, "members of one score in byte order", func(t *testing.T, q *queue) {
		q.install()
		// byte order: 1 < 10 < 100 < 2 < 9 (rowless members)
		q.do("ZADD", q.k.Dead, "7", "9", "7", "100", "7", "2", "7", "1", "7", "10")
		require.Equal(t, []string{"1", "10", "100", "2", "9"}, q.jobsIDs(jobs("dead", "0", "", "", "10")...))
		for _, tc := range []struct{ after, newest, want string }{
			{"11", "0", "2 9"}, {"0", "0", "1 10 100 2 9"}, {"101", "0", "2 9"}, {"99", "0", ""}, {"3", "0", "9"},
			{"11", "1", "100 10 1"}, {"0", "1", ""}, {"99", "1", "9 2 100 10 1"}, {"3", "1", "2 100 10 1"},
			{"10", "0", "100 2 9"}, {"10", "1", "1"},
		} {
			require.Equal(t, strings.Fields(tc.want), q.jobsIDs(jobs("dead", tc.newest, "7", tc.after, "10")...), "after %s newest %s", tc.after, tc.newest)
		}
		require.Equal(t, page(5, 7, "10", absentRow("1", 7), absentRow("10", 7)), q.call(protocol.Jobs, jobs("dead", "0", "", "", "2")...))
	})
	scenario(t, env, "a large group of one score", func(t *testing.T, q *queue) {
		q.install()
		args := []string{"ZADD", q.k.Delayed}
		for i := 1; i <= 300; i++ {
			args = append(args, "5", strconv.Itoa(i))
		}
		q.do(args...)
		q.do("ZREM", q.k.Delayed, "150")
		// byte order after 150: 151 ... 159, 16, 160, ...
		require.Equal(t, []string{"151", "152", "153"}, q.jobsIDs(jobs("delayed", "0", "5", "150", "3")...))
		require.Equal(t, []string{"15", "149", "148"}, q.jobsIDs(jobs("delayed", "1", "5", "150", "3")...))
	})
	scenario(t, env, "a row's fields", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "payload", prio: "7", lane: "x", attempts: "1"})
		c := q.claimOne()
		q.must(protocol.Progress, c.id, c.token(), "half way")
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "1", "it broke"))
		died := q.score(q.k.Dead, c.id)
		want := jrow{id: "1", score: died, state: "dead", att: 1, max: 1, prio: 7, lane: "x", at: q.at("1"),
			err: "it br", errSize: 8, prog: "half ", dsize: 7, preview: "paylo"}
		require.Equal(t, page(1, 0, "", want), q.unchanged(q.verb(protocol.Jobs, "dead", "", "0", "", "", "10", "5")))
		want.err, want.prog, want.preview = "it broke", "half way", "payload"
		require.Equal(t, page(1, 0, "", want), q.call(protocol.Jobs, "dead", "", "0", "", "", "10", "1024"))
		want.err, want.prog, want.preview, want.emptyTexts = "", "", "", true
		require.Equal(t, page(1, 0, "", want), q.call(protocol.Jobs, "dead", "", "0", "", "", "10", "0"),
			"clip 0: empty texts, no preview")
	})
	scenario(t, env, "a large payload has its size and no preview", func(t *testing.T, q *queue) {
		q.install()
		big := strings.Repeat("b", protocol.MaxPreviewData+1)
		edge := strings.Repeat("e", protocol.MaxPreviewData)
		q.add(job{data: big}, job{data: edge}, job{data: ""})
		s1, s2, s3 := protocol.PendingScore(0, 1), protocol.PendingScore(0, 2), protocol.PendingScore(0, 3)
		require.Equal(t, page(3, 0, "",
			jrow{id: "1", score: s1, state: "pending", max: 3, at: q.at("1"), dsize: int64(len(big))},
			jrow{id: "2", score: s2, state: "pending", max: 3, at: q.at("2"), dsize: int64(len(edge)), preview: "ee"},
			jrow{id: "3", score: s3, state: "pending", max: 3, at: q.at("3"), emptyPreview: true}),
			q.call(protocol.Jobs, "pending", "", "0", "", "", "10", "2"))
	})
	scenario(t, env, "pending in claim order, and a lane's", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", prio: "1"}, job{data: "b", prio: "9"}, job{data: "c", prio: "1"},
			job{data: "d", lane: "x", prio: "2"}, job{data: "e", lane: "x", prio: "5"})
		require.Equal(t, []string{"2", "1", "3"}, q.jobsIDs(jobs("pending", "0", "", "", "10")...))
		require.Equal(t, []string{"3", "1", "2"}, q.jobsIDs(jobs("pending", "1", "", "", "10")...))
		after := strconv.FormatInt(protocol.PendingScore(9, 2), 10)
		require.Equal(t, []string{"1", "3"}, q.jobsIDs(jobs("pending", "0", after, "2", "10")...))
		require.Equal(t, []string{"5", "4"}, q.jobsIDs("pending", "x", "0", "", "", "10", "0"))
		require.Equal(t, []string{}, q.jobsIDs("pending", "y", "0", "", "", "10", "0"))
	})
	scenario(t, env, "delayed, active, waiting and completed", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "600000", "0", "0", "0", "0")
		q.add(job{data: "late", delay: "600000"}, job{data: "soon", delay: "300000"})
		q.add(job{data: "p"}, child("c", "1"), job{data: "w"})
		cs := q.claim(600000, 2) // the child 4 and job 5
		require.Len(t, cs, 2)
		require.Equal(t, []string{"2", "1"}, q.jobsIDs(jobs("delayed", "0", "", "", "10")...))
		require.Equal(t, []string{"4", "5"}, q.jobsIDs(jobs("active", "0", "", "", "10")...))
		deps := q.call(protocol.Jobs, "waiting", "", "0", "", "", "10", "0")
		require.Equal(t, page(1, 0, "", jrow{id: "3", score: 3, state: "waiting", max: 3, deps: 1, at: q.at("3"), dsize: 1}), deps)
		q.must(protocol.Complete, cs[1].id, cs[1].token(), "r")
		done := q.score(q.k.Fixed(protocol.SuffixCompleted), "5")
		require.Equal(t, page(1, 0, "", jrow{id: "5", score: done, state: "completed", att: 1, max: 3, at: q.at("5"), dsize: 1, preview: "w"}),
			q.call(protocol.Jobs, "completed", "", "0", "", "", "10", "10"))
		require.Equal(t, []string{"4"}, q.jobsIDs(jobs("active", "0", "", "", "10")...))
		require.Equal(t, page(1, 0, "", jrow{id: "4", score: q.score(q.k.Active, "4"), state: "active", att: 1, max: 3,
			parent: "3", at: q.at("4"), dsize: 1, preview: "c"}), q.call(protocol.Jobs, "active", "", "0", "", "", "10", "10"))
	})
	scenario(t, env, "an absent set", func(t *testing.T, q *queue) {
		q.install()
		for _, state := range protocol.JobsStates {
			require.Equal(t, page(0, 0, ""), q.unchanged(q.verb(protocol.Jobs, jobs(state, "0", "", "", "10")...)), state)
			require.Equal(t, page(0, 0, ""), q.call(protocol.Jobs, jobs(state, "1", "5", "1", "10")...), state)
		}
	})
	scenario(t, env, "rowless members", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", q.k.Dead, "1", "x", "2", "77")
		q.do("HSET", q.k.Job("77"), "data", "no att")
		require.Equal(t, page(2, 0, "", absentRow("x", 1), absentRow("77", 2)), q.call(protocol.Jobs, jobs("dead", "0", "", "", "10")...))
	})
	scenario(t, env, "bounded by count", func(t *testing.T, q *queue) {
		q.install()
		jobs := make([]job, protocol.MaxCount+5)
		for i := range jobs {
			jobs[i] = job{data: "j"}
		}
		q.add(jobs[:protocol.MaxCount]...)
		q.add(jobs[protocol.MaxCount:]...)
		ids := q.jobsIDs("pending", "", "0", "", "", strconv.Itoa(protocol.MaxCount), "0")
		require.Len(t, ids, protocol.MaxCount)
		last := strconv.Itoa(protocol.MaxCount)
		require.Equal(t, last, ids[len(ids)-1])
		after := strconv.FormatInt(protocol.PendingScore(0, protocol.MaxCount), 10)
		require.Equal(t, []string{"1001", "1002", "1003", "1004", "1005"}, q.jobsIDs("pending", "", "0", after, last, "1000", "0"))
	})
	scenario(t, env, "values", func(t *testing.T, q *queue) {
		args := fixtures[protocol.Jobs](q)
		for _, tc := range []struct {
			i, j      int
			a, b, bad string
		}{
			{1, 0, "x", "dead", "lane"},               // a lane with another state than pending
			{3, 4, "", "1", "after"},                  // a member without a score
			{3, 4, "01", "1", "after"},                // not canonical
			{3, 4, "-1", "1", "after"},                // negative
			{3, 4, "1.5", "1", "after"},               // not an integer
			{3, 4, "9007199254740992", "1", "after"},  // 2^53
			{3, 4, "10000000000000000", "1", "after"}, // 17 digits
		} {
			a := append([]string(nil), args...)
			a[tc.i], a[tc.j] = tc.a, tc.b
			q.refuse(protocol.ErrBadArg("jobs", tc.bad), q.verb(protocol.Jobs, a...))
		}
		for _, after := range [][2]string{{"9007199254740991", "1"}, {"0", ""}, {"5", "\x00\xff"}, {"1000000000000000", "1"}} {
			a := append([]string(nil), args...)
			a[3], a[4] = after[0], after[1]
			require.NoError(t, q.exec(protocol.Jobs, a...).Error(), "after %q", after)
		}
	})
}

// testRequeueDead: EMQ.REQUEUEDEAD is REQUEUE for the dead jobs a filter
// takes, walking dead oldest first in bounded calls.
func testRequeueDead(t *testing.T, env Env) {
	scenario(t, env, "requeues every dead job, in calls of limit", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", prio: "3"}, job{data: "b"}, job{data: "c"}, job{data: "d"}, job{data: "e"})
		q.do("ZADD", q.k.Dead, "XX", "10", "1", "20", "2", "20", "3", "20", "4", "30", "5")
		q.do("DEL", q.k.Signal)
		require.Equal(t, walk(2, 2, 20, "2"), q.call(protocol.RequeueDead, "2", "", "", "0", maxScore, "", ""))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		require.Equal(t, walk(2, 2, 20, "4"), q.call(protocol.RequeueDead, "2", "20", "2", "0", maxScore, "", ""))
		require.Equal(t, walk(1, 1, 0, ""), q.call(protocol.RequeueDead, "2", "20", "4", "0", maxScore, "", ""))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Dead))
		require.Equal(t, Bulks("1", "2", "3", "4", "5"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, protocol.PendingScore(3, 1), q.score(q.k.Pending, "1"))
		require.Equal(t, Bulks("pending", "1", "2", "boom 1"), q.r("HMGET", q.k.Job("1"), "state", "att", "max", "err"))
		require.Equal(t, Bulk("5"), q.r("HGET", q.k.Stats, "requeued"))
		// a fresh set of attempts
		c := q.claimOne()
		require.Equal(t, claimed{"1", "a", 2}, c)
	})
	scenario(t, env, "a page of exactly the rest ends the walk", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"})
		require.Equal(t, walk(2, 2, 0, ""), q.call(protocol.RequeueDead, "2", "", "", "0", maxScore, "", ""))
	})
	scenario(t, env, "by lane", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", lane: "x"}, job{data: "b"}, job{data: "c", lane: "y"}, job{data: "d", lane: "x"})
		require.Equal(t, walk(2, 4, 0, ""), q.call(protocol.RequeueDead, deadFilter("10", "x", "")...))
		require.Equal(t, Bulks("2", "3"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, Bulks("1", "4"), q.r("ZRANGE", q.k.Lane("x"), "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending))
		require.Equal(t, Bulk("2"), q.r("HGET", q.k.Meta, protocol.MetaLaneWait))
		require.Equal(t, Bulks("x"), q.r("ZRANGE", q.k.Fixed(protocol.SuffixTurns), "0", "-1"))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		require.Equal(t, Bulk("2"), q.r("HGET", q.k.Stats, "requeued"))
	})
	scenario(t, env, "by error text", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"}, job{data: "c"})
		q.do("HSET", q.k.Job("2"), "err", "timeout: upstream 502")
		q.do("HSET", q.k.Job("3"), "err", "upstream\x00bin")
		require.Equal(t, walk(2, 3, 0, ""), q.call(protocol.RequeueDead, deadFilter("10", "", "upstream")...))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		q.do("HDEL", q.k.Job("1"), "err")
		require.Equal(t, walk(0, 1, 0, ""), q.unchanged(q.verb(protocol.RequeueDead, deadFilter("10", "", "b")...)),
			"an absent error contains nothing")
		// a pattern character is a byte like any other
		q.do("HSET", q.k.Job("1"), "err", "50% done")
		require.Equal(t, walk(0, 1, 0, ""), q.unchanged(q.verb(protocol.RequeueDead, deadFilter("10", "", "%d")...)))
		require.Equal(t, walk(1, 1, 0, ""), q.call(protocol.RequeueDead, deadFilter("10", "", "% d")...))
	})
	scenario(t, env, "by time of death, the walk ends past max", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"}, job{data: "c"}, job{data: "d"})
		q.do("ZADD", q.k.Dead, "XX", "10", "1", "20", "2", "30", "3", "40", "4")
		require.Equal(t, walk(1, 1, 20, "2"), q.call(protocol.RequeueDead, "1", "", "", "15", "30", "", ""))
		require.Equal(t, walk(1, 1, 0, ""), q.call(protocol.RequeueDead, "1", "20", "2", "15", "30", "", ""))
		require.Equal(t, Bulks("1", "4"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, walk(0, 0, 0, ""), q.unchanged(q.verb(protocol.RequeueDead, "10", "", "", "50", "60", "", "")))
		require.Equal(t, walk(0, 0, 0, ""), q.unchanged(q.verb(protocol.RequeueDead, "10", "", "", "30", "20", "", "")))
		// a cursor before min starts at min
		require.Equal(t, walk(1, 1, 0, ""), q.call(protocol.RequeueDead, "10", "5", "1", "40", "40", "", ""))
	})
	scenario(t, env, "the walk passes the jobs it does not take", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b", lane: "x"}, job{data: "c"}, job{data: "d", lane: "x"})
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Job("1"), "att"))
		q.do("ZADD", q.k.Dead, "XX", "10", "1", "20", "2", "30", "3", "40", "4")
		require.Equal(t, walk(1, 2, 20, "2"), q.call(protocol.RequeueDead, "2", "", "", "0", maxScore, "x", ""))
		require.Equal(t, walk(1, 2, 0, ""), q.call(protocol.RequeueDead, "2", "20", "2", "0", maxScore, "x", ""))
		require.Equal(t, Bulks("1", "3"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
	})
	scenario(t, env, "a member not dead by its row stays", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"})
		q.do("HSET", q.k.Job("1"), "state", "pending")
		q.do("ZADD", q.k.Dead, "0", "x", "0", "99")
		require.Equal(t, walk(1, 4, 0, ""), q.call(protocol.RequeueDead, deadFilter("10", "", "")...))
		require.Equal(t, Bulks("99", "x", "1"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
	})
	scenario(t, env, "a child is detached, a parent loses cfail", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "c", parent: "1", attempts: "1"})
		c := q.claimOne()
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "0", "x"))
		require.Equal(t, Bulks("dead", "2"), q.r("HMGET", q.k.Job("1"), "state", "cfail"))
		require.Equal(t, walk(2, 2, 0, ""), q.call(protocol.RequeueDead, deadFilter("10", "", "")...))
		require.Equal(t, "[(nil), (nil), (nil)]", q.r("HMGET", q.k.Job("2"), "parent", "onfail", "cfail"))
		require.Equal(t, "[(nil)]", q.r("HMGET", q.k.Job("1"), "cfail"))
		require.Equal(t, Bulks("1", "2"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
	})
	scenario(t, env, "events", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Events, "100")
		q.deadJobs(job{data: "a"}, job{data: "b"})
		q.do("DEL", q.k.Fixed(protocol.SuffixEvents))
		require.Equal(t, walk(2, 2, 0, ""), q.call(protocol.RequeueDead, deadFilter("10", "", "")...))
		require.Equal(t, []string{entry(event("requeued", "1"), event("requeued", "2"))}, q.eventLog())
	})
	scenario(t, env, "the counter is predicted", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"})
		q.do("HSET", q.k.Stats, "requeued", "9223372036854775806")
		q.refuse(protocol.ErrOverflow, q.verb(protocol.RequeueDead, deadFilter("10", "", "")...))
		q.do("HSET", q.k.Stats, "requeued", "x")
		q.refuse(protocol.ErrHashNotInteger, q.verb(protocol.RequeueDead, deadFilter("10", "", "")...))
	})
	scenario(t, env, "a later denied row refuses the whole call", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"}, job{data: "b"})
		user := q.as(map[string]string{classRows: ""}, "%RW~"+q.k.Job("1"))
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.RequeueDead, deadFilter("10", "", "")...))
	})
}

// testRemoveDead: EMQ.REMOVEDEAD is REMOVE for the dead jobs a filter takes.
func testRemoveDead(t *testing.T, env Env) {
	scenario(t, env, "removes dead jobs older than max", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", unique: "u"}, job{data: "b"}, job{data: "c"})
		q.do("ZADD", q.k.Dead, "XX", "10", "1", "20", "2", "30", "3")
		q.do("RPUSH", q.k.Logs("1"), "line")
		q.do("SET", q.k.Unique("u"), "1")
		require.Equal(t, walk(1, 1, 10, "1"), q.call(protocol.RemoveDead, "1", "", "", "0", "20", "", ""))
		require.Equal(t, walk(1, 1, 0, ""), q.call(protocol.RemoveDead, "1", "10", "1", "0", "20", "", ""))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("1"), q.k.Logs("1"), q.k.Unique("u"), q.k.Job("2")))
		require.Equal(t, Bulks("3"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, Bulk("2"), q.r("HGET", q.k.Stats, "removed"))
		require.Equal(t, Int(1), q.r("EXISTS", q.k.Job("3")))
	})
	scenario(t, env, "a unique key held by another job stays", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", unique: "u"})
		q.do("SET", q.k.Unique("u"), "7")
		require.Equal(t, walk(1, 1, 0, ""), q.call(protocol.RemoveDead, deadFilter("10", "", "")...))
		require.Equal(t, Bulk("7"), q.r("GET", q.k.Unique("u")))
	})
	scenario(t, env, "by lane and error", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", lane: "x"}, job{data: "b", lane: "x"}, job{data: "c"})
		q.do("HSET", q.k.Job("2"), "err", "disk full")
		require.Equal(t, walk(1, 3, 0, ""), q.call(protocol.RemoveDead, deadFilter("10", "x", "full")...))
		require.Equal(t, Bulks("1", "3"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("2")))
	})
	scenario(t, env, "rowless members leave dead uncounted", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"})
		q.do("ZADD", q.k.Dead, "0", "x", "0", "99")
		q.do("HSET", q.k.Job("99"), "data", "no att")
		require.Equal(t, walk(0, 2, 0, "x"), q.call(protocol.RemoveDead, "2", "", "", "0", maxScore, "lane", ""))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, Bulk("no att"), q.r("HGET", q.k.Job("99"), "data"), "a row without att is left as it is")
		require.Equal(t, Nil, q.r("HGET", q.k.Stats, "removed"))
	})
	scenario(t, env, "a member not dead by its row stays", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"})
		q.do("HSET", q.k.Job("1"), "state", "pending")
		require.Equal(t, walk(0, 1, 0, ""), q.unchanged(q.verb(protocol.RemoveDead, deadFilter("10", "", "")...)))
	})
	scenario(t, env, "a dead parent's flow keys go with it", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "c", parent: "1", attempts: "1", onfail: protocol.OnFailContinue},
			job{data: "d", parent: "1", attempts: "1"})
		for _, c := range q.claim(600000, 2) {
			require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "0", "x"+c.id))
		}
		require.Equal(t, Bulk("dead"), q.r("HGET", q.k.Job("1"), "state"))
		require.Equal(t, Int(2), q.r("EXISTS", q.k.Kids("1"), q.k.Failures("1")))
		require.Equal(t, walk(3, 3, 0, ""), q.call(protocol.RemoveDead, deadFilter("10", "", "")...))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("1"), q.k.Kids("1"), q.k.Failures("1"), q.k.Job("2"), q.k.Job("3")))
		require.Equal(t, Bulk("3"), q.r("HGET", q.k.Stats, "removed"))
	})
	scenario(t, env, "events", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Events, "100")
		q.deadJobs(job{data: "a"}, job{data: "b"})
		q.do("DEL", q.k.Fixed(protocol.SuffixEvents))
		require.Equal(t, walk(2, 2, 0, ""), q.call(protocol.RemoveDead, deadFilter("10", "", "")...))
		require.Equal(t, []string{entry(event("removed", "1"), event("removed", "2"))}, q.eventLog())
	})
	scenario(t, env, "the counter is predicted", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a"})
		q.do("HSET", q.k.Stats, "removed", "9223372036854775807")
		q.refuse(protocol.ErrOverflow, q.verb(protocol.RemoveDead, deadFilter("10", "", "")...))
	})
	scenario(t, env, "a unique key read-only", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", unique: "u"})
		q.do("SET", q.k.Unique("u"), "1")
		user := q.as(map[string]string{classUnique: "R"})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.RemoveDead, deadFilter("10", "", "")...))
	})
	scenario(t, env, "a unique key of another type", func(t *testing.T, q *queue) {
		q.deadJobs(job{data: "a", unique: "u"})
		q.plant(q.k.Unique("u"), "string")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.RemoveDead, deadFilter("10", "", "")...))
	})
}

// testPromoteAll: EMQ.PROMOTEALL moves delayed jobs to pending, due or not.
func testPromoteAll(t *testing.T, env Env) {
	scenario(t, env, "moves jobs not due, soonest first", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", delay: "600000", prio: "2"}, job{data: "b", delay: "300000"}, job{data: "c", delay: "900000", lane: "x"})
		require.Equal(t, Arr(Int(2), Int(1)), q.call(protocol.PromoteAll, "2"))
		require.Equal(t, Bulks("1", "2"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, protocol.PendingScore(2, 1), q.score(q.k.Pending, "1"))
		require.Equal(t, []string{"pending", "pending", "delayed"}, []string{q.hget("1", "state"), q.hget("2", "state"), q.hget("3", "state")})
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		require.Equal(t, Arr(Int(1), Int(0)), q.call(protocol.PromoteAll, "2"))
		require.Equal(t, Bulks("3"), q.r("ZRANGE", q.k.Lane("x"), "0", "-1"))
		require.Equal(t, Arr(Int(0), Int(0)), q.unchanged(q.verb(protocol.PromoteAll, "2")))
	})
	scenario(t, env, "rowless members leave delayed uncounted", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", q.k.Delayed, "0", "77", "0", "x", "5", "8")
		require.Equal(t, Arr(Int(0), Int(1)), q.call(protocol.PromoteAll, "2"))
		require.Equal(t, Bulks("8"), q.r("ZRANGE", q.k.Delayed, "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending, q.k.Signal))
	})
	scenario(t, env, "events", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Events, "100")
		q.add(job{data: "a", delay: "600000"})
		q.do("DEL", q.k.Fixed(protocol.SuffixEvents))
		require.Equal(t, Arr(Int(1), Int(0)), q.call(protocol.PromoteAll, "10"))
		require.Equal(t, []string{evt("promoted", "1")}, q.eventLog())
	})
}

// hget is a row field as every verb reads it ("" when absent): a field a
// present row leaves out at its default reads as the default.
func (q *queue) hget(id, field string) string {
	q.t.Helper()
	f, err := q.cmd("HMGET", q.k.Job(id), field, protocol.FieldAttempts).ToArray()
	require.NoError(q.t, err)
	v, err := f[0].ToString()
	if err == nil || !f[1].IsString() {
		return v
	}
	return rowDefaults[field]
}

// rowDefaults are the values of the fields ADD leaves out of a row at their
// defaults.
var rowDefaults = map[string]string{
	protocol.FieldState: protocol.DefaultState, protocol.FieldMax: protocol.DefaultMax,
	protocol.FieldPriority: protocol.DefaultPriority, protocol.FieldBackoff: protocol.DefaultBackoff,
}

// testRetry: EMQ.RETRY moves one delayed job to pending now.
func testRetry(t *testing.T, env Env) {
	scenario(t, env, "a delayed job runs now", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", delay: "600000", prio: "4"})[0]
		require.Equal(t, Int(1), q.call(protocol.Retry, id))
		require.Equal(t, "pending", q.hget(id, "state"))
		require.Equal(t, protocol.PendingScore(4, 1), q.score(q.k.Pending, id))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Delayed))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		require.Equal(t, Arr(Arr(Bulk(id), Bulk("a"), Int(1))), q.call(protocol.Claim, "30000", "1"))
	})
	scenario(t, env, "a retrying job runs now", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", backoffMS: "600000"})
		c := q.claimOne()
		require.Equal(t, Bulk(protocol.FailRetry), q.call(protocol.Fail, c.id, c.token(), "1", "x"))
		require.Equal(t, Int(1), q.call(protocol.Retry, c.id))
		require.Equal(t, Arr(Arr(Bulk(c.id), Bulk("a"), Int(2))), q.call(protocol.Claim, "30000", "1"))
	})
	scenario(t, env, "a laned job goes to its lane", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", delay: "600000", lane: "x"})[0]
		require.Equal(t, Int(1), q.call(protocol.Retry, id))
		require.Equal(t, Bulks(id), q.r("ZRANGE", q.k.Lane("x"), "0", "-1"))
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Meta, protocol.MetaLaneWait))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending))
	})
	scenario(t, env, "not delayed", func(t *testing.T, q *queue) {
		dead := q.deadJobs(job{data: "b"})[0]
		q.refuse(protocol.ErrRetryNotDelayed, q.verb(protocol.Retry, dead))
		pending := q.addOne("a")
		q.refuse(protocol.ErrRetryNotDelayed, q.verb(protocol.Retry, pending))
		id := q.add(job{data: "c", delay: "600000"})[0]
		q.do("ZREM", q.k.Delayed, id)
		q.refuse(protocol.ErrRetryNotDelayed, q.verb(protocol.Retry, id))
	})
	scenario(t, env, "gone row", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", q.k.Delayed, "0", "5")
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Retry, "5")))
	})
	scenario(t, env, "events", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Events, "100")
		id := q.add(job{data: "a", delay: "600000"})[0]
		q.do("DEL", q.k.Fixed(protocol.SuffixEvents))
		require.Equal(t, Int(1), q.call(protocol.Retry, id))
		require.Equal(t, []string{evt("promoted", id)}, q.eventLog())
	})
}

// testOpsRefusals: the operations verbs' refusals that the generic groups
// (shape, values, wrongtype, acl) do not reach.
func testOpsRefusals(t *testing.T, env Env) {
	// A denied row is refused where it is read: an earlier row of another
	// type is refused first (JOBS, REQUEUEDEAD, PROMOTEALL, as CLAIM and
	// PROMOTE); REMOVEDEAD checks every key it deletes before any read, as
	// TRIM does.
	twoRows := map[*protocol.Verb]func(q *queue) []string{
		protocol.Jobs: func(q *queue) []string {
			q.deadJobs(job{data: "a"}, job{data: "b"})
			return []string{protocol.StateDead, "", "0", "", "", "10", "0"}
		},
		protocol.RequeueDead: func(q *queue) []string {
			q.deadJobs(job{data: "a"}, job{data: "b"})
			return deadFilter("10", "", "")
		},
		protocol.RemoveDead: func(q *queue) []string {
			q.deadJobs(job{data: "a"}, job{data: "b"})
			return deadFilter("10", "", "")
		},
		protocol.PromoteAll: func(q *queue) []string {
			q.install()
			q.add(job{data: "a", delay: "600000"}, job{data: "b", delay: "700000"})
			return []string{"10"}
		},
	}
	for _, v := range []*protocol.Verb{protocol.Jobs, protocol.RequeueDead, protocol.RemoveDead, protocol.PromoteAll} {
		scenario(t, env, v.Name+": an earlier row's type and a later denied row", func(t *testing.T, q *queue) {
			args := twoRows[v](q)
			q.plant(q.k.Job("1"), "hash")
			user := q.as(map[string]string{classRows: ""}, "%RW~"+q.k.Job("1"))
			want := protocol.ErrWrongType
			if v == protocol.RemoveDead {
				want = protocol.ErrNoPerm
			}
			user.refuse(want, user.verb(v, args...))
		})
		scenario(t, env, v.Name+": a later denied row refuses the whole call", func(t *testing.T, q *queue) {
			args := twoRows[v](q)
			user := q.as(map[string]string{classRows: ""}, "%RW~"+q.k.Job("1"))
			user.refuse(protocol.ErrNoPerm, user.verb(v, args...))
		})
	}

	scenario(t, env, "jobs: a lane's set of another type", func(t *testing.T, q *queue) {
		q.install()
		q.plant(q.k.Lane("x"), "zset")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Jobs, "pending", "x", "0", "", "", "10", "0"))
	})
	for _, state := range []string{protocol.StateCompleted, protocol.StateWaiting} {
		scenario(t, env, "jobs: "+state+" denied", func(t *testing.T, q *queue) {
			q.install()
			user := q.as(map[string]string{classFlows: ""})
			user.refuse(protocol.ErrNoPerm, user.verb(protocol.Jobs, state, "", "0", "", "", "10", "0"))
			q.do("ZADD", q.k.Fixed(state), "1", "1")
			q.plant(q.k.Fixed(state), "zset")
			q.refuse(protocol.ErrWrongType, q.verb(protocol.Jobs, state, "", "0", "", "", "10", "0"))
		})
	}
	scenario(t, env, "jobs: a lane denied", func(t *testing.T, q *queue) {
		q.install()
		user := q.as(map[string]string{classLanes: ""})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Jobs, "pending", "x", "0", "", "", "10", "0"))
		require.NoError(t, user.exec(protocol.Jobs, "pending", "", "0", "", "", "10", "0").Error())
	})
	scenario(t, env, "jobs: a fixed set denied", func(t *testing.T, q *queue) {
		q.install()
		user := q.as(map[string]string{protocol.SuffixDelayed: ""})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Jobs, "delayed", "", "0", "", "", "10", "0"))
	})
	// with job events on, the events stream must be writable: a caller
	// denied it, or a key of another type, refuses the whole call; a
	// stream of another brand gets the events appended
	for _, v := range []*protocol.Verb{protocol.RequeueDead, protocol.RemoveDead, protocol.PromoteAll, protocol.Retry} {
		scenario(t, env, v.Name+": events stream denied, of another type, of another brand", func(t *testing.T, q *queue) {
			args := fixtures[v](q)
			q.do("HSET", q.k.Job("1"), protocol.FieldEvents, "100") // as if added with events on
			user := q.as(map[string]string{protocol.SuffixEvents: ""})
			user.refuse(protocol.ErrNoPerm, user.verb(v, args...))
			q.do("SET", q.k.Fixed(protocol.SuffixEvents), "not a stream")
			q.refuse(protocol.ErrWrongType, q.verb(v, args...))
			q.do("DEL", q.k.Fixed(protocol.SuffixEvents))
			q.do("XADD", q.k.Fixed(protocol.SuffixEvents), "*", "brand", "other")
			require.False(t, isErr(q.call(v, args...)))
			require.Equal(t, Int(2), q.r("XLEN", q.k.Fixed(protocol.SuffixEvents)), "the events appended after the foreign entry")
		})
	}
	for _, v := range []*protocol.Verb{protocol.RequeueDead, protocol.RemoveDead} {
		scenario(t, env, v.Name+": values in order", func(t *testing.T, q *queue) {
			args := fixtures[v](q)
			for _, tc := range []struct {
				bad  map[int]string
				want string
			}{
				{map[int]string{1: "", 2: "x"}, "after"},
				{map[int]string{1: "x", 2: "1"}, "after"},
				{map[int]string{3: "-1"}, "min"},
				{map[int]string{3: "9007199254740992"}, "min"},
				{map[int]string{4: "01"}, "max"},
				{map[int]string{4: ""}, "max"},
				{map[int]string{0: "0", 3: "x"}, "limit"},
				{map[int]string{1: "1.5", 2: "1", 3: "x"}, "after"},
				{map[int]string{3: "x", 4: "x"}, "min"},
				{map[int]string{4: "x", 5: strings.Repeat("l", protocol.MaxLaneName+1)}, "max"},
				{map[int]string{5: strings.Repeat("l", protocol.MaxLaneName+1), 6: strings.Repeat("e", protocol.MaxText+1)}, "lane"},
			} {
				a := append([]string(nil), args...)
				for i, s := range tc.bad {
					a[i] = s
				}
				q.refuse(protocol.ErrBadArg(v.Name, tc.want), q.verb(v, a...))
			}
			a := append([]string(nil), args...)
			a[3], a[4] = maxScore, maxScore
			require.NoError(t, q.exec(v, a...).Error())
		})
	}
}

// testOpsInvariants: a fixed pseudo-random run of the job verbs and the
// operations verbs over a few lanes, checking after each call that the
// lane keys hold what they must (laneInvariants), that every member of a
// state's set has a row of that state, that the counters add up (added =
// completed + removed + trimmed + the jobs in the sets), and that a JOBS
// walk in small pages, either way, lists each set exactly in its order.
func testOpsInvariants(t *testing.T, env Env) {
	for seed := uint64(1); seed <= 4; seed++ {
		scenario(t, env, "seed "+strconv.FormatUint(seed, 10), func(t *testing.T, q *queue) {
			q.install()
			rng := rand.New(rand.NewPCG(seed, 11))
			lanes := []string{"a", "b\x00", ""}
			pick := func(key string) string {
				ids, err := q.cmd("ZRANGE", key, "0", "-1").AsStrSlice()
				require.NoError(t, err)
				if len(ids) == 0 {
					return ""
				}
				return ids[rng.IntN(len(ids))]
			}
			for step := range 120 {
				var what string
				switch op := rng.IntN(10); op {
				case 0, 1:
					n := 1 + rng.IntN(4)
					jobs := make([]job, n)
					for i := range jobs {
						jobs[i] = job{data: "d", lane: lanes[rng.IntN(len(lanes))], prio: strconv.Itoa(rng.IntN(3)),
							attempts: strconv.Itoa(1 + rng.IntN(2))}
						if rng.IntN(3) == 0 {
							jobs[i].delay = "600000"
						}
					}
					what = "add"
					q.add(jobs...)
				case 2:
					what = "claim and fail"
					for _, c := range q.claim(600000, 1+rng.IntN(3)) {
						q.must(protocol.Fail, c.id, c.token(), strconv.Itoa(rng.IntN(2)), "e"+strconv.Itoa(rng.IntN(3)))
					}
				case 3:
					what = "claim and complete"
					for _, c := range q.claim(600000, 1+rng.IntN(2)) {
						q.must(protocol.Complete, c.id, c.token(), "")
					}
				case 4:
					if id := pick(q.k.Delayed); id != "" {
						what = "retry " + id
						q.must(protocol.Retry, id)
					}
				case 5:
					what = "promoteall"
					q.must(protocol.PromoteAll, strconv.Itoa(1+rng.IntN(3)))
				case 6, 7:
					v := protocol.RequeueDead
					if op == 7 {
						v = protocol.RemoveDead
					}
					lane := []string{"", "a", "b\x00"}[rng.IntN(3)]
					errText := []string{"", "e1", "e"}[rng.IntN(3)]
					score, member := "", ""
					what = v.Name + " lane " + strconv.Quote(lane) + " error " + errText
					for range 100 {
						arr, err := q.exec(v, strconv.Itoa(1+rng.IntN(3)), score, member, "0", maxScore, lane, errText).ToArray()
						require.NoError(t, err, what)
						if arr[2].IsNil() {
							break
						}
						sc, err := arr[2].AsInt64()
						require.NoError(t, err)
						score = strconv.FormatInt(sc, 10)
						member, err = arr[3].ToString()
						require.NoError(t, err)
					}
				case 8:
					if id := pick(q.k.Dead); id != "" {
						what = "requeue " + id
						q.must(protocol.Requeue, id)
					}
				case 9:
					what = "claim"
					q.claim(600000, 1)
				}
				where := "step " + strconv.Itoa(step) + ": " + what
				q.laneInvariants(lanes[:len(lanes)-1], where)
				q.opsInvariants(lanes[:len(lanes)-1], rng, where)
			}
		})
	}
}

// opsInvariants checks the sets against their rows, the counters against
// the sets, and JOBS walks against the sets.
func (q *queue) opsInvariants(lanes []string, rng *rand.Rand, where string) {
	q.t.Helper()
	sets := map[string]string{
		q.k.Pending: protocol.StatePending, q.k.Delayed: protocol.StateDelayed,
		q.k.Active: protocol.StateActive, q.k.Dead: protocol.StateDead,
	}
	for _, l := range lanes {
		sets[q.laneKey(l)] = protocol.StatePending
	}
	var held int64
	for key, state := range sets {
		ids, err := q.cmd("ZRANGE", key, "0", "-1").AsStrSlice()
		require.NoError(q.t, err)
		held += int64(len(ids))
		for _, id := range ids {
			require.Equal(q.t, state, q.hget(id, "state"), "%s: job %s in %s", where, id, key)
		}
	}
	counter := func(name string) int64 {
		v, err := q.cmd("HGET", q.k.Stats, name).AsInt64()
		if err != nil {
			return 0
		}
		return v
	}
	require.Equal(q.t, counter("added"), counter("completed")+counter("removed")+counter("trimmed")+held, "%s: added", where)

	// one state, one lane and one direction per step keep the run short
	states := []string{protocol.StatePending, protocol.StateDelayed, protocol.StateActive, protocol.StateDead}
	state, lane, newest := states[rng.IntN(len(states))], "", rng.IntN(2)
	key := q.k.Fixed(state)
	if state == protocol.StatePending && rng.IntN(2) == 0 {
		lane = lanes[rng.IntN(len(lanes))]
		key = q.laneKey(lane)
	}
	want, err := q.cmd("ZRANGE", key, "0", "-1").AsStrSlice()
	require.NoError(q.t, err)
	if newest == 1 {
		slices.Reverse(want)
	}
	got := []string{}
	score, member := "", ""
	for range 1000 {
		arr, err := q.exec(protocol.Jobs, state, lane, strconv.Itoa(newest), score, member, "2", "0").ToArray()
		require.NoError(q.t, err, where)
		rows, err := arr[3].ToArray()
		require.NoError(q.t, err)
		for _, r := range rows {
			f, err := r.ToArray()
			require.NoError(q.t, err)
			id, err := f[0].ToString()
			require.NoError(q.t, err)
			got = append(got, id)
		}
		if arr[1].IsNil() {
			break
		}
		sc, err := arr[1].AsInt64()
		require.NoError(q.t, err)
		score = strconv.FormatInt(sc, 10)
		member, err = arr[2].ToString()
		require.NoError(q.t, err)
	}
	require.Equal(q.t, want, got, "%s: JOBS %s %q newest %d", where, state, lane, newest)
}
