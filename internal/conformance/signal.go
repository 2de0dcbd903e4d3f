package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testSignal: the signal list gets one token when pending goes from empty to
// not empty (ADD, RECOVER, PROMOTE, REQUEUE) or when RESUME finds jobs
// waiting, and each push is announced on the channel named as the list
// when the caller may publish there.
func testSignal(t *testing.T, env Env) {
	one := Bulks("1")
	scenario(t, env, "pushed once when pending stops being empty", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		require.Equal(t, one, q.r("LRANGE", q.k.Signal, "0", "-1"))
		q.addOne("b")
		require.Equal(t, one, q.r("LRANGE", q.k.Signal, "0", "-1"), "still one token")
		q.do("DEL", q.k.Signal)
		q.addOne("c")
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal), "pending was not empty")
		q.claim(60000, 10)
		q.addOne("d")
		require.Equal(t, one, q.r("LRANGE", q.k.Signal, "0", "-1"))
	})
	scenario(t, env, "a stale token is not duplicated", func(t *testing.T, q *queue) {
		q.install()
		q.do("RPUSH", q.k.Signal, "1")
		q.addOne("a")
		require.Equal(t, one, q.r("LRANGE", q.k.Signal, "0", "-1"))
	})
	scenario(t, env, "not pushed for delayed jobs", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", delay: "60000"})
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal))
	})
	scenario(t, env, "a batch with one pending job", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", delay: "60000"}, job{data: "b"})
		require.Equal(t, one, q.r("LRANGE", q.k.Signal, "0", "-1"))
	})
	scenario(t, env, "recover", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		q.expired()
		q.do("DEL", q.k.Signal)
		q.must(protocol.Recover, "10")
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal), "pending still held b")
		q.claim(60000, 10)
		q.do("ZADD", q.k.Active, "XX", "0", "1", "0", "2")
		q.must(protocol.Recover, "10")
		require.Equal(t, one, q.r("LRANGE", q.k.Signal, "0", "-1"))
	})
	scenario(t, env, "recover to dead only", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", attempts: "1"})
		q.expired()
		q.do("DEL", q.k.Signal)
		q.must(protocol.Recover, "10")
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal))
	})
	scenario(t, env, "promote", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", delay: "1"})
		pause(leaseWait)
		q.must(protocol.Promote, "10")
		require.Equal(t, one, q.r("LRANGE", q.k.Signal, "0", "-1"))
	})
	scenario(t, env, "requeue", func(t *testing.T, q *queue) {
		id := q.dead(job{data: "a"})
		q.do("DEL", q.k.Signal)
		q.must(protocol.Requeue, id)
		require.Equal(t, one, q.r("LRANGE", q.k.Signal, "0", "-1"))
	})
	scenario(t, env, "requeue behind waiting jobs", func(t *testing.T, q *queue) {
		id := q.dead(job{data: "a"})
		q.addOne("b")
		q.do("DEL", q.k.Signal)
		q.must(protocol.Requeue, id)
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Signal))
	})
	// A sentinel published after calls that must announce nothing comes
	// next on the channel only if they announced nothing.
	scenario(t, env, "each push is announced on the signal channel", func(t *testing.T, q *queue) {
		msgs := q.subscribe(q.k.Signal)
		q.install()
		q.addOne("a")
		require.Equal(t, "1", q.nextNotice(msgs))
		q.addOne("b")
		q.sentinel("after b")
		require.Equal(t, "after b", q.nextNotice(msgs), "pending was not empty: no announcement")
		q.claim(60000, 10)
		q.add(job{data: "c", delay: "1"})
		q.sentinel("after c")
		require.Equal(t, "after c", q.nextNotice(msgs), "a delayed job: no announcement")
		pause(leaseWait)
		q.must(protocol.Promote, "10")
		require.Equal(t, "1", q.nextNotice(msgs), "promoted into an empty pending")
		require.Equal(t, one, q.r("LRANGE", q.k.Signal, "0", "-1"))
	})
	scenario(t, env, "a caller that may not publish pushes without the announcement", func(t *testing.T, q *queue) {
		msgs := q.subscribe(q.k.Signal)
		q.install()
		channel := "&" + q.k.Signal
		// no channel rule, then the channel without the command
		for i, as := range []*queue{q.as(nil), q.as(nil, channel, "-spublish")} {
			q.do("DEL", q.k.Pending, q.k.Signal)
			as.addOne("a")
			require.Equal(t, one, q.r("LRANGE", q.k.Signal, "0", "-1"), "the token is pushed all the same")
			q.sentinel("denied")
			require.Equal(t, "denied", q.nextNotice(msgs), "caller %d: no announcement", i)
		}
		q.do("DEL", q.k.Pending, q.k.Signal)
		q.as(nil, channel).addOne("a")
		require.Equal(t, "1", q.nextNotice(msgs), "the allowed caller's push is announced")
	})
}

// sentinel publishes msg on the queue's signal channel from a connection of
// its own: the subscribed connection carries the other scenarios' calls.
func (q *queue) sentinel(msg string) {
	q.t.Helper()
	_, err := q.env.Server.Do(q.t.Context(), "SPUBLISH", q.k.Signal, msg)
	require.NoError(q.t, err)
}
