package conformance

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// waitingKey is the zset of the parents waiting for children.
func (q *queue) waitingKey() string { return q.fixed(protocol.SuffixWaiting) }

// completedKey is the zset of the retained completed jobs.
func (q *queue) completedKey() string { return q.fixed(protocol.SuffixCompleted) }

// doneKey is job id's outcome list.
func (q *queue) doneKey(id string) string { return q.k.Done(id) }

// fields is HMGET of the row's fields, rendered.
func (q *queue) fields(id string, names ...string) string {
	return q.r(append([]string{"HMGET", q.k.Job(id)}, names...)...)
}

// finish completes the claimed job c with result r.
func (q *queue) finish(c claimed, r string) {
	q.t.Helper()
	require.Equal(q.t, Int(1), q.call(protocol.Complete, c.id, c.token(), r))
}

// claimAll claims every ready job (up to 100) with a long lease, by id.
func (q *queue) claimAll() map[string]claimed {
	q.t.Helper()
	out := map[string]claimed{}
	for _, c := range q.claim(600000, 100) {
		out[c.id] = c
	}
	return out
}

// kill fails the claimed job c to dead with error e.
func (q *queue) kill(c claimed, e string) {
	q.t.Helper()
	require.Equal(q.t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "0", e))
}

// child is a job whose parent is the call's job at index p (1-based).
func child(data, p string) job { return job{data: data, parent: p} }

// childEntry is one entry of CHILDREN's reply; "" renders as null.
func childEntry(id, state, result, err string) string {
	orNil := func(s string) string {
		if s == "" {
			return Nil
		}
		return Bulk(s)
	}
	return Arr(Bulk(id), orNil(state), orNil(result), orNil(err))
}

