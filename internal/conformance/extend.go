package conformance

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testExtend: EMQ.EXTEND moves an active job's lease deadline.
func testExtend(t *testing.T, env Env) {
	scenario(t, env, "moves the deadline", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		c := q.claim(1000, 1)[0]
		t0 := q.now()
		reply := q.call(protocol.Extend, c.id, c.token(), "60000")
		t1 := q.now()
		d := q.score(q.k.Active, c.id)
		require.Equal(t, Int(d), reply, "the reply is the new deadline")
		within(t, d, t0+60000, t1+60000, "deadline")
	})
	scenario(t, env, "can shorten the lease", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		t0 := q.now()
		q.must(protocol.Extend, c.id, c.token(), "1")
		within(t, q.score(q.k.Active, c.id), t0+1, q.now()+1, "deadline")
	})
	for _, token := range []string{"2", "0", "", "01", "1 ", "+1"} {
		scenario(t, env, "stale token "+quote(token), func(t *testing.T, q *queue) {
			c := q.active(job{data: "a"})
			require.Equal(t, "1", c.token())
			q.refuse(protocol.ErrStale("extend"), q.verb(protocol.Extend, c.id, token, "30000"))
		})
	}
	scenario(t, env, "token of an earlier claim", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		old := q.expired()
		require.Equal(t, Arr(Int(1), Int(0)), q.call(protocol.Recover, "10"))
		q.claimOne()
		q.refuse(protocol.ErrStale("extend"), q.verb(protocol.Extend, old.id, old.token(), "30000"))
	})
	scenario(t, env, "the token is compared as bytes", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.do("HSET", q.k.Job(c.id), "att", "a\x00b")
		require.NotContains(t, q.call(protocol.Extend, c.id, "a\x00b", "30000"), "(error)")
	})
	scenario(t, env, "not active", func(t *testing.T, q *queue) {
		q.install()
		id := q.addOne("a")
		q.refuse(protocol.ErrNotActive("extend"), q.verb(protocol.Extend, id, "0", "30000"))
	})
	scenario(t, env, "not active after a retry", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", backoffMS: "60000"})
		q.must(protocol.Fail, c.id, c.token(), "1", "x")
		q.refuse(protocol.ErrNotActive("extend"), q.verb(protocol.Extend, c.id, c.token(), "30000"))
	})
	scenario(t, env, "gone row", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Extend, "1", "1", "30000")))
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Extend, strconv.FormatInt(protocol.MaxJobID, 10), "1", "30000")))
	})
}
