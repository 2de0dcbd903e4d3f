package conformance

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// The job options (due, timeout, kind, headers), CLAIM's extended rows,
// RESCHEDULE, CANCEL and the cancelled refusal (docs/PROTOCOL.md, "Job
// options, rescheduling and cancellation").

// claimExt claims up to count jobs with ext 1 and returns the rendered reply.
func (q *queue) claimExt(count int) string {
	q.t.Helper()
	return q.call(protocol.Claim, "600000", strconv.Itoa(count), protocol.ClaimExtended)
}

// Wait stands, in claimWaits' rendering, for a job's wait that claimWaits
// checked against the job's at and the server's clock.
const Wait = "(integer) <wait>"

// claimWaits claims up to count jobs with ext 2 (the extended rows with
// each job's wait) and returns the rendered reply, each wait that is an
// integer rendered as Wait once it is checked: the server's clock around
// the call, less the job's at, at least 0.
func (q *queue) claimWaits(count int) string {
	q.t.Helper()
	r, _ := q.claimWaitsSplit(false, "600000", strconv.Itoa(count))
	return r
}

// claimWaitsSplit is claimWaits with CLAIM's lease and count; with apart,
// each job's wait is left out of the rendering and counted instead when
// known (an integer).
func (q *queue) claimWaitsSplit(apart bool, lease, count string) (string, int) {
	q.t.Helper()
	t0 := q.now()
	res := q.exec(protocol.Claim, lease, count, protocol.ClaimWaits)
	t1 := q.now()
	rows, err := res.ToArray()
	if err != nil || res.NonValkeyError() != nil {
		return Render(res), 0
	}
	out, known := make([]string, len(rows)), 0
	for i, r := range rows {
		f, err := r.ToArray()
		if err != nil || len(f) != protocol.ClaimWaitsReply {
			out[i] = RenderMessage(r)
			continue
		}
		parts := make([]string, len(f))
		for j, e := range f {
			parts[j] = RenderMessage(e)
		}
		w := len(f) - 1
		if f[w].IsInt64() {
			known++
			id, _ := f[0].ToString()
			wait, _ := f[w].AsInt64()
			// CLAIM leaves at as it was
			at, err := q.cmd("HGET", q.k.Job(id), protocol.FieldAdded).AsInt64()
			require.NoError(q.t, err, "job %s claimed with a wait has an at", id)
			within(q.t, wait, max(0, t0-at), max(0, t1-at), "job "+id+"'s wait")
			parts[w] = Wait
		}
		if apart {
			parts = parts[:w]
		}
		out[i] = Arr(parts...)
	}
	return Arr(out...), known
}