// testFlowAdd: ADD's parent, onfail and wait columns.
func testFlowAdd(t *testing.T, env Env) {
	scenario(t, env, "a parent waits for its children", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, []string{"1", "2", "3", "4"}, q.add(job{data: "p"}, child("c1", "1"),
			job{data: "c2", parent: "1", onfail: protocol.OnFailContinue},
			job{data: "c3", parent: "1", onfail: protocol.OnFailFail, wait: "5000"}))
		require.Equal(t, Arr(Bulk("waiting"), Bulk("3"), Nil), q.fields("1", "state", "deps", "parent"))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.waitingKey(), "0", "-1"))
		require.Equal(t, int64(1), q.score(q.waitingKey(), "1"))
		require.Equal(t, Bulks("2", "3", "4"), q.r("ZRANGE", q.k.Kids("1"), "0", "-1"))
		for _, c := range []int64{2, 3, 4} {
			require.Equal(t, c, q.score(q.k.Kids("1"), strconv.FormatInt(c, 10)))
		}
		require.Equal(t, Bulks("2", "3", "4"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		// max 3 and prio 0, the defaults, and a child's state pending are left out
		require.Equal(t, Bulks("data", "state", "att", "bo", "at", "deps"), q.r("HKEYS", q.k.Job("1")))
		require.Equal(t, Bulks("data", "att", "bo", "at", "parent", "onfail"), q.r("HKEYS", q.k.Job("3")))
		require.Equal(t, Bulks("data", "att", "bo", "at", "parent", "wait"), q.r("HKEYS", q.k.Job("4")))
		require.Equal(t, Arr(Bulk("1"), Bulk("continue"), Nil), q.fields("3", "parent", "onfail", "wait"))
		require.Equal(t, Arr(Bulk("1"), Nil, Bulk("5000")), q.fields("4", "parent", "onfail", "wait"))
		require.Equal(t, Bulk("4"), q.r("HGET", q.k.Stats, "added"))
	})
	scenario(t, env, "a tree of three levels", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "root"}, child("mid", "1"), child("leaf", "2"), child("leaf2", "1"))
		require.Equal(t, Arr(Bulk("waiting"), Bulk("2")), q.fields("1", "state", "deps"))
		require.Equal(t, Arr(Bulk("waiting"), Bulk("1"), Bulk("1")), q.fields("2", "state", "deps", "parent"))
		require.Equal(t, Bulks("1", "2"), q.r("ZRANGE", q.waitingKey(), "0", "-1"))
		require.Equal(t, Bulks("3", "4"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, statsReplyWith(2, 0, 0, 0, false, [6]int64{0, 0, 0, 0, 2, 0}, "4"), q.call(protocol.Stats))
	})
	scenario(t, env, "onfail and wait without a parent", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", onfail: protocol.OnFailIgnore, wait: "0"}, job{data: "b", wait: "86400000"})
		require.Equal(t, Bulks("data", "att", "bo", "at"), q.r("HKEYS", q.k.Job("1")))
		require.Equal(t, Arr(Nil, Bulk("86400000")), q.fields("2", "onfail", "wait"))
	})
	scenario(t, env, "a chain of 16 levels", func(t *testing.T, q *queue) {
		q.install()
		jobs := []job{{data: "0"}}
		for i := 2; i <= protocol.MaxFlowDepth; i++ {
			jobs = append(jobs, child("c", strconv.Itoa(i-1)))
		}
		q.add(jobs...)
		require.Equal(t, Bulks("16"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
	})
	scenario(t, env, "a parent with a lane and a laned child", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p", lane: "l"}, job{data: "c", parent: "1", lane: "l"})
		require.Equal(t, laneReply(1, 0, 0, 0), q.call(protocol.Lane, "l"))
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.laneKey("l"), "0", "-1"))
		require.Equal(t, Arr(Bulk("waiting"), Bulk("l")), q.fields("1", "state", "lane"))
	})
	scenario(t, env, "rows added while retention is on are kept", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Retain, "0", "5", "0", "0", "0")
		q.add(job{data: "p"}, child("c", "1"))
		require.Equal(t, Bulks("data", "state", "att", "bo", "at", "keep", "deps"), q.r("HKEYS", q.k.Job("1")))
		require.Equal(t, Bulks("data", "att", "bo", "at", "keep", "parent"), q.r("HKEYS", q.k.Job("2")))
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Job("2"), "keep"))
	})

	badParent, badOnfail, badWait := protocol.ErrBadArg("add", "parent"), protocol.ErrBadArg("add", "onfail"), protocol.ErrBadArg("add", "wait")
	deep := []job{{data: "0"}}
	for i := 2; i <= protocol.MaxFlowDepth+1; i++ {
		deep = append(deep, child("c", strconv.Itoa(i-1)))
	}
	for _, tc := range []struct {
		name string
		argv []string
		want string
	}{
		{"parent forward", addArgs(child("a", "2"), job{data: "b"}), badParent},
		{"parent self", addArgs(job{data: "a"}, child("b", "2")), badParent},
		{"parent 0", addArgs(job{data: "a"}, child("b", "0")), badParent},
		{"parent 01", addArgs(job{data: "a"}, child("b", "01")), badParent},
		{"parent word", addArgs(job{data: "a"}, child("b", "x")), badParent},
		{"parent delayed", addArgs(job{data: "a", delay: "1000"}, child("b", "1")), badParent},
		{"too deep", addArgs(deep...), badParent},
		{"onfail Fail", addArgs(job{data: "a"}, job{data: "b", parent: "1", onfail: "Fail"}), badOnfail},
		{"onfail word", addArgs(job{data: "a", onfail: "x"}), badOnfail},
		{"wait past the bound", addArgs(job{data: "a", wait: "86400001"}), badWait},
		{"wait 01", addArgs(job{data: "a", wait: "01"}), badWait},
		{"wait -1", addArgs(job{data: "a", wait: "-1"}), badWait},
		{"lane before parent", addArgs(job{data: "a", lane: strings.Repeat("l", 129)}, child("b", "3")), protocol.ErrBadArg("add", "lane")},
		{"parent before onfail", addArgs(job{data: "a"}, job{data: "b", parent: "2", onfail: "x"}), badParent},
		{"onfail before wait", addArgs(job{data: "a", onfail: "x", wait: "x"}), badOnfail},
		{"a fixed value before parent", addArgs(job{data: "a"}, job{data: "b", prio: "1001", parent: "9"}), protocol.ErrBadArg("add", "priority")},
		{"option repeated", []string{"1", "2", "parent", "parent", "a", "0", "0", "3", "fixed", "0", "", "0", "", ""}, protocol.ErrBadArg("add", "option")},
		{"option parents", []string{"1", "1", "parents", "a", "0", "0", "3", "fixed", "0", "", "0", ""}, protocol.ErrBadArg("add", "option")},
		{"too many options", append([]string{"1", "9", "lane", "parent", "onfail", "wait", "a", "b", "c", "d", "e"},
			"a", "0", "0", "3", "fixed", "0", "", "0", "", "", "", "", "", "", "", "", ""), protocol.ErrBadArg("add", "options")},
	} {
		scenario(t, env, tc.name, func(t *testing.T, q *queue) {
			fixtures[protocol.Add](q)
			q.refuse(tc.want, q.verb(protocol.Add, tc.argv...))
		})
	}
	scenario(t, env, "a parent's kids key that exists", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", q.k.Kids("1"), "1", "9")
		q.refuse(protocol.ErrAddIDExists, q.verb(protocol.Add, addArgs(job{data: "p"}, child("c", "1"))...))
	})
	scenario(t, env, "waiting of another type", func(t *testing.T, q *queue) {
		q.install()
		q.plant(q.waitingKey(), "zset")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Add, addArgs(job{data: "p"}, child("c", "1"))...))
		q.add(job{data: "no parent"})
	})
	scenario(t, env, "flow keys denied", func(t *testing.T, q *queue) {
		q.install()
		user := q.as(map[string]string{classFlows: ""})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Add, addArgs(job{data: "p"}, child("c", "1"))...))
	})
}

