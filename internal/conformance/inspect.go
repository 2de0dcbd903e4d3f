package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testInspect: EMQ.INSPECT, a row's fields in a fixed order, then its logs.
func testInspect(t *testing.T, env Env) {
	scenario(t, env, "a new job", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "payload", prio: "3", attempts: "4", backoff: "exponential", backoffMS: "100"})[0]
		at, err := q.cmd("HGET", q.k.Job(id), "at").ToString()
		require.NoError(t, err)
		require.Equal(t, Arr(
			Bulk("state"), Bulk("pending"), Bulk("data"), Bulk("payload"), Bulk("att"), Bulk("0"),
			Bulk("max"), Bulk("4"), Bulk("prio"), Bulk("3"), Bulk("bo"), Bulk("exponential:100"),
			Bulk("at"), Bulk(at), Bulk("logs"), Arr(),
		), q.unchanged(q.verb(protocol.Inspect, id)))
	})
	scenario(t, env, "every field and the logs", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "d", unique: "key"})[0]
		c := q.claimOne()
		q.must(protocol.Log, id, c.token(), "one", "10")
		q.must(protocol.Log, id, c.token(), "two", "10")
		q.must(protocol.Progress, id, c.token(), "50")
		q.must(protocol.Fail, id, c.token(), "1", "oops")
		at, err := q.cmd("HGET", q.k.Job(id), "at").ToString()
		require.NoError(t, err)
		require.Equal(t, Arr(
			Bulk("state"), Bulk("delayed"), Bulk("data"), Bulk("d"), Bulk("att"), Bulk("1"),
			Bulk("max"), Bulk("3"), Bulk("prio"), Bulk("0"), Bulk("bo"), Bulk("fixed:0"),
			Bulk("at"), Bulk(at), Bulk("err"), Bulk("oops"), Bulk("prog"), Bulk("50"), Bulk("uniq"), Bulk("key"),
			Bulk("logs"), Bulks("one", "two"),
		), q.unchanged(q.verb(protocol.Inspect, id)))
	})
	scenario(t, env, "fields as stored, in the order", func(t *testing.T, q *queue) {
		q.install()
		q.do("HSET", q.k.Job("9"), "uniq", "u", "extra", "x", "att", "abc", "state", "odd")
		require.Equal(t, Arr(Bulk("state"), Bulk("odd"), Bulk("att"), Bulk("abc"), Bulk("max"), Bulk("3"), Bulk("prio"), Bulk("0"),
			Bulk("bo"), Bulk("exponential:1000"), Bulk("uniq"), Bulk("u"),
			Bulk("logs"), Arr()), q.unchanged(q.verb(protocol.Inspect, "9")), "max, prio and bo absent reply as their defaults")
	})
	scenario(t, env, "a laned job", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "d", lane: "l\x00\xff", unique: "k"})[0]
		at, err := q.cmd("HGET", q.k.Job(id), "at").ToString()
		require.NoError(t, err)
		require.Equal(t, Arr(
			Bulk("state"), Bulk("pending"), Bulk("data"), Bulk("d"), Bulk("att"), Bulk("0"),
			Bulk("max"), Bulk("3"), Bulk("prio"), Bulk("0"), Bulk("bo"), Bulk("fixed:0"),
			Bulk("at"), Bulk(at), Bulk("uniq"), Bulk("k"), Bulk("lane"), Bulk("l\x00\xff"),
			Bulk("logs"), Arr(),
		), q.unchanged(q.verb(protocol.Inspect, id)))
	})
	scenario(t, env, "a lane as stored", func(t *testing.T, q *queue) {
		q.install()
		q.do("HSET", q.k.Job("9"), "att", "1", "lane", "")
		require.Equal(t, Arr(Bulk("state"), Bulk("pending"), Bulk("att"), Bulk("1"), Bulk("max"), Bulk("3"), Bulk("prio"), Bulk("0"),
			Bulk("bo"), Bulk("exponential:1000"), Bulk("lane"), Bulk(""), Bulk("logs"), Arr()),
			q.unchanged(q.verb(protocol.Inspect, "9")), "state, max, prio and bo absent reply as their defaults")
	})
	scenario(t, env, "gone row", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Nil, q.unchanged(q.verb(protocol.Inspect, "1")))
	})
	scenario(t, env, "a row without att is gone", func(t *testing.T, q *queue) {
		q.install()
		id := q.addOne("a")
		q.do("HDEL", q.k.Job(id), "att")
		require.Equal(t, Nil, q.unchanged(q.verb(protocol.Inspect, id)))
	})
}
