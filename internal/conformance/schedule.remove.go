package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testScheduleRemove: EMQ.SCHEDULE.REMOVE deletes a schedule.
func testScheduleRemove(t *testing.T, env Env) {
	scenario(t, env, "remove", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		q.must(protocol.ScheduleSet, sched{id: "keep"}.args()...)
		require.Equal(t, Int(1), q.call(protocol.ScheduleRemove, fixtureSchedule))
		require.Equal(t, Int(0), q.r("HEXISTS", q.schedulesKey(), protocol.ScheduleDefField+fixtureSchedule))
		require.Equal(t, Int(0), q.r("HEXISTS", q.schedulesKey(), protocol.ScheduleStateField+fixtureSchedule))
		require.Equal(t, Bulks("keep"), q.r("ZRANGE", q.dueKey(), "0", "-1"))
		require.Equal(t, Bulks("keep"), q.r("ZRANGE", q.idsKey(), "0", "-1"))
		require.Equal(t, Int(0), q.call(protocol.ScheduleRemove, fixtureSchedule))
	})
	scenario(t, env, "remove takes a member without fields", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", q.dueKey(), "5", "ghost")
		q.do("ZADD", q.idsKey(), "0", "ghost")
		require.Equal(t, Int(0), q.call(protocol.ScheduleRemove, "ghost"))
		require.Equal(t, Int(0), q.r("EXISTS", q.dueKey(), q.idsKey()))
	})
}