// testFlowRelease: a parent waits until every child finished, then goes to
// pending or its lane, with its children's results.
func testFlowRelease(t *testing.T, env Env) {
	scenario(t, env, "released to pending when the last child completes", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("c1", "1"), child("c2", "1"))
		cs := q.claimAll()
		require.Len(t, cs, 2)
		q.finish(cs["2"], "r1")
		require.Equal(t, Arr(Bulk("waiting"), Bulk("1")), q.fields("1", "state", "deps"))
		require.Equal(t, Bulks("2", "r1"), Bulks(q.hgetall(q.k.Results("1"))...))
		q.do("DEL", q.k.Signal)
		q.finish(cs["3"], "")
		require.Equal(t, Arr(Bulk("pending"), Bulk("0")), q.fields("1", "state", "deps"))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.waitingKey()))
		require.Equal(t, Bulks("1"), q.signalOf(), "the parent went to an empty pending")
		require.Equal(t, Bulks("2", "r1"), Bulks(q.hgetall(q.k.Results("1"))...))
		require.Equal(t, Arr(childEntry("2", "", "r1", ""), childEntry("3", "", "", "")), q.call(protocol.Children, "1", "0", "10"))
		p := q.claimOne()
		require.Equal(t, "1", p.id)
		q.finish(p, "")
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Kids("1"), q.k.Results("1"), q.k.Job("1")))
		require.Equal(t, statsReply(0, 0, 0, 0, false, "3", "3"), q.call(protocol.Stats))
	})
	scenario(t, env, "released to its lane", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p", lane: "l", prio: "5"}, child("c", "1"))
		q.finish(q.claimOne(), "")
		require.Equal(t, laneReply(1, 0, 0, 0), q.call(protocol.Lane, "l"))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.laneKey("l"), "0", "-1"))
		require.Equal(t, protocol.PendingScore(5, 1), q.score(q.laneKey("l"), "1"))
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Meta, protocol.MetaLaneWait))
		require.Equal(t, Bulks("l"), q.r("ZRANGE", q.fixed(protocol.SuffixTurns), "0", "-1"))
		c := q.claimOne()
		require.Equal(t, "1", c.id)
	})
	scenario(t, env, "completemany completes several children of one parent", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("a", "1"), child("b", "1"), child("c", "1"), job{data: "x"})
		cs := q.claimAll()
		require.Equal(t, outcomes(1, 1, 1), q.call(protocol.CompleteMany, manyResults(cs["2"].with("ra"), cs["3"].with(""), cs["4"].with("rc"))...))
		require.Equal(t, Arr(Bulk("pending"), Bulk("0")), q.fields("1", "state", "deps"))
		require.Equal(t, Bulks("2", "ra", "4", "rc"), Bulks(q.hgetall(q.k.Results("1"))...))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
	})
	scenario(t, env, "completemany: one child done, one stale", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("a", "1"), child("b", "1"))
		cs := q.claimAll()
		require.Equal(t, outcomes(1, -1), q.call(protocol.CompleteMany, manyResults(cs["2"].with("ra"), triple{"3", "9", "rb"})...))
		require.Equal(t, Arr(Bulk("waiting"), Bulk("1")), q.fields("1", "state", "deps"))
		require.Equal(t, Bulks("2", "ra"), Bulks(q.hgetall(q.k.Results("1"))...))
	})
	scenario(t, env, "a parent not waiting is not touched", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("c", "1"))
		c := q.claimOne()
		q.do("HSET", q.k.Job("1"), "state", "pending")
		q.do("ZREM", q.waitingKey(), "1")
		q.do("ZADD", q.k.Pending, "1", "1")
		q.finish(c, "r")
		require.Equal(t, Arr(Bulk("pending"), Bulk("1")), q.fields("1", "state", "deps"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Results("1")))
	})
}

