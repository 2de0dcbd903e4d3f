package conformance

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testUnique: a unique key admits one job at a time: held from ADD until the
// job completes or is removed, or until its TTL ends.
func testUnique(t *testing.T, env Env) {
	scenario(t, env, "held with a TTL", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", unique: "u", uniqueTTL: "60000"})[0]
		require.Equal(t, Bulk(id), q.r("GET", q.k.Unique("u")))
		ttl, err := q.cmd("PTTL", q.k.Unique("u")).AsInt64()
		require.NoError(t, err)
		within(t, ttl, 1, 60000, "PTTL")
		require.Equal(t, Bulk("u"), q.r("HGET", q.k.Job(id), "uniq"))
	})
	scenario(t, env, "duplicate", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", unique: "u"})[0]
		q.refuse(protocol.ErrAddDuplicate(id), q.verb(protocol.Add, addArgs(job{data: "b", unique: "u"})...))
	})
	for _, holder := range []string{"someone", "", "some\r\none", "someone\x00else"} {
		scenario(t, env, "duplicate names the holder as stored "+strconv.Quote(holder), func(t *testing.T, q *queue) {
			q.install()
			q.do("SET", q.k.Unique("u"), holder)
			q.refuse(ErrorText(protocol.ErrAddDuplicate(holder)), q.verb(protocol.Add, addArgs(job{data: "b", unique: "u"})...))
		})
	}
	scenario(t, env, "duplicate of a later job in the batch", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", unique: "u"})[0]
		q.refuse(protocol.ErrAddDuplicate(id),
			q.verb(protocol.Add, addArgs(job{data: "b", unique: "v"}, job{data: "c"}, job{data: "d", unique: "u"})...))
	})
	scenario(t, env, "duplicate in batch", func(t *testing.T, q *queue) {
		q.install()
		q.refuse(protocol.ErrAddDuplicateInBatch,
			q.verb(protocol.Add, addArgs(job{data: "a", unique: "v"}, job{data: "b"}, job{data: "c", unique: "v"})...))
	})
	scenario(t, env, "in batch before held", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", unique: "held"})
		q.refuse(protocol.ErrAddDuplicateInBatch,
			q.verb(protocol.Add, addArgs(job{data: "b", unique: "v"}, job{data: "c", unique: "v"}, job{data: "d", unique: "held"})...))
	})
	scenario(t, env, "held before in batch", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", unique: "held"})[0]
		q.refuse(protocol.ErrAddDuplicate(id),
			q.verb(protocol.Add, addArgs(job{data: "b", unique: "held"}, job{data: "c", unique: "v"}, job{data: "d", unique: "v"})...))
	})
	scenario(t, env, "distinct keys in one batch", func(t *testing.T, q *queue) {
		q.install()
		ids := q.add(job{data: "a", unique: "x"}, job{data: "b", unique: "y"}, job{data: "c"})
		require.Equal(t, Bulks(ids[0], ids[1]), q.r("MGET", q.k.Unique("x"), q.k.Unique("y")))
	})
	scenario(t, env, "released on complete", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a", unique: "u"})
		q.must(protocol.Complete, c.id, c.token(), "")
		require.Equal(t, []string{"2"}, q.add(job{data: "b", unique: "u"}))
	})
	scenario(t, env, "released on remove", func(t *testing.T, q *queue) {
		q.install()
		id := q.add(job{data: "a", unique: "u"})[0]
		q.must(protocol.Remove, id, "0")
		require.Equal(t, []string{"2"}, q.add(job{data: "b", unique: "u"}))
	})
	scenario(t, env, "held while dead", func(t *testing.T, q *queue) {
		id := q.dead(job{data: "a", unique: "u"})
		q.refuse(protocol.ErrAddDuplicate(id), q.verb(protocol.Add, addArgs(job{data: "b", unique: "u"})...))
	})
	scenario(t, env, "expires by TTL", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", unique: "u", uniqueTTL: "5"})
		pause(4 * leaseWait)
		require.Equal(t, []string{"2"}, q.add(job{data: "b", unique: "u"}))
		require.Equal(t, Bulk("2"), q.r("GET", q.k.Unique("u")))
	})
	scenario(t, env, "a job without a unique key holds none", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		keys, err := q.cmd("KEYS", "emq:{"+q.name+"}:unique:*").AsStrSlice()
		require.NoError(t, err)
		require.Empty(t, keys)
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Job("1"), "uniq"))
	})
}
