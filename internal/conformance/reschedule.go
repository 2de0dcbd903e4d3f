package conformance

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testReschedule: EMQ.RESCHEDULE moves a pending or delayed job to a new due
// time.
func testReschedule(t *testing.T, env Env) {
	v := protocol.Reschedule
	later := func(q *queue) string { return strconv.FormatInt(q.now()+3_600_000, 10) }
	scenario(t, env, "pending to delayed", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", prio: "3"})[0]
		due := later(q)
		require.Equal(t, Bulk("delayed"), q.call(v, id, due, "0"))
		require.Equal(t, Bulk("delayed"), q.r("HGET", q.k.Job(id), "state"))
		require.Equal(t, due, strconv.FormatInt(q.score(q.k.Delayed, id), 10))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending))
		require.Equal(t, Arr(), q.call(protocol.Claim, "30000", "1"))
	})
	scenario(t, env, "delayed to pending now", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", prio: "3", delay: "3600000"})[0]
		require.Equal(t, Bulk("pending"), q.call(v, id, "0", "0"))
		require.Equal(t, Bulk("pending"), q.r("HGET", q.k.Job(id), "state"))
		require.Equal(t, protocol.PendingScore(3, 1), q.score(q.k.Pending, id))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Delayed))
		require.Equal(t, Bulks("1"), q.signalOf())
		require.Equal(t, Arr(Arr(Bulk(id), Bulk("a"), Int(1))), q.call(protocol.Claim, "30000", "1"))
	})
	scenario(t, env, "delayed to another time", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", delay: "3600000"})[0]
		before := q.now()
		require.Equal(t, Bulk("delayed"), q.call(v, id, "0", "60000"))
		within(t, q.score(q.k.Delayed, id), before+60000, q.now()+60000, "the new due time")
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending, q.k.Signal))
	})
	scenario(t, env, "the later of due and delay", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", delay: "3600000"})[0]
		due := q.now() + 7_200_000
		require.Equal(t, Bulk("delayed"), q.call(v, id, strconv.FormatInt(due, 10), "1000"))
		require.Equal(t, due, q.score(q.k.Delayed, id))
	})
	scenario(t, env, "a pending job due now has nothing to do", func(t *testing.T, q *queue) {
		q.install()
		q.eventsOn("100")
		id := q.addOne("a")
		require.Equal(t, Bulk("pending"), q.unchanged(q.verb(v, id, "1", "0")))
	})
	scenario(t, env, "a retrying job runs now", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", backoffMS: "3600000"})
		require.Equal(t, Bulk(protocol.FailRetry), q.call(protocol.Fail, c.id, c.token(), "1", "boom"))
		require.Equal(t, Bulk("pending"), q.call(v, c.id, "0", "0"))
		require.Equal(t, Arr(Arr(Bulk(c.id), Bulk("a"), Int(2))), q.call(protocol.Claim, "30000", "1"))
	})
	scenario(t, env, "a laned job leaves and rejoins its lane", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", lane: "l"})[0]
		require.Equal(t, Bulks("l", "0"), q.turnsOf())
		require.Equal(t, Bulk("delayed"), q.call(v, id, later(q), "0"))
		require.Equal(t, Int(0), q.r("EXISTS", q.laneKey("l")))
		require.Equal(t, Arr(), q.turnsOf())
		require.Equal(t, Arr(), q.lanesOf())
		require.Equal(t, Arr(Nil, Bulk("0")), q.r("HMGET", q.k.Meta, "turn", "lanewait"))
		q.do("DEL", q.k.Signal)
		require.Equal(t, Bulk("pending"), q.call(v, id, "0", "0"))
		require.Equal(t, Bulks(id), q.r("ZRANGE", q.laneKey("l"), "0", "-1"))
		require.Equal(t, Bulks("l"), q.lanesOf())
		require.Equal(t, Arr(Nil, Bulk("1")), q.r("HMGET", q.k.Meta, "turn", "lanewait"))
		require.Equal(t, Bulks("1"), q.signalOf(), "the lane became ready")
		q.laneInvariants([]string{"l"}, "after reschedule")
	})
	scenario(t, env, "events", func(t *testing.T, q *queue) {
		q.install()
		q.eventsOn("100")
		id := q.addOne("a")
		q.clearEvents()
		q.must(v, id, later(q), "0")
		q.must(v, id, "0", "0")
		require.Equal(t, []string{evt("rescheduled", id, "state", "delayed"), evt("rescheduled", id, "state", "pending")}, q.eventLog())
	})
	scenario(t, env, "refusals", func(t *testing.T, q *queue) {
		id := q.dead(job{data: "b"})
		require.Equal(t, Int(0), q.unchanged(q.verb(v, "9", "0", "0")), "a gone row")
		q.refuse(protocol.ErrRescheduleState, q.verb(v, id, "0", "0"))
		q.addOne("a")
		c := q.claimOne()
		q.refuse(protocol.ErrRescheduleState, q.verb(v, c.id, "0", "0"))
		q.add(job{data: "p"}, job{data: "k", parent: "1"})
		q.refuse(protocol.ErrRescheduleState, q.verb(v, "3", "0", "0"))
	})
}