// testFlowPolicies: a child that dies, by its policy.
func testFlowPolicies(t *testing.T, env Env) {
	scenario(t, env, "fail: the parent dies once its children finished", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p", wait: "60000"}, job{data: "a", parent: "1", attempts: "1"}, child("b", "1"))
		cs := q.claimAll()
		q.kill(cs["2"], "boom")
		require.Equal(t, Arr(Bulk("waiting"), Bulk("1"), Bulk("2")), q.fields("1", "state", "deps", "cfail"))
		q.finish(cs["3"], "rb")
		require.Equal(t, Arr(Bulk("dead"), Bulk("0"), Bulk("child 2 failed")), q.fields("1", "state", "deps", "err"))
		require.Equal(t, Int(2), q.r("ZCARD", q.k.Dead))
		require.Equal(t, Bulks("dchild 2 failed"), q.r("LRANGE", q.doneKey("1"), "0", "-1"))
		require.Equal(t, Bulk("2"), q.r("HGET", q.k.Stats, "dead"))
		require.Equal(t, Arr(childEntry("2", "dead", "", ""), childEntry("3", "", "rb", "")), q.call(protocol.Children, "1", "0", "10"))
	})
	scenario(t, env, "fail: the first child that died is kept", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "a", parent: "1", attempts: "1"}, job{data: "b", parent: "1", attempts: "1"}, child("c", "1"))
		cs := q.claimAll()
		q.kill(cs["3"], "x")
		q.kill(cs["2"], "y")
		require.Equal(t, Bulk("3"), q.r("HGET", q.k.Job("1"), "cfail"))
		q.finish(cs["4"], "")
		require.Equal(t, Bulk("child 3 failed"), q.r("HGET", q.k.Job("1"), "err"))
	})
	scenario(t, env, "ignore: the parent goes on", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "a", parent: "1", attempts: "1", onfail: protocol.OnFailIgnore})
		q.kill(q.claimOne(), "boom")
		require.Equal(t, Arr(Bulk("pending"), Bulk("0"), Nil), q.fields("1", "state", "deps", "cfail"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Failures("1")))
	})
	scenario(t, env, "continue: the error is recorded", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "a", parent: "1", attempts: "1", onfail: protocol.OnFailContinue}, child("b", "1"))
		cs := q.claimAll()
		q.kill(cs["2"], "boom")
		q.finish(cs["3"], "ok")
		require.Equal(t, Bulk("pending"), q.r("HGET", q.k.Job("1"), "state"))
		require.Equal(t, Bulks("2", "boom"), Bulks(q.hgetall(q.k.Failures("1"))...))
		require.Equal(t, Arr(childEntry("2", "dead", "", "boom"), childEntry("3", "", "ok", "")), q.call(protocol.Children, "1", "0", "10"))
	})
	scenario(t, env, "a retry tells nobody", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("a", "1"))
		c := q.claimOne()
		require.Equal(t, Bulk(protocol.FailRetry), q.call(protocol.Fail, c.id, c.token(), "1", "x"))
		require.Equal(t, Arr(Bulk("waiting"), Bulk("1")), q.fields("1", "state", "deps"))
	})
	scenario(t, env, "death goes up a tree of three levels", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "root", wait: "60000"}, child("mid", "1"), job{data: "leaf", parent: "2", attempts: "1"})
		q.kill(q.claimOne(), "boom")
		require.Equal(t, Arr(Bulk("dead"), Bulk("child 3 failed")), q.fields("2", "state", "err"))
		require.Equal(t, Arr(Bulk("dead"), Bulk("child 2 failed"), Bulk("2")), q.fields("1", "state", "err", "cfail"))
		require.Equal(t, Bulks("1", "2", "3"), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.waitingKey()))
		require.Equal(t, Bulk("3"), q.r("HGET", q.k.Stats, "dead"))
		require.Equal(t, Bulks("dchild 2 failed"), q.r("LRANGE", q.doneKey("1"), "0", "-1"))
	})
	scenario(t, env, "death up the tree with continue in the middle", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "root"}, job{data: "mid", parent: "1", onfail: protocol.OnFailContinue}, job{data: "leaf", parent: "2", attempts: "1"})
		q.kill(q.claimOne(), "boom")
		require.Equal(t, Bulk("dead"), q.r("HGET", q.k.Job("2"), "state"))
		require.Equal(t, Arr(Bulk("pending"), Nil), q.fields("1", "state", "cfail"))
		require.Equal(t, Bulks("2", "child 3 failed"), Bulks(q.hgetall(q.k.Failures("1"))...))
	})
	scenario(t, env, "recover of a child's last attempt", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "a", parent: "1", attempts: "1", wait: "60000"})
		q.expired()
		require.Equal(t, Arr(Int(0), Int(1)), q.call(protocol.Recover, "10"))
		require.Equal(t, Arr(Bulk("dead"), Bulk("child 2 failed")), q.fields("1", "state", "err"))
		require.Equal(t, Bulks("dlease expired"), q.r("LRANGE", q.doneKey("2"), "0", "-1"))
		require.Equal(t, Bulk("2"), q.r("HGET", q.k.Stats, "dead"))
	})
}

