package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testScheduleSet: EMQ.SCHEDULE.SET creates or replaces a schedule.
func testScheduleSet(t *testing.T, env Env) {
	scenario(t, env, "set creates a schedule due at once", func(t *testing.T, q *queue) {
		q.install()
		args := sched{opts: []string{protocol.AddOptionLane, "l"}}.args()
		before := q.now()
		require.Equal(t, Int(1), q.call(protocol.ScheduleSet, args...))
		st := q.schedState(fixtureSchedule)
		require.Equal(t, int64(1), st.rev)
		require.Equal(t, int64(0), st.count)
		require.GreaterOrEqual(t, st.last, before)
		require.Equal(t, st.last, st.next)
		require.Equal(t, int64(0), st.paused)
		require.Equal(t, Bulk(protocol.EncodeList(args[1:])), q.r("HGET", q.schedulesKey(), protocol.ScheduleDefField+fixtureSchedule))
		require.Equal(t, st.next, q.score(q.dueKey(), fixtureSchedule))
		require.Equal(t, int64(0), q.score(q.idsKey(), fixtureSchedule))
	})
	scenario(t, env, "set of an existing schedule keeps count, last and pause", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		q.do("HSET", q.schedulesKey(), protocol.ScheduleStateField+fixtureSchedule, "4 7 1000 2000 0")
		require.Equal(t, Int(5), q.call(protocol.ScheduleSet, sched{data: "new"}.args()...))
		st := q.schedState(fixtureSchedule)
		require.Equal(t, schedState{5, 7, 1000, st.next, 0}, st)
		require.Greater(t, st.next, int64(2000))
		require.Equal(t, st.next, q.score(q.dueKey(), fixtureSchedule))
		q.must(protocol.SchedulePause, fixtureSchedule)
		require.Equal(t, Int(7), q.call(protocol.ScheduleSet, sched{data: "newer"}.args()...))
		require.Equal(t, schedState{7, 7, 1000, 0, 1}, q.schedState(fixtureSchedule))
		require.Equal(t, Int(0), q.r("EXISTS", q.dueKey()))
	})
	scenario(t, env, "set values", func(t *testing.T, q *queue) {
		q.install()
		bad := func(name string, s sched) {
			t.Helper()
			q.refuse(protocol.ErrBadArg(protocol.ScheduleSet.Name, name), q.verb(protocol.ScheduleSet, s.args()...))
		}
		bad("spec", sched{kind: protocol.ScheduleEvery, spec: "0"})
		bad("spec", sched{kind: protocol.ScheduleEvery, spec: "x"})
		bad("spec", sched{kind: protocol.ScheduleEvery, spec: i64(protocol.MaxScheduleEvery + 1)})
		bad("tz", sched{kind: protocol.ScheduleEvery, spec: "1000", tz: "UTC"})
		bad("end", sched{start: "2000", end: "1999"})
		bad("end", sched{end: i64(protocol.MaxScheduleTime + 1)})
		bad("option", sched{opts: []string{protocol.AddOptionParent, ""}})
		bad("option", sched{opts: []string{protocol.AddOptionOnFail, ""}})
		bad("option", sched{opts: []string{protocol.AddOptionDue, ""}})
		bad("option", sched{opts: []string{protocol.AddOptionKind, "k", protocol.AddOptionDue, "1"}})
		bad("option", sched{opts: []string{"delay", "1"}})
		bad("option", sched{opts: []string{protocol.AddOptionLane, "a", protocol.AddOptionLane, "b"}})
		bad("lane", sched{opts: []string{protocol.AddOptionLane, strings.Repeat("l", protocol.MaxLaneName+1)}})
		bad("wait", sched{opts: []string{protocol.AddOptionWait, "x"}})
		bad("timeout", sched{opts: []string{protocol.AddOptionTimeout, i64(protocol.MaxTimeoutMS + 1)}})
		bad("kind", sched{opts: []string{protocol.AddOptionKind, strings.Repeat("k", protocol.MaxKind+1)}})
		bad("headers", sched{opts: []string{protocol.AddOptionHeaders, strings.Repeat("h", protocol.MaxHeaders+1)}})
		// ADD's order of the values, whatever the columns' order
		bad("wait", sched{opts: []string{protocol.AddOptionKind, strings.Repeat("k", protocol.MaxKind+1), protocol.AddOptionWait, "x"}})
		bad("timeout", sched{opts: []string{protocol.AddOptionHeaders, strings.Repeat("h", protocol.MaxHeaders+1),
			protocol.AddOptionKind, strings.Repeat("k", protocol.MaxKind+1), protocol.AddOptionTimeout, "x"}})
		bad("unique_ttl", sched{unique: "u", uniqueTTL: "0"})
		// option names before the template's values
		bad("option", sched{prio: "1001", opts: []string{"x", ""}})
		bad("priority", sched{prio: "1001", opts: []string{protocol.AddOptionWait, "x"}})
		require.Equal(t, Int(1), q.call(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: i64(protocol.MaxScheduleEvery)}.args()...))
		require.Equal(t, Int(1), q.call(protocol.ScheduleSet, sched{id: "b", start: "5", end: "5",
			opts: []string{protocol.AddOptionWait, "1000", protocol.AddOptionLane, ""}}.args()...))
	})
	scenario(t, env, "set options", func(t *testing.T, q *queue) {
		q.install()
		args := sched{}.args()
		args[17] = "9"
		q.refuse(protocol.ErrBadArg(protocol.ScheduleSet.Name, "options"), q.verb(protocol.ScheduleSet, args...))
		args[17] = "1"
		q.refuse(protocol.ErrArity(protocol.ScheduleSet.Name), q.verb(protocol.ScheduleSet, args...))
		q.refuse(protocol.ErrArity(protocol.ScheduleSet.Name), q.verb(protocol.ScheduleSet, args[:17]...))
	})
}
