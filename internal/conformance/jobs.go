package conformance

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

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
	scenario(t, env, "a row with a kind and one without", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", kind: "email.send"}, job{data: "b"})
		s1, s2 := protocol.PendingScore(0, 1), protocol.PendingScore(0, 2)
		with := jrow{id: "1", score: s1, state: "pending", max: 3, at: q.at("1"), dsize: 1, kind: "email.send"}
		without := jrow{id: "2", score: s2, state: "pending", max: 3, at: q.at("2"), dsize: 1}
		require.Equal(t, page(2, 0, "", with, without), q.unchanged(q.verb(protocol.Jobs, "pending", "", "0", "", "", "10", "0")))
		// the kind is not clipped, and read as stored, empty included
		with.preview = "a"
		require.Equal(t, page(2, s1, "1", with), q.call(protocol.Jobs, "pending", "", "0", "", "", "1", "1"))
		q.do("HSET", q.k.Job("2"), "kind", "")
		require.Equal(t, Arr(Int(2), Nil, Nil, Arr(Arr(Bulk("2"), Int(s2), Bulk("pending"), Int(0), Int(3), Int(0), Nil, Nil,
			Int(0), Int(q.at("2")), Nil, Int(0), Nil, Int(1), Nil, Bulk("")))),
			q.call(protocol.Jobs, "pending", "", "0", strconv.FormatInt(s1, 10), "1", "10", "0"))
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