// testFlowResults: results are bounded by result_max and the hard bound.
func testFlowResults(t *testing.T, env Env) {
	scenario(t, env, "the default bound", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.refuse(protocol.ErrResultTooLarge, q.verb(protocol.Complete, c.id, c.token(), strings.Repeat("r", protocol.DefaultResult+1)))
		q.finish(c, strings.Repeat("r", protocol.DefaultResult))
	})
	scenario(t, env, "result_max set by retain", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.must(protocol.Retain, "0", "0", "0", "0", "10")
		q.refuse(protocol.ErrResultTooLarge, q.verb(protocol.Complete, c.id, c.token(), strings.Repeat("r", 11)))
		q.finish(c, strings.Repeat("r", 10))
	})
	scenario(t, env, "result_max above the default", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.must(protocol.Retain, "0", "0", "0", "0", strconv.Itoa(protocol.MaxResult))
		q.finish(c, strings.Repeat("r", protocol.MaxResult))
	})
	scenario(t, env, "the hard bound", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.do("DEL", q.k.Version)
		q.refuse(protocol.ErrBadArg("complete", "result"), q.verb(protocol.Complete, c.id, c.token(), strings.Repeat("r", protocol.MaxResult+1)))
		q.refuse(protocol.ErrBadArg("completemany", "result"), q.verb(protocol.CompleteMany, manyResults(c.with(strings.Repeat("r", protocol.MaxResult+1)))...))
	})
	scenario(t, env, "completemany: too large is -3", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"})
		q.must(protocol.Retain, "0", "0", "0", "0", "2")
		cs := q.claimAll()
		require.Equal(t, outcomes(1, -3, 1), q.call(protocol.CompleteMany, manyResults(cs["1"].with("ab"), cs["2"].with("abc"), cs["3"].with(""))...))
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.k.Active, "0", "-1"))
		require.Equal(t, Bulk("2"), q.r("HGET", q.k.Stats, "completed"))
	})
	scenario(t, env, "completemany: only too large writes nothing", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.must(protocol.Retain, "0", "0", "0", "0", "1")
		require.Equal(t, outcomes(-3), q.unchanged(q.verb(protocol.CompleteMany, manyResults(c.with("ab"))...)))
	})
	scenario(t, env, "an empty result reads no meta", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.plant(q.k.Meta, "hash")
		q.finish(c, "")
	})
	scenario(t, env, "result_max of another type", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.plant(q.k.Meta, "hash")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Complete, c.id, c.token(), "r"))
	})
	scenario(t, env, "a stale token before the result's bound", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.must(protocol.Retain, "0", "0", "0", "0", "1")
		q.refuse(protocol.ErrStale("complete"), q.verb(protocol.Complete, c.id, "9", "ab"))
	})
}

