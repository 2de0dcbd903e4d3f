package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testScheduleDue: EMQ.SCHEDULE.DUE replies the due schedules.
func testScheduleDue(t *testing.T, env Env) {
	scenario(t, env, "due replies the server's time and the due schedules", func(t *testing.T, q *queue) {
		q.install()
		for _, id := range []string{"a", "b", "c"} {
			q.must(protocol.ScheduleSet, sched{id: id}.args()...)
		}
		q.do("ZADD", q.dueKey(), "20", "a", "10", "b", i64(protocol.MaxScheduleTime), "c")
		before := q.now()
		msg, err := q.exec(protocol.ScheduleDue, "10").ToArray()
		require.NoError(t, err)
		require.Len(t, msg, 3)
		now, err := msg[0].AsInt64()
		require.NoError(t, err)
		require.GreaterOrEqual(t, now, before)
		def := Bulk(protocol.EncodeList(sched{}.args()[1:]))
		require.Equal(t, Arr(Bulk("b"), def, Bulk(q.schedState("b").String())), RenderMessage(msg[1]))
		require.Equal(t, Arr(Bulk("a"), def, Bulk(q.schedState("a").String())), RenderMessage(msg[2]))
		msg, err = q.exec(protocol.ScheduleDue, "1").ToArray()
		require.NoError(t, err)
		require.Len(t, msg, 2, "bounded by limit")
	})
	scenario(t, env, "due with nothing due", func(t *testing.T, q *queue) {
		q.install()
		msg, err := q.exec(protocol.ScheduleDue, "10").ToArray()
		require.NoError(t, err)
		require.Len(t, msg, 1)
	})
}
