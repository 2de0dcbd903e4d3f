package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testScheduleFire: EMQ.SCHEDULE.FIRE enqueues a schedule's occurrences.
func testScheduleFire(t *testing.T, env Env) {
	scenario(t, env, "fire enqueues the occurrences and advances the schedule", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1", jitter: "60000", prio: "7",
			opts: []string{protocol.AddOptionHeaders, "h=1", protocol.AddOptionWait, "5000", protocol.AddOptionKind, "digest",
				protocol.AddOptionTimeout, "1500"}}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(st.last + 3)
		now := q.now()
		args := fireArgs(fixtureSchedule, st, st.last+3, st.last+4, [2]int64{st.last + 1, 0}, [2]int64{st.last + 2, 0},
			[2]int64{st.last + 3, 60000})
		require.Equal(t, Bulks("1", "2", "3"), q.call(protocol.ScheduleFire, args...))
		for i, id := range []string{"1", "2"} {
			require.Equal(t, protocol.StatePending, q.hget(id, "state"))
			require.Equal(t, Bulk(i64(st.last+1+int64(i))), q.r("HGET", q.k.Job(id), protocol.FieldScheduledAt))
			require.Equal(t, Bulk(fixtureSchedule), q.r("HGET", q.k.Job(id), protocol.FieldSchedule))
			require.Equal(t, Bulk("7"), q.r("HGET", q.k.Job(id), protocol.FieldPriority))
			require.Equal(t, Bulk("5000"), q.r("HGET", q.k.Job(id), protocol.FieldWait))
			require.Equal(t, Bulk("digest"), q.r("HGET", q.k.Job(id), protocol.FieldKind))
			require.Equal(t, Bulk("1500"), q.r("HGET", q.k.Job(id), protocol.FieldTimeout))
			require.Equal(t, Bulk("h=1"), q.r("HGET", q.k.Job(id), protocol.FieldHeaders))
		}
		require.Equal(t, Bulk(protocol.StateDelayed), q.r("HGET", q.k.Job("3"), "state"))
		runAt := q.score(q.k.Delayed, "3")
		require.GreaterOrEqual(t, runAt, st.last+3+60000-(q.now()-now)-1)
		require.LessOrEqual(t, runAt, st.last+3+60000)
		// the job options' fields, then the schedule fields, come last in
		// the row
		fields, err := q.cmd("HKEYS", q.k.Job("3")).AsStrSlice()
		require.NoError(t, err)
		require.Equal(t, []string{protocol.FieldKind, protocol.FieldTimeout, protocol.FieldHeaders,
			protocol.FieldSchedule, protocol.FieldScheduledAt}, fields[len(fields)-5:])
		require.Equal(t, schedState{st.rev, 3, st.last + 3, st.last + 4, 0}, q.schedState(fixtureSchedule))
		require.Equal(t, st.last+4, q.score(q.dueKey(), fixtureSchedule))
		require.Equal(t, Bulk("3"), q.r("HGET", q.k.Stats, "added"))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		// the template's kind flags the queue: claims read the job fields
		require.Equal(t, Bulk(protocol.JobFieldsOn), q.r("HGET", q.k.Meta, protocol.MetaJobFields))
		// INSPECT replies them
		require.Contains(t, q.call(protocol.Inspect, "1"), Bulk(protocol.FieldSchedule)+", "+Bulk(fixtureSchedule)+", "+
			Bulk(protocol.FieldScheduledAt)+", "+Bulk(i64(st.last+1)))
	})
	scenario(t, env, "fire of a plain template leaves meta jobfields unset", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, args...))
		require.Equal(t, Nil, q.r("HGET", q.k.Meta, protocol.MetaJobFields))
		require.Equal(t, Arr(Arr(Bulk("1"), Bulk("d"), Int(1), Int(3), Nil, Int(0), Nil, Nil)), q.claimExt(1))
	})
	scenario(t, env, "fire twice: the second is refused and writes nothing", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, args...))
		q.refuse(protocol.ErrScheduleChanged, q.verb(protocol.ScheduleFire, args...))
		require.Equal(t, Int(1), q.r("ZCARD", q.k.Pending))
	})
	scenario(t, env, "fire refuses a stale revision, last, pause or a gone schedule", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		st := q.schedState(fixtureSchedule)
		stale := append([]string(nil), args...)
		stale[1] = i64(st.rev + 1)
		q.refuse(protocol.ErrScheduleChanged, q.verb(protocol.ScheduleFire, stale...))
		stale = append([]string(nil), args...)
		stale[2] = i64(st.last - 1)
		q.refuse(protocol.ErrScheduleChanged, q.verb(protocol.ScheduleFire, stale...))
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1000"}.args()...)
		q.refuse(protocol.ErrScheduleChanged, q.verb(protocol.ScheduleFire, args...))
		q.do("HSET", q.schedulesKey(), protocol.ScheduleStateField+fixtureSchedule, st.String()[:len(st.String())-1]+"1")
		q.refuse(protocol.ErrScheduleChanged, q.verb(protocol.ScheduleFire, args...))
		q.do("HDEL", q.schedulesKey(), protocol.ScheduleStateField+fixtureSchedule)
		q.refuse(protocol.ErrScheduleChanged, q.verb(protocol.ScheduleFire, args...))
	})
	scenario(t, env, "fire of an occurrence the server's time has not reached", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		st := q.schedState(fixtureSchedule)
		far := st.last + 3_600_000
		q.refuse(protocol.ErrScheduleNotDue, q.verb(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, far, far+1, [2]int64{far, 0})...))
		q.refuse(protocol.ErrScheduleNotDue, q.verb(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, far, 0)...))
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, args...))
	})
	scenario(t, env, "fire outside the schedule", func(t *testing.T, q *queue) {
		q.install()
		// the schedule's times are put ahead of the clock by far more than
		// SCHEDULE.SET can be late on a busy machine: SET sets last to the
		// server's time, which must stay before start
		now := q.now() + 500
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1", jitter: "10",
			start: i64(now + 2), end: i64(now + 4), limit: "2"}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(now + 5)
		outside := func(upto int64, occ ...[2]int64) {
			t.Helper()
			q.refuse(protocol.ErrScheduleOutside, q.verb(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, upto, 0, occ...)...))
		}
		if st.last+1 < now+2 {
			outside(now+2, [2]int64{st.last + 1, 0})
		}
		outside(now+5, [2]int64{now + 5, 0})
		outside(now+4, [2]int64{now + 2, 0}, [2]int64{now + 3, 0}, [2]int64{now + 4, 0})
		outside(now+2, [2]int64{now + 2, 11})
		require.Equal(t, Bulks("1", "2"), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, now+3, now+4,
			[2]int64{now + 2, 10}, [2]int64{now + 3, 0})...))
		require.Equal(t, schedState{st.rev, 2, now + 3, 0, 0}, q.schedState(fixtureSchedule), "the cap finishes it")
		require.Equal(t, Int(0), q.r("EXISTS", q.dueKey()))
	})
	scenario(t, env, "fire past the end finishes the schedule", func(t *testing.T, q *queue) {
		q.install()
		now := q.now()
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1", end: i64(now + 10)}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(st.last + 1)
		require.Equal(t, Arr(), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, st.last, now+11)...))
		require.Equal(t, schedState{st.rev, 0, st.last, 0, 0}, q.schedState(fixtureSchedule))
		require.Equal(t, Int(0), q.r("EXISTS", q.dueKey(), q.k.Pending))
	})
	scenario(t, env, "fire with no occurrence reschedules", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		st := q.schedState(fixtureSchedule)
		next := st.last + 3_600_000
		require.Equal(t, Arr(), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, st.last, next)...))
		require.Equal(t, schedState{st.rev, 0, st.last, next, 0}, q.schedState(fixtureSchedule))
		require.Equal(t, next, q.score(q.dueKey(), fixtureSchedule))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Meta, q.k.Stats, q.k.Pending))
	})
	scenario(t, env, "fire with a unique key adds one job, none while it is held", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1", unique: "u"}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(st.last + 4)
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, st.last+2, st.last+3,
			[2]int64{st.last + 1, 0}, [2]int64{st.last + 2, 0})...))
		require.Equal(t, Bulk(i64(st.last+2)), q.r("HGET", q.k.Job("1"), protocol.FieldScheduledAt), "the last time's job")
		require.Equal(t, Bulk("1"), q.r("GET", q.k.Unique("u")))
		st2 := q.schedState(fixtureSchedule)
		require.Equal(t, int64(2), st2.count)
		require.Equal(t, Arr(), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st2, st.last+4, st.last+5,
			[2]int64{st.last + 3, 0}, [2]int64{st.last + 4, 0})...))
		require.Equal(t, schedState{st.rev, 4, st.last + 4, st.last + 5, 0}, q.schedState(fixtureSchedule))
		require.Equal(t, Int(1), q.r("ZCARD", q.k.Pending))
	})
	scenario(t, env, "fire of a lane template", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1000", opts: []string{protocol.AddOptionLane, "l"}}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(st.last + 1)
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, st.last+1, st.last+1001, [2]int64{st.last + 1, 0})...))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Lane("l"), "0", "-1"))
		require.Equal(t, Arr(Int(1), Int(0), Int(0), Int(0)), q.call(protocol.Lane, "l"))
	})
	scenario(t, env, "fire publishes added events after its writes", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		q.eventsOn("100")
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, args...))
		require.Equal(t, []string{evt(protocol.EventAdded, "1", protocol.EventStateField, protocol.StatePending)}, q.eventLog())
		require.Equal(t, Bulk("100"), q.r("HGET", q.k.Job("1"), protocol.FieldEvents))
	})
	scenario(t, env, "fire's added events carry the template's kind", func(t *testing.T, q *queue) {
		q.install()
		q.eventsOn("100")
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1000",
			opts: []string{protocol.AddOptionKind, "digest"}}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(st.last + 1)
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire,
			fireArgs(fixtureSchedule, st, st.last+1, st.last+1001, [2]int64{st.last + 1, 0})...))
		require.Equal(t, []string{evt(protocol.EventAdded, "1", protocol.EventStateField, protocol.StatePending,
			protocol.EventKindField, "digest")}, q.eventLog())
	})
	scenario(t, env, "fire of a broken definition", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		field := protocol.ScheduleDefField + fixtureSchedule
		good := protocol.EncodeList(sched{kind: protocol.ScheduleEvery, spec: "1000"}.args()[1:])
		for _, def := range []string{"", "x", "3:ab", "01:x" + good[2:], good + "1:x",
			protocol.EncodeList(sched{kind: protocol.ScheduleEvery, spec: "1000", prio: "1001"}.args()[1:]),
			protocol.EncodeList(sched{kind: protocol.ScheduleEvery, spec: "1000", opts: []string{protocol.AddOptionParent, "1"}}.args()[1:])} {
			q.do("HSET", q.schedulesKey(), field, def)
			q.refuse(protocol.ErrScheduleBroken, q.verb(protocol.ScheduleFire, args...))
		}
		q.do("HDEL", q.schedulesKey(), field)
		q.refuse(protocol.ErrScheduleBroken, q.verb(protocol.ScheduleFire, args...))
	})
	scenario(t, env, "fire values", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		st := q.schedState(fixtureSchedule)
		bad := func(name string, a []string) {
			t.Helper()
			q.refuse(protocol.ErrBadArg(protocol.ScheduleFire.Name, name), q.verb(protocol.ScheduleFire, a...))
		}
		bad("rev", fireArgs(fixtureSchedule, schedState{rev: 0, last: st.last}, st.last+1, 0))
		bad("upto", fireArgs(fixtureSchedule, st, st.last-1, 0))
		bad("next", fireArgs(fixtureSchedule, st, st.last+1, st.last+1))
		bad("time", fireArgs(fixtureSchedule, st, st.last+1, 0, [2]int64{st.last, 0}))
		bad("time", fireArgs(fixtureSchedule, st, st.last+1, 0, [2]int64{st.last + 2, 0}))
		bad("time", fireArgs(fixtureSchedule, st, st.last+2, 0, [2]int64{st.last + 2, 0}, [2]int64{st.last + 2, 0}))
		bad("from", append([]string{fixtureSchedule, "1", "x"}, args[3:]...))
		a := append([]string(nil), args...)
		a[5] = "1001"
		bad("count", a)
		q.refuse(protocol.ErrArity(protocol.ScheduleFire.Name), q.verb(protocol.ScheduleFire, args[:5]...))
	})
}