// testFlowWait: a waited job's outcome is pushed to done:<id> with its TTL.
func testFlowWait(t *testing.T, env Env) {
	ttl := func(q *queue, id string) {
		q.t.Helper()
		ms, err := q.cmd("PTTL", q.doneKey(id)).AsInt64()
		require.NoError(q.t, err)
		within(q.t, ms, 1, 60000, "PTTL done")
	}
	scenario(t, env, "completed", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", wait: "60000"})
		q.finish(c, "res")
		require.Equal(t, Bulks("cres"), q.r("LRANGE", q.doneKey(c.id), "0", "-1"))
		ttl(q, c.id)
	})
	scenario(t, env, "completed without a result", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", wait: "60000"})
		require.Equal(t, outcomes(1), q.call(protocol.CompleteMany, manyResults(c.with(""))...))
		require.Equal(t, Bulks("c"), q.r("LRANGE", q.doneKey(c.id), "0", "-1"))
	})
	scenario(t, env, "died", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", wait: "60000"})
		q.kill(c, "boom")
		require.Equal(t, Bulks("dboom"), q.r("LRANGE", q.doneKey(c.id), "0", "-1"))
		ttl(q, c.id)
	})
	scenario(t, env, "removed", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", wait: "60000"})[0]
		require.Equal(t, Int(1), q.call(protocol.Remove, id, "0"))
		require.Equal(t, Bulks("r"), q.r("LRANGE", q.doneKey(id), "0", "-1"))
		ttl(q, id)
	})
	scenario(t, env, "a dead job removed pushes nothing more", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", wait: "60000"})
		q.kill(c, "boom")
		require.Equal(t, Int(1), q.call(protocol.Remove, c.id, "0"))
		require.Equal(t, Bulks("dboom"), q.r("LRANGE", q.doneKey(c.id), "0", "-1"))
	})
	scenario(t, env, "a retry pushes nothing", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", wait: "60000"})
		require.Equal(t, Bulk(protocol.FailRetry), q.call(protocol.Fail, c.id, c.token(), "1", "x"))
		require.Equal(t, Int(0), q.r("EXISTS", q.doneKey(c.id)))
	})
	scenario(t, env, "a waiter's element stays", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", wait: "60000"})
		q.finish(c, "r")
		require.Equal(t, Bulk("cr"), q.r("BLMOVE", q.doneKey(c.id), q.doneKey(c.id), "LEFT", "RIGHT", "1"))
		require.Equal(t, Bulks("cr"), q.r("LRANGE", q.doneKey(c.id), "0", "-1"))
	})
	scenario(t, env, "done of another type", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", wait: "60000"})
		q.plant(q.doneKey(c.id), "list")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Complete, c.id, c.token(), ""))
	})
	scenario(t, env, "done denied", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", wait: "60000"})
		user := q.as(map[string]string{classFlows: ""}, "%RW~"+q.k.Kids(c.id), "%RW~"+q.k.Results(c.id),
			"%RW~"+q.k.Failures(c.id), "%R~"+q.doneKey(c.id))
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Complete, c.id, c.token(), ""))
	})
}

