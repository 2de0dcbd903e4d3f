package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testSignal: the signal list gets one token when pending goes from empty to
// not empty (ADD, RECOVER, PROMOTE, REQUEUE) or when RESUME finds jobs
// waiting.
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
}
