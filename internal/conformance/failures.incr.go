package conformance

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testFailuresIncr: EMQ.FAILURES.INCR, a downstream's failures counted in a
// window that starts with its first failure.
func testFailuresIncr(t *testing.T, env Env) {
	v := protocol.FailuresIncr
	key := func(q *queue) string { return v.NamedKey(q.k, protocol.DefaultBusName) }
	pttl := func(q *queue) int64 {
		n, err := q.cmd("PTTL", key(q)).AsInt64()
		require.NoError(q.t, err)
		return n
	}
	scenario(t, env, "count in a window", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(1), q.call(v, "60000"))
		first := pttl(q)
		within(t, first, 59000, 60000, "the window")
		require.Equal(t, Int(2), q.call(v, "1000"))
		within(t, pttl(q), 59000, first, "the window is not moved")
		require.Equal(t, Bulk("2"), q.r("GET", key(q)))
	})
	scenario(t, env, "the window ends", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(1), q.call(v, "1"))
		pause(leaseWait)
		require.Equal(t, Int(1), q.call(v, "60000"))
	})
	scenario(t, env, "a counter without a TTL gets one", func(t *testing.T, q *queue) {
		q.install()
		q.do("SET", key(q), "5")
		require.Equal(t, Int(6), q.call(v, "60000"))
		within(t, pttl(q), 59000, 60000, "the window")
	})
	scenario(t, env, "negative counts", func(t *testing.T, q *queue) {
		q.install()
		q.do("SET", key(q), "-5")
		require.Equal(t, Int(-4), q.call(v, "60000"))
	})
	for _, stored := range []string{"abc", "", "01", "+1", " 1", "1 ", "1.5", "9223372036854775808", "-9223372036854775809", "-0", "\x001"} {
		scenario(t, env, "not an integer "+strconv.Quote(stored), func(t *testing.T, q *queue) {
			q.install()
			q.do("SET", key(q), stored)
			q.refuse(protocol.ErrNotInteger, q.verb(v, "60000"))
		})
	}
	scenario(t, env, "overflow", func(t *testing.T, q *queue) {
		q.install()
		q.do("SET", key(q), "9223372036854775807")
		q.refuse(protocol.ErrOverflow, q.verb(v, "60000"))
	})
	scenario(t, env, "int64 min", func(t *testing.T, q *queue) {
		q.install()
		q.do("SET", key(q), "-9223372036854775808")
		require.NotContains(t, q.call(v, "60000"), "error")
	})
	scenario(t, env, "the TTL at the bound", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(1), q.call(v, strconv.FormatInt(protocol.MaxFailuresTTL, 10)))
		within(t, pttl(q), protocol.MaxFailuresTTL-1000, protocol.MaxFailuresTTL, "the window")
	})
	scenario(t, env, "the TTL past the bound before the fence", func(t *testing.T, q *queue) {
		q.do("SET", key(q), "abc")
		q.refuse(protocol.ErrBadArg(v.Name, "ttl"), q.verb(v, strconv.FormatInt(protocol.MaxFailuresTTL+1, 10)))
		q.refuse(protocol.ErrBadArg(v.Name, "ttl"), q.verb(v, "0"))
	})
	for _, name := range busNamesBad {
		scenario(t, env, "name "+strconv.Quote(name), func(t *testing.T, q *queue) {
			q.install()
			keys := []string{q.k.Base, q.k.Version, v.NamedKey(q.k, name)}
			q.refuseKeys(protocol.ErrLayout(v.Name), keys, q.keys(v, keys, "60000"))
		})
	}
	scenario(t, env, "names count apart", func(t *testing.T, q *queue) {
		q.install()
		for _, name := range []string{"a", "b", "a"} {
			keys := []string{q.k.Base, q.k.Version, v.NamedKey(q.k, name)}
			Render(q.keys(v, keys, "60000")())
		}
		require.Equal(t, Bulk("2"), q.r("GET", v.NamedKey(q.k, "a")))
		require.Equal(t, Bulk("1"), q.r("GET", v.NamedKey(q.k, "b")))
	})
}