// testFlowRemove: REMOVE of parents and children.
func testFlowRemove(t *testing.T, env Env) {
	scenario(t, env, "a waiting parent without cascade", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("c", "1"))
		q.refuse(protocol.ErrRemoveHasChildren, q.verb(protocol.Remove, "1", "0"))
	})
	scenario(t, env, "cascade removes the tree", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "root", wait: "60000"}, child("a", "1"), child("b", "1"), job{data: "c", parent: "3", delay: "60000"}, job{data: "x"})
		require.Equal(t, Int(1), q.call(protocol.Remove, "1", "1"))
		for _, id := range []string{"1", "2", "3", "4"} {
			require.Equal(t, Int(0), q.r("EXISTS", q.k.Job(id), q.k.Kids(id)), "job %s", id)
		}
		require.Equal(t, Bulks("5"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.waitingKey(), q.k.Delayed))
		require.Equal(t, Bulk("4"), q.r("HGET", q.k.Stats, "removed"))
		require.Equal(t, Bulks("r"), q.r("LRANGE", q.doneKey("1"), "0", "-1"))
	})
	scenario(t, env, "cascade refused by an active descendant", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "root"}, child("a", "1"), child("b", "2"))
		q.claimOne()
		q.refuse(protocol.ErrRemoveActive, q.verb(protocol.Remove, "1", "1"))
	})
	scenario(t, env, "cascade of a parent with a dead child", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "root"}, job{data: "a", parent: "1", attempts: "1", onfail: protocol.OnFailIgnore}, child("b", "1"))
		q.kill(q.claimOne(), "x")
		require.Equal(t, Int(1), q.call(protocol.Remove, "1", "1"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("1"), q.k.Job("2"), q.k.Job("3"), q.k.Dead))
		require.Equal(t, Bulk("3"), q.r("HGET", q.k.Stats, "removed"))
	})
	scenario(t, env, "removing a child releases its parent", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("a", "1"), child("b", "1"))
		require.Equal(t, Int(1), q.call(protocol.Remove, "2", "0"))
		require.Equal(t, Arr(Bulk("waiting"), Bulk("1")), q.fields("1", "state", "deps"))
		require.Equal(t, Int(1), q.call(protocol.Remove, "3", "1"))
		require.Equal(t, Arr(Bulk("pending"), Bulk("0")), q.fields("1", "state", "deps"))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
	})
	scenario(t, env, "cascade removes at most 1000 jobs", func(t *testing.T, q *queue) {
		q.install()
		jobs := []job{{data: "root"}}
		for len(jobs) < protocol.MaxCount {
			jobs = append(jobs, child("c", "1"))
		}
		q.add(jobs...)
		extra := q.addOne("x")
		q.do("ZADD", q.k.Kids("1"), extra, extra)
		q.do("HSET", q.k.Job("1"), "deps", "1000")
		require.Equal(t, Int(1), q.call(protocol.Remove, "1", "1"))
		require.Equal(t, Bulk("1000"), q.r("HGET", q.k.Stats, "removed"))
		require.Equal(t, Bulks(extra), q.r("ZRANGE", q.k.Pending, "0", "-1"), "the 1001st job is not read")
	})
	scenario(t, env, "bad cascade", func(t *testing.T, q *queue) {
		args := fixtures[protocol.Remove](q)
		for _, s := range []string{"2", "", "01", "true"} {
			args[1] = s
			q.refuse(protocol.ErrBadArg("remove", "cascade"), q.verb(protocol.Remove, args...))
		}
	})
	scenario(t, env, "kids of another type", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("c", "1"))
		q.plant(q.k.Kids("1"), "zset")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Remove, "1", "1"))
	})
	scenario(t, env, "a parent's row of another type", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("c", "1"))
		q.do("ZREM", q.waitingKey(), "1")
		q.plant(q.k.Job("1"), "hash")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Remove, "2", "0"))
	})
}

// testFlowRequeue: REQUEUE detaches a dead child.
func testFlowRequeue(t *testing.T, env Env) {
	scenario(t, env, "a dead child runs on its own", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "a", parent: "1", attempts: "1", onfail: protocol.OnFailContinue}, child("b", "1"))
		q.kill(q.claimAll()["2"], "x")
		require.Equal(t, Int(1), q.call(protocol.Requeue, "2"))
		require.Equal(t, Arr(Bulk("pending"), Nil, Nil), q.fields("2", "state", "parent", "onfail"))
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Job("1"), "deps"))
	})
	scenario(t, env, "a dead parent loses its cfail", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "a", parent: "1", attempts: "1"})
		q.kill(q.claimOne(), "x")
		require.Equal(t, Bulk("dead"), q.r("HGET", q.k.Job("1"), "state"))
		require.Equal(t, Int(1), q.call(protocol.Requeue, "1"))
		require.Equal(t, Arr(Bulk("pending"), Nil), q.fields("1", "state", "cfail"))
	})
}

