package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testScheduleList: EMQ.SCHEDULE.LIST pages the schedules.
func testScheduleList(t *testing.T, env Env) {
	scenario(t, env, "list pages in byte order", func(t *testing.T, q *queue) {
		q.install()
		for _, id := range []string{"c", "a", "b"} {
			q.must(protocol.ScheduleSet, sched{id: id}.args()...)
		}
		q.must(protocol.SchedulePause, "b")
		def := Bulk(protocol.EncodeList(sched{}.args()[1:]))
		row := func(id string) string { return Arr(Bulk(id), def, Bulk(q.schedState(id).String())) }
		require.Equal(t, Arr(row("a"), row("b")), q.call(protocol.ScheduleList, "", "2"))
		require.Equal(t, Arr(row("c")), q.call(protocol.ScheduleList, "b", "2"))
		require.Equal(t, Arr(), q.call(protocol.ScheduleList, "c", "2"))
		q.do("ZADD", q.idsKey(), "0", "ghost")
		require.Equal(t, Arr(Arr(Bulk("ghost"), Nil, Nil)), q.call(protocol.ScheduleList, "c", "2"))
	})
}
