package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testScheduleResume: EMQ.SCHEDULE.RESUME of a schedule paused past now.
func testScheduleResume(t *testing.T, env Env) {
	scenario(t, env, "resume keeps a later last", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		far := int64(protocol.MaxScheduleTime)
		q.do("HSET", q.schedulesKey(), protocol.ScheduleStateField+fixtureSchedule, "1 0 "+i64(far)+" 0 1")
		require.Equal(t, Int(1), q.call(protocol.ScheduleResume, fixtureSchedule))
		require.Equal(t, far, q.schedState(fixtureSchedule).last)
	})
}