// testJobOptions: ADD's option columns for the worker and CLAIM's extended
// rows.
func testJobOptions(t *testing.T, env Env) {
	scenario(t, env, "add stores kind, timeout and headers after ev", func(t *testing.T, q *queue) {
		q.install()
		q.eventsOn("100")
		id := q.add(job{data: "a", kind: "email", timeout: "1500", headers: "traceparent=00-x\x00\xff"})[0]
		f := q.hgetall(q.k.Job(id))
		n := len(f)
		require.Equal(t, []string{"ev", "100", "kind", "email", "timeout", "1500", "headers", "traceparent=00-x\x00\xff"}, f[n-8:])
	})
	scenario(t, env, "add of empty and zero options stores nothing", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", kind: "k"}, job{data: "b", timeout: "0", due: "0"})
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Job("2"), "kind"))
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Job("2"), "timeout"))
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Job("2"), "headers"))
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Job("1"), "timeout"))
		require.Equal(t, Bulks("1", "2"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
	})
	scenario(t, env, "add with a past due time is pending", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", due: "1"})[0]
		require.Equal(t, "pending", q.hget(id, "state"))
		require.Equal(t, Bulks("1"), q.signalOf())
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Delayed))
	})
	scenario(t, env, "add with a future due time is delayed until it", func(t *testing.T, q *queue) {
		q.install()
		due := q.now() + 3_600_000
		id := q.add(job{data: "a", due: strconv.FormatInt(due, 10)})[0]
		require.Equal(t, Bulk("delayed"), q.r("HGET", q.k.Job(id), "state"))
		require.Equal(t, due, q.score(q.k.Delayed, id))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending, q.k.Signal))
	})
	scenario(t, env, "add takes the later of delay and due", func(t *testing.T, q *queue) {
		q.install()
		before := q.now()
		q.add(job{data: "a", delay: "7200000", due: strconv.FormatInt(before+1000, 10)},
			job{data: "b", delay: "1000", due: strconv.FormatInt(before+7_200_000, 10)})
		after := q.now()
		within(t, q.score(q.k.Delayed, "1"), before+7_200_000, after+7_200_000, "delay wins")
		require.Equal(t, before+7_200_000, q.score(q.k.Delayed, "2"), "due wins")
	})
	scenario(t, env, "add with a lane and a future due waits in delayed, not its lane", func(t *testing.T, q *queue) {
		q.install()
		due := strconv.FormatInt(q.now()+3_600_000, 10)
		q.add(job{data: "a", lane: "l", due: due}, job{data: "b", lane: "l", due: "1"})
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Delayed, "0", "-1"))
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.laneKey("l"), "0", "-1"))
		require.Equal(t, Arr(Nil, Bulk("1")), q.r("HMGET", q.k.Meta, "turn", "lanewait"))
	})
	scenario(t, env, "add event state follows the due time", func(t *testing.T, q *queue) {
		q.install()
		q.eventsOn("100")
		q.add(job{data: "a", due: "1"}, job{data: "b", due: strconv.FormatInt(q.now()+3_600_000, 10)})
		require.Equal(t, []string{entry(event("added", "1", "state", "pending"), event("added", "2", "state", "delayed"))}, q.eventLog())
	})
	scenario(t, env, "add refuses a parent with a due time", func(t *testing.T, q *queue) {
		q.install()
		q.refuse(protocol.ErrBadArg("add", "parent"), q.verb(protocol.Add, addArgs(job{data: "p", due: "1"}, job{data: "c", parent: "1"})...))
		q.must(protocol.Add, addArgs(job{data: "p"}, job{data: "c", parent: "1", due: "1"})...)
	})
	scenario(t, env, "add option values", func(t *testing.T, q *queue) {
		q.install()
		bad := map[string][]job{
			"due":     {{data: "a", due: "-1"}, {data: "a", due: "01"}, {data: "a", due: strconv.FormatInt(protocol.MaxDueMS+1, 10)}, {data: "a", due: "x"}},
			"timeout": {{data: "a", timeout: "86400001"}, {data: "a", timeout: "1.5"}, {data: "a", timeout: " 1"}},
			"kind":    {{data: "a", kind: strings.Repeat("k", protocol.MaxKind+1)}},
			"headers": {{data: "a", headers: strings.Repeat("h", protocol.MaxHeaders+1)}},
		}
		for name, jobs := range bad {
			for _, j := range jobs {
				q.refuse(protocol.ErrBadArg("add", name), q.verb(protocol.Add, addArgs(j)...))
			}
		}
		q.refuse(protocol.ErrBadArg("add", "lane"), q.verb(protocol.Add, addArgs(job{data: "a", due: "x", lane: strings.Repeat("l", 129)})...))
		q.refuse(protocol.ErrBadArg("add", "wait"), q.verb(protocol.Add, addArgs(job{data: "a", due: "x", wait: "x"})...))
		q.refuse(protocol.ErrBadArg("add", "due"), q.verb(protocol.Add, addArgs(job{data: "a", kind: strings.Repeat("k", 129), due: "x"})...))
		q.must(protocol.Add, addArgs(job{data: "a", due: strconv.FormatInt(protocol.MaxDueMS, 10), timeout: "86400000",
			kind: strings.Repeat("k", protocol.MaxKind), headers: strings.Repeat("h", protocol.MaxHeaders)})...)
	})
	scenario(t, env, "add option names", func(t *testing.T, q *queue) {
		q.install()
		args := []string{"1", "2", "kind", "kind", "a", "0", "0", "3", "fixed", "0", "", "0", "k", "k"}
		q.refuse(protocol.ErrBadArg("add", "option"), q.verb(protocol.Add, args...))
		args = []string{"1", "1", "Kind", "a", "0", "0", "3", "fixed", "0", "", "0", "k"}
		q.refuse(protocol.ErrBadArg("add", "option"), q.verb(protocol.Add, args...))
		args = []string{"1", "8", "lane", "parent", "onfail", "wait", "due", "timeout", "kind", "headers",
			"a", "0", "0", "3", "fixed", "0", "", "0", "", "", "", "", "", "", "", ""}
		require.Equal(t, Bulks("1"), q.must(protocol.Add, args...))
	})

	scenario(t, env, "claim ext replies the worker's fields", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", attempts: "5", kind: "email", timeout: "2500", headers: "h\x00"}, job{data: "b"})
		require.Equal(t, Arr(
			Arr(Bulk("1"), Bulk("a"), Int(1), Int(5), Bulk("email"), Int(2500), Bulk("h\x00"), Nil),
			Arr(Bulk("2"), Bulk("b"), Int(1), Int(3), Nil, Int(0), Nil, Nil),
		), q.claimExt(2))
	})
	scenario(t, env, "claim ext 2 replies the wait of a job added ready", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"}, job{data: "d"}, job{data: "e", delay: "600000"}, job{data: "f", kind: "k"})
		// job 1 added 5 s ago: claimWaits holds its wait to the clock less at
		q.do("HSET", q.k.Job("1"), "at", strconv.FormatInt(q.now()-5000, 10))
		// job 2 moved since its add (PROMOTE, RECOVER and the like write
		// its state): not known
		q.do("HSET", q.k.Job("2"), "state", "pending")
		q.do("HSET", q.k.Job("3"), "at", "x")
		// added ahead of this clock: 0
		q.do("HSET", q.k.Job("4"), "at", strconv.FormatInt(q.now()+600000, 10))
		require.Equal(t, Arr(
			Arr(Bulk("1"), Bulk("a"), Int(1), Int(3), Nil, Int(0), Nil, Nil, Wait),
			Arr(Bulk("2"), Bulk("b"), Int(1), Int(3), Nil, Int(0), Nil, Nil, Nil),
			Arr(Bulk("3"), Bulk("c"), Int(1), Int(3), Nil, Int(0), Nil, Nil, Nil),
			Arr(Bulk("4"), Bulk("d"), Int(1), Int(3), Nil, Int(0), Nil, Nil, Wait),
			// a queue with job fields: the wait after them
			Arr(Bulk("6"), Bulk("f"), Int(1), Int(3), Bulk("k"), Int(0), Nil, Nil, Wait),
		), q.claimWaits(6))
		// a delayed job, promoted: its row says delayed, then pending
		q.do("ZADD", q.k.Delayed, "1", "5")
		q.must(protocol.Promote, "100")
		require.Equal(t, Arr(Arr(Bulk("5"), Bulk("e"), Int(1), Int(3), Nil, Int(0), Nil, Nil, Nil)), q.claimWaits(1))
	})
	scenario(t, env, "claim ext 2 with lanes", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", lane: "l"}, job{data: "b"})
		require.Equal(t, Arr(
			Arr(Bulk("2"), Bulk("b"), Int(1), Int(3), Nil, Int(0), Nil, Nil, Wait),
			Arr(Bulk("1"), Bulk("a"), Int(1), Int(3), Nil, Int(0), Nil, Bulk("l"), Wait),
		), q.claimWaits(2))
		// ext 1 reads neither state nor at: the same rows without the wait
		q.add(job{data: "c"})
		require.Equal(t, Arr(Arr(Bulk("3"), Bulk("c"), Int(1), Int(3), Nil, Int(0), Nil, Nil)), q.claimExt(1))
	})
	scenario(t, env, "claim ext 0 is the plain reply", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", kind: "email"})
		require.Equal(t, Arr(Arr(Bulk("1"), Bulk("a"), Int(1))), q.call(protocol.Claim, "600000", "1", "0"))
	})
	scenario(t, env, "claim ext reads row fields as numbers", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"})
		q.do("HSET", q.k.Job("1"), "max", "x", "timeout", "86400001", "kind", "")
		q.do("HSET", q.k.Meta, protocol.MetaJobFields, protocol.JobFieldsOn)
		require.Equal(t, Arr(Arr(Bulk("1"), Bulk("a"), Int(1), Int(0), Bulk(""), Int(0), Nil, Nil)), q.claimExt(1))
	})
	scenario(t, env, "claim ext with lanes", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", lane: "l", kind: "x"}, job{data: "b", kind: "y"})
		require.Equal(t, Arr(
			Arr(Bulk("2"), Bulk("b"), Int(1), Int(3), Bulk("y"), Int(0), Nil, Nil),
			Arr(Bulk("1"), Bulk("a"), Int(1), Int(3), Bulk("x"), Int(0), Nil, Bulk("l")),
		), q.claimExt(2))
	})
	scenario(t, env, "add of kind, timeout or headers sets meta jobfields", func(t *testing.T, q *queue) {
		q.install()
		jobfields := func() string { return q.r("HGET", q.k.Meta, protocol.MetaJobFields) }
		q.add(job{data: "a"}, job{data: "b", kind: "", timeout: "0", headers: "", due: "1"})
		require.Equal(t, Nil, jobfields(), "plain jobs and empty options")
		q.add(job{data: "c"}, job{data: "d", kind: "k"})
		require.Equal(t, Bulk("1"), jobfields())
		for _, j := range []job{{data: "e", timeout: "5"}, {data: "f", headers: "h"}} {
			q.do("HDEL", q.k.Meta, protocol.MetaJobFields)
			q.add(j)
			require.Equal(t, Bulk("1"), jobfields(), "%+v", j)
		}
		q.do("HSET", q.k.Meta, protocol.MetaJobFields, "2")
		q.add(job{data: "g"})
		require.Equal(t, Bulk("2"), jobfields(), "a plain add leaves it")
		q.add(job{data: "h", kind: "k"})
		require.Equal(t, Bulk("1"), jobfields(), "any other value is unset")
		q.add(job{data: "i"})
		require.Equal(t, Bulk("1"), jobfields(), "never cleared")
	})
	scenario(t, env, "add refused with a kind leaves meta jobfields unset", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", unique: "u"})
		q.refuse(protocol.ErrAddDuplicate("1"), q.verb(protocol.Add, addArgs(job{data: "b", kind: "k", unique: "u"})...))
		q.refuse(protocol.ErrAddDuplicateInBatch, q.verb(protocol.Add, addArgs(job{data: "b", kind: "k", unique: "v"}, job{data: "c", unique: "v"})...))
		q.do("SET", q.k.Pending, "x")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Add, addArgs(job{data: "b", headers: "h"})...))
	})
	scenario(t, env, "claim ext on a queue without job fields reads max only", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", attempts: "5"}, job{data: "b"})
		// fields no ADD of this queue stored are not read
		q.do("HSET", q.k.Job("1"), "kind", "x", "timeout", "7", "headers", "h")
		require.Equal(t, Arr(
			Arr(Bulk("1"), Bulk("a"), Int(1), Int(5), Nil, Int(0), Nil, Nil),
			Arr(Bulk("2"), Bulk("b"), Int(1), Int(3), Nil, Int(0), Nil, Nil),
		), q.claimExt(2))
		require.Equal(t, Bulk("active"), q.r("HGET", q.k.Job("1"), "state"))
	})
	scenario(t, env, "claim ext on a queue with job fields reads them for every job", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"})
		q.add(job{data: "b", kind: "k"})
		q.do("HSET", q.k.Job("1"), "headers", "h")
		require.Equal(t, Arr(
			Arr(Bulk("1"), Bulk("a"), Int(1), Int(3), Nil, Int(0), Bulk("h"), Nil),
			Arr(Bulk("2"), Bulk("b"), Int(1), Int(3), Bulk("k"), Int(0), Nil, Nil),
		), q.claimExt(2))
	})
	scenario(t, env, "claim ext on a queue without job fields, with lanes", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", lane: "l", attempts: "2"}, job{data: "b"})
		require.Equal(t, Arr(
			Arr(Bulk("2"), Bulk("b"), Int(1), Int(3), Nil, Int(0), Nil, Nil),
			Arr(Bulk("1"), Bulk("a"), Int(1), Int(2), Nil, Int(0), Nil, Bulk("l")),
		), q.claimExt(2))
	})
	scenario(t, env, "claim bad ext", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		for _, ext := range []string{"3", "", "01", "02", "true", "1 ", "-1"} {
			q.refuse(protocol.ErrBadArg("claim", "ext"), q.verb(protocol.Claim, "600000", "1", ext))
		}
		q.refuse(protocol.ErrBadArg("claim", "count"), q.verb(protocol.Claim, "600000", "0", "x"))
	})
	scenario(t, env, "inspect replies the options and cancelled", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "d", kind: "k", timeout: "10", headers: "h"})[0]
		require.Equal(t, Int(1), q.call(protocol.Cancel, id))
		at, err := q.cmd("HGET", q.k.Job(id), "at").ToString()
		require.NoError(t, err)
		require.Equal(t, Arr(
			Bulk("state"), Bulk("dead"), Bulk("data"), Bulk("d"), Bulk("att"), Bulk("0"),
			Bulk("max"), Bulk("3"), Bulk("prio"), Bulk("0"), Bulk("bo"), Bulk("fixed:0"),
			Bulk("at"), Bulk(at), Bulk("err"), Bulk("cancelled"),
			Bulk("kind"), Bulk("k"), Bulk("timeout"), Bulk("10"), Bulk("headers"), Bulk("h"), Bulk("cancelled"), Bulk("1"),
			Bulk("logs"), Arr(),
		), q.unchanged(q.verb(protocol.Inspect, id)))
	})
}