// testFlowRefusals: the flow keys are typed and checked where they are
// read, and a refusal writes nothing.
func testFlowRefusals(t *testing.T, env Env) {
	withParent := func(q *queue) claimed {
		q.install()
		q.add(job{data: "p"}, child("c", "1"), child("d", "1"))
		return q.claimAll()["2"]
	}
	scenario(t, env, "the parent's row of another type", func(t *testing.T, q *queue) {
		c := withParent(q)
		q.plant(q.k.Job("1"), "hash")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Complete, c.id, c.token(), "r"))
	})
	scenario(t, env, "a stale token before the parent", func(t *testing.T, q *queue) {
		c := withParent(q)
		q.plant(q.k.Job("1"), "hash")
		q.refuse(protocol.ErrStale("complete"), q.verb(protocol.Complete, c.id, "9", "r"))
	})
	scenario(t, env, "the result's bound before the parent", func(t *testing.T, q *queue) {
		c := withParent(q)
		q.must(protocol.Retain, "0", "0", "0", "0", "1")
		q.plant(q.k.Job("1"), "hash")
		q.refuse(protocol.ErrResultTooLarge, q.verb(protocol.Complete, c.id, c.token(), "ab"))
	})
	scenario(t, env, "the parent before the lane accounting", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "c", parent: "1", lane: "l"})
		c := q.claimOne()
		q.plant(q.k.Job("1"), "hash")
		user := q.as(map[string]string{classLanes: ""})
		user.refuse(protocol.ErrWrongType, user.verb(protocol.Complete, c.id, c.token(), ""))
	})
	scenario(t, env, "the parent's types after the counter", func(t *testing.T, q *queue) {
		c := withParent(q)
		q.plant(q.k.Results("1"), "hash")
		q.do("HSET", q.k.Stats, "completed", "x")
		q.refuse(protocol.ErrHashNotInteger, q.verb(protocol.Complete, c.id, c.token(), "r"))
	})
	scenario(t, env, "results of another type", func(t *testing.T, q *queue) {
		c := withParent(q)
		q.plant(q.k.Results("1"), "hash")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Complete, c.id, c.token(), "r"))
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""), "an empty result writes no results")
	})
	scenario(t, env, "failures of another type", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "a", parent: "1", attempts: "1", onfail: protocol.OnFailContinue})
		c := q.claimOne()
		q.plant(q.k.Failures("1"), "hash")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Fail, c.id, c.token(), "0", "x"))
	})
	scenario(t, env, "waiting of another type", func(t *testing.T, q *queue) {
		c := withParent(q)
		q.plant(q.waitingKey(), "zset")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Complete, c.id, c.token(), ""))
	})
	scenario(t, env, "deps not an integer", func(t *testing.T, q *queue) {
		c := withParent(q)
		q.do("HSET", q.k.Job("1"), "deps", "x")
		q.refuse(protocol.ErrHashNotInteger, q.verb(protocol.Complete, c.id, c.token(), ""))
	})
	scenario(t, env, "deps at the bottom", func(t *testing.T, q *queue) {
		c := withParent(q)
		q.do("HSET", q.k.Job("1"), "deps", "-9223372036854775808")
		q.refuse(protocol.ErrOverflow, q.verb(protocol.Complete, c.id, c.token(), ""))
	})
	scenario(t, env, "a dying parent's stats dead", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "a", parent: "1", attempts: "1"})
		c := q.claimOne()
		q.do("HSET", q.k.Stats, "dead", int64MaxLess1)
		q.refuse(protocol.ErrOverflow, q.verb(protocol.Fail, c.id, c.token(), "0", "x"))
	})
	scenario(t, env, "the flow keys denied", func(t *testing.T, q *queue) {
		c := withParent(q)
		user := q.as(map[string]string{classFlows: ""})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Complete, c.id, c.token(), "r"))
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Children, "1", "0", "10"))
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Stats))
		id := q.addOne("x")
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Remove, id, "0"))
	})
	scenario(t, env, "the parent's row denied", func(t *testing.T, q *queue) {
		c := withParent(q)
		user := q.as(map[string]string{classRows: ""}, "%R~"+q.k.Job("1"), "%RW~"+q.k.Job("2"), "%RW~"+q.k.Job("3"))
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Complete, c.id, c.token(), ""))
	})
}

// testFlowInvariants: a fixed pseudo-random run of flows through every
// verb, with the dataset consistent after each call.
func testFlowInvariants(t *testing.T, env Env) {
	for seed := uint64(1); seed <= 4; seed++ {
		scenario(t, env, "seed "+strconv.FormatUint(seed, 10), func(t *testing.T, q *queue) {
			q.flowRun(seed)
		})
	}
}
