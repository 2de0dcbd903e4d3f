package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testCancel: EMQ.CANCEL ends a pending, delayed or active job in the dead
// set.
func testCancel(t *testing.T, env Env) {
	v := protocol.Cancel
	dead := func(q *queue, id string) {
		q.t.Helper()
		require.Equal(q.t, Arr(Bulk("dead"), Bulk("cancelled"), Bulk("1")), q.r("HMGET", q.k.Job(id), "state", "err", "cancelled"))
		require.Equal(q.t, Bulks(id), q.r("ZRANGE", q.k.Dead, "0", "-1"))
		require.Equal(q.t, Arr(Bulk("1"), Nil, Nil), q.r("HMGET", q.k.Stats, "cancelled", "dead", "failed"))
	}
	scenario(t, env, "a pending job", func(t *testing.T, q *queue) {
		q.install()
		id := q.addOne("a")
		require.Equal(t, Int(1), q.call(v, id))
		dead(q, id)
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Pending))
		require.Equal(t, Arr(), q.call(protocol.Claim, "30000", "1"))
	})
	scenario(t, env, "a delayed job", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", delay: "3600000"})[0]
		require.Equal(t, Int(1), q.call(v, id))
		dead(q, id)
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Delayed))
	})
	scenario(t, env, "an active job, then its worker's calls", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		require.Equal(t, Int(1), q.call(v, c.id))
		dead(q, c.id)
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Active))
		q.refuse(protocol.ErrCancelled("extend"), q.verb(protocol.Extend, c.id, c.token(), "30000"))
		q.refuse(protocol.ErrCancelled("complete"), q.verb(protocol.Complete, c.id, c.token(), "r"))
		q.refuse(protocol.ErrCancelled("fail"), q.verb(protocol.Fail, c.id, c.token(), "1", "late"))
		require.Equal(t, outcomes(protocol.CompleteManyCancelled), q.unchanged(q.verb(protocol.CompleteMany, "1", c.id, c.token(), "")))
		q.refuse(protocol.ErrStale("extend"), q.verb(protocol.Extend, c.id, "9", "30000"))
	})
	scenario(t, env, "an active job is announced on the cancels channel, nothing else", func(t *testing.T, q *queue) {
		msgs := q.notices()
		c := q.active(job{data: "a"})
		p := q.addOne("p")
		d := q.add(job{data: "d", delay: "3600000"})[0]
		require.Equal(t, Int(1), q.call(v, p))
		require.Equal(t, Int(1), q.call(v, d))
		q.refuse(protocol.ErrCancelState, q.verb(v, p))
		require.Equal(t, Int(0), q.call(v, "999"))
		require.Equal(t, Int(1), q.call(v, c.id))
		require.Equal(t, protocol.CancelNotice(c.id, c.token()), q.nextNotice(msgs), "the first notice is the active job's")
		// requeued and claimed again, its notice carries the new token
		require.Equal(t, Int(1), q.call(protocol.Requeue, c.id))
		c2 := q.claimOne()
		require.Equal(t, c.id, c2.id)
		require.Equal(t, Int(1), q.call(v, c2.id))
		require.Equal(t, protocol.CancelNotice(c.id, "2"), q.nextNotice(msgs))
	})
	scenario(t, env, "a caller that may not publish cancels without a notice", func(t *testing.T, q *queue) {
		msgs := q.notices()
		q.install()
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"})
		cs := q.claim(600000, 3)
		require.Len(t, cs, 3)
		channel := "&" + q.k.Cancels()
		// no channel rule, then the channel without the command
		require.Equal(t, Int(1), q.as(nil).call(v, cs[0].id))
		require.Equal(t, Int(1), q.as(nil, channel, "-spublish").call(v, cs[1].id))
		require.Equal(t, Int(1), q.as(nil, channel).call(v, cs[2].id))
		require.Equal(t, protocol.CancelNotice(cs[2].id, cs[2].token()), q.nextNotice(msgs), "only the allowed caller's cancel is announced")
		for _, c := range cs {
			require.Equal(t, Arr(Bulk("dead"), Bulk("1")), q.r("HMGET", q.k.Job(c.id), "state", "cancelled"))
		}
	})
	scenario(t, env, "a job not active and not cancelled is still not active", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.do("ZREM", q.k.Active, c.id)
		q.refuse(protocol.ErrNotActive("extend"), q.verb(protocol.Extend, c.id, c.token(), "30000"))
		q.refuse(protocol.ErrNotActive("complete"), q.verb(protocol.Complete, c.id, c.token(), ""))
		q.refuse(protocol.ErrNotActive("fail"), q.verb(protocol.Fail, c.id, c.token(), "1", ""))
		require.Equal(t, outcomes(protocol.CompleteManyNotActive), q.call(protocol.CompleteMany, "1", c.id, c.token(), ""))
	})
	scenario(t, env, "requeue runs it again and drops cancelled", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", attempts: "2"})
		q.must(v, c.id)
		require.Equal(t, Int(1), q.call(protocol.Requeue, c.id))
		require.Equal(t, Arr(Bulk("pending"), Nil, Bulk("3")), q.r("HMGET", q.k.Job(c.id), "state", "cancelled", "max"))
		c2 := q.claimOne()
		q.do("ZREM", q.k.Active, c2.id)
		q.refuse(protocol.ErrNotActive("extend"), q.verb(protocol.Extend, c2.id, c2.token(), "30000"))
		q.refuse(protocol.ErrStale("complete"), q.verb(protocol.Complete, c.id, c.token(), ""))
	})
	scenario(t, env, "a laned pending job leaves its lane", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", lane: "l"}, job{data: "b", lane: "l"})
		require.Equal(t, Int(1), q.call(v, "1"))
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.laneKey("l"), "0", "-1"))
		require.Equal(t, Arr(Nil, Bulk("1")), q.r("HMGET", q.k.Meta, "turn", "lanewait"))
		require.Equal(t, Int(1), q.call(v, "2"))
		require.Equal(t, Arr(), q.lanesOf())
		require.Equal(t, Arr(), q.turnsOf())
		q.laneInvariants([]string{"l"}, "after cancel")
	})
	scenario(t, env, "a laned active job frees its slot", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.LaneCap, "l", "1")
		q.add(job{data: "a", lane: "l"}, job{data: "b", lane: "l"})
		c := q.claimOne()
		require.Equal(t, Arr(), q.turnsOf(), "at its cap")
		q.do("DEL", q.k.Signal)
		require.Equal(t, Int(1), q.call(v, c.id))
		require.Equal(t, Bulks("l", "1"), q.turnsOf())
		require.Equal(t, Bulks("1"), q.signalOf(), "the lane became ready")
		require.Equal(t, Int(0), q.r("HEXISTS", q.fixed(protocol.SuffixLaneInfo), "active:l"))
		q.laneInvariants([]string{"l"}, "after cancel")
	})
	scenario(t, env, "a child tells its parent as a dead one", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p", wait: "60000"}, job{data: "c", parent: "1", wait: "60000"}, job{data: "d", parent: "1", onfail: "continue"})
		require.Equal(t, Int(1), q.call(v, "3"))
		require.Equal(t, Arr(Bulk("waiting"), Bulk("1")), q.r("HMGET", q.k.Job("1"), "state", "deps"))
		require.Equal(t, []string{"3", "cancelled"}, q.hgetall(q.k.Failures("1")))
		require.Equal(t, Int(1), q.call(v, "2"))
		require.Equal(t, Arr(Bulk("dead"), Bulk("child 2 failed")), q.r("HMGET", q.k.Job("1"), "state", "err"))
		require.Equal(t, Bulks("dcancelled"), q.r("LRANGE", q.doneKey("2"), "0", "-1"))
		require.Equal(t, Bulks("dchild 2 failed"), q.r("LRANGE", q.doneKey("1"), "0", "-1"))
		require.Equal(t, Arr(Bulk("2"), Bulk("1")), q.r("HMGET", q.k.Stats, "cancelled", "dead"))
	})
	scenario(t, env, "a child with policy ignore releases its parent", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "c", parent: "1", onfail: "ignore"})
		require.Equal(t, Int(1), q.call(v, "2"))
		require.Equal(t, Bulk("pending"), q.r("HGET", q.k.Job("1"), "state"))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, Bulks("1"), q.signalOf())
	})
	scenario(t, env, "events", func(t *testing.T, q *queue) {
		q.install()
		q.eventsOn("100")
		q.add(job{data: "p"}, job{data: "c", parent: "1", onfail: "ignore"}, job{data: "x", delay: "3600000"})
		q.clearEvents()
		q.must(v, "2")
		q.must(v, "3")
		require.Equal(t, []string{entry(event("cancelled", "2", "state", "pending"), event("released", "1")),
			evt("cancelled", "3", "state", "delayed")}, q.eventLog())
	})
	scenario(t, env, "refusals", func(t *testing.T, q *queue) {
		id := q.dead(job{data: "a"})
		require.Equal(t, Int(0), q.unchanged(q.verb(v, "9")), "a gone row")
		q.refuse(protocol.ErrCancelState, q.verb(v, id))
		q.must(protocol.Retain, "60000", "0", "0", "0", "0")
		q.add(job{data: "r"})
		c := q.claimOne()
		q.must(protocol.Complete, c.id, c.token(), "")
		q.refuse(protocol.ErrCancelState, q.verb(v, c.id))
		q.add(job{data: "p"}, job{data: "k", parent: "1"})
		q.refuse(protocol.ErrCancelState, q.verb(v, "3")) // a waiting parent
	})
}
