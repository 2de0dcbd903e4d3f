package conformance

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testAppend: EMQ.APPEND, a batch of stream entries with explicit ids, all
// written or none.
func testAppend(t *testing.T, env Env) {
	v := protocol.Append
	notAfter := protocol.ErrNotAfterTop(v.Name)
	scenario(t, env, "a batch into a new stream", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(3), q.call(v, "3", "1-1", "1", "f", "v", "1-2", "2", "a", "1", "b", "2", "2-0", "1", "f", "v"))
		require.Equal(t, `[["1-1", ["f", "v"]], ["1-2", ["a", "1", "b", "2"]], ["2-0", ["f", "v"]]]`, q.xrange(q.busKey("main")))
		require.Equal(t, "2-0", q.top(q.busKey("main")))
	})
	scenario(t, env, "after the top", func(t *testing.T, q *queue) {
		q.install()
		key := q.busKey("main")
		q.do("XADD", key, "5-0", "f", "v")
		for _, id := range []string{"5-0", "4-9", "0-1", "1-0"} {
			q.refuse(notAfter, q.verb(v, "1", id, "1", "f", "v"))
		}
		require.Equal(t, Int(1), q.call(v, "1", "5-1", "1", "f", "v"))
		require.Equal(t, Int(1), q.call(v, "1", "6-0", "1", "f", "v"))
		require.Equal(t, "6-0", q.top(key))
	})
	scenario(t, env, "the top outlives its entries", func(t *testing.T, q *queue) {
		q.install()
		key := q.busKey("main")
		q.do("XADD", key, "10-0", "f", "v")
		q.do("XDEL", key, "10-0")
		q.refuse(notAfter, q.verb(v, "1", "9-0", "1", "f", "v"))
		q.refuse(notAfter, q.verb(v, "1", "10-0", "1", "f", "v"))
		require.Equal(t, Int(1), q.call(v, "1", "10-1", "1", "f", "v"))
	})
	scenario(t, env, "a batch with one bad id writes nothing", func(t *testing.T, q *queue) {
		q.install()
		q.do("XADD", q.busKey("main"), "5-0", "f", "v")
		q.refuse(notAfter, q.verb(v, "3", "6-0", "1", "f", "v", "7-0", "1", "f", "v", "5-0", "1", "f", "v"))
		q.refuse(notAfter, q.verb(v, "2", "6-0", "1", "f", "v", "6-0", "1", "f", "v"))
		q.refuse(notAfter, q.verb(v, "2", "7-0", "1", "f", "v", "6-9", "1", "f", "v"))
	})
	scenario(t, env, "a batch with one bad id into a new stream writes nothing", func(t *testing.T, q *queue) {
		q.install()
		q.refuse(notAfter, q.verb(v, "2", "2-0", "1", "f", "v", "1-0", "1", "f", "v"))
		require.Equal(t, Int(0), q.r("EXISTS", q.busKey("main")))
	})
	scenario(t, env, "a top past the ids' domain", func(t *testing.T, q *queue) {
		q.install()
		q.do("XADD", q.busKey("main"), "18446744073709551615-18446744073709551615", "f", "v")
		q.refuse(notAfter, q.verb(v, "1", "999999999999999-999999999999999", "1", "f", "v"))
	})
	scenario(t, env, "the largest id", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(1), q.call(v, "1", "999999999999999-999999999999999", "1", "f", "v"))
		q.refuse(notAfter, q.verb(v, "1", "999999999999999-999999999999999", "1", "f", "v"))
	})
	for _, id := range []string{"0-0", "1", "1-", "-1", "x", "01-1", "1-01", "1-2-3", "*", "1-*", "+1-0", "1000000000000000-0", "0-1000000000000000", "1 -1", "", "1-1\x00"} {
		scenario(t, env, "bad id "+strconv.Quote(id), func(t *testing.T, q *queue) {
			q.install()
			q.refuse(protocol.ErrBadArg(v.Name, "id"), q.verb(v, "1", id, "1", "f", "v"))
		})
	}
	scenario(t, env, "bad id after a good one", func(t *testing.T, q *queue) {
		q.install()
		q.refuse(protocol.ErrBadArg(v.Name, "id"), q.verb(v, "2", "1-1", "1", "f", "v", "0-0", "1", "f", "v"))
	})
	for _, nf := range []string{"0", "1001", "x", "01", "-1", ""} {
		scenario(t, env, "bad fields "+strconv.Quote(nf), func(t *testing.T, q *queue) {
			q.install()
			q.refuse(protocol.ErrBadArg(v.Name, "fields"), q.verb(v, "1", "1-1", nf, "f", "v"))
		})
	}
	scenario(t, env, "fields before the ids", func(t *testing.T, q *queue) {
		q.install()
		q.refuse(protocol.ErrBadArg(v.Name, "fields"), q.verb(v, "2", "x", "1", "f", "v", "1-2", "0"))
	})
	scenario(t, env, "an entry short of its fields", func(t *testing.T, q *queue) {
		q.install()
		q.refuse(protocol.ErrArity(v.Name), q.verb(v, "1", "1-1", "2", "f", "v", "g"))
	})
	for _, name := range busNamesBad {
		scenario(t, env, "bus name "+strconv.Quote(name), func(t *testing.T, q *queue) {
			q.install()
			keys := []string{q.k.Base, q.k.Version, q.busKey(name)}
			q.refuseKeys(protocol.ErrLayout(v.Name), keys, q.keys(v, keys, "1", "1-1", "1", "f", "v"))
		})
	}
	for _, name := range busNamesOK {
		scenario(t, env, "bus name "+strconv.Quote(name[:min(len(name), 16)]), func(t *testing.T, q *queue) {
			q.install()
			keys := []string{q.k.Base, q.k.Version, q.busKey(name)}
			require.Equal(t, Int(1), Render(q.keys(v, keys, "1", "1-1", "1", "f", "v")()))
		})
	}
	scenario(t, env, "binary fields and values", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(1), q.call(v, "1", "1-1", "2", "\x00\xff", "", "k", "a\x00b"))
		require.Equal(t, `[["1-1", ["\x00\xff", "", "k", "a\x00b"]]]`, q.xrange(q.busKey("main")))
	})
	scenario(t, env, "many fields", func(t *testing.T, q *queue) {
		q.install()
		args := []string{"1", "1-1", strconv.Itoa(protocol.MaxEntryFields)}
		for i := range protocol.MaxEntryFields {
			args = append(args, "f"+strconv.Itoa(i), "v")
		}
		require.Equal(t, Int(1), q.call(v, args...))
		require.Equal(t, Int(1), q.r("XLEN", q.busKey("main")))
	})
}
