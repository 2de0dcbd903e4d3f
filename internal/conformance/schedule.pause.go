package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testSchedulePause: EMQ.SCHEDULE.PAUSE stops a schedule, and SCHEDULE.RESUME
// starts it again.
func testSchedulePause(t *testing.T, env Env) {
	scenario(t, env, "pause and resume", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		q.do("HSET", q.schedulesKey(), protocol.ScheduleStateField+fixtureSchedule, "1 3 1000 2000 0")
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.ScheduleResume, fixtureSchedule)))
		require.Equal(t, Int(1), q.call(protocol.SchedulePause, fixtureSchedule))
		require.Equal(t, schedState{2, 3, 1000, 0, 1}, q.schedState(fixtureSchedule))
		require.Equal(t, Int(0), q.r("EXISTS", q.dueKey()))
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.SchedulePause, fixtureSchedule)))
		before := q.now()
		require.Equal(t, Int(1), q.call(protocol.ScheduleResume, fixtureSchedule))
		st := q.schedState(fixtureSchedule)
		require.Equal(t, int64(3), st.rev)
		require.GreaterOrEqual(t, st.last, before, "the pause's occurrences are skipped")
		require.Equal(t, st.last, st.next)
		require.Equal(t, st.next, q.score(q.dueKey(), fixtureSchedule))
	})
}
