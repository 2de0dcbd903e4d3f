package conformance

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// streamID is a stream id as PUBLISH replies it, rendered.
var streamID = regexp.MustCompile(`^"(\d+)-(\d+)"$`)

// published runs PUBLISH and returns the entry id it replied.
func (q *queue) published(args ...string) string {
	q.t.Helper()
	r := q.call(protocol.Publish, args...)
	m := streamID.FindStringSubmatch(r)
	require.NotNil(q.t, m, "PUBLISH %q: %s", args, r)
	return m[1] + "-" + m[2]
}

// testPublish: EMQ.PUBLISH, one branded event on the queue's events stream.
func testPublish(t *testing.T, env Env) {
	v := protocol.Publish
	scenario(t, env, "a new stream", func(t *testing.T, q *queue) {
		q.install()
		before := q.now()
		id := q.published("added", "7", "lane", "l")
		after := q.now()
		ms, err := strconv.ParseInt(strings.SplitN(id, "-", 2)[0], 10, 64)
		require.NoError(t, err)
		within(t, ms, before, after, "the entry's ms")
		require.Equal(t, Arr(Arr(Bulk(id), Bulks("brand", "emq", "event", "added", "id", "7", "lane", "l"))), q.xrange(q.k.Fixed(protocol.SuffixEvents)))
	})
	scenario(t, env, "events in order", func(t *testing.T, q *queue) {
		q.install()
		a := q.published("added", "1")
		b := q.published("claimed", "1")
		c := q.published("completed", "1", "\x00", "\xff")
		require.Equal(t, Arr(
			Arr(Bulk(a), Bulks("brand", "emq", "event", "added", "id", "1")),
			Arr(Bulk(b), Bulks("brand", "emq", "event", "claimed", "id", "1")),
			Arr(Bulk(c), Bulks("brand", "emq", "event", "completed", "id", "1", "\x00", "\xff")),
		), q.xrange(q.k.Fixed(protocol.SuffixEvents)))
	})
	scenario(t, env, "after a top in the future", func(t *testing.T, q *queue) {
		q.install()
		q.do("XADD", q.k.Fixed(protocol.SuffixEvents), "99999999999999-5", "brand", "emq")
		require.Equal(t, "99999999999999-6", q.published("added", "1"))
	})
	kind := protocol.ErrKind(v.Name)
	for _, tc := range []struct {
		name  string
		first []string
	}{
		{"another brand", []string{"brand", "bull"}},
		{"brand not first", []string{"event", "added", "brand", "emq"}},
		{"brand in capitals", []string{"Brand", "emq"}},
		{"brand with a trailing byte", []string{"brand", "emq\x00"}},
	} {
		scenario(t, env, "wrong brand: "+tc.name, func(t *testing.T, q *queue) {
			q.install()
			q.do(append([]string{"XADD", q.k.Fixed(protocol.SuffixEvents), "*"}, tc.first...)...)
			q.refuse(kind, q.verb(v, "added", "1"))
		})
	}
	scenario(t, env, "the first entry decides the brand", func(t *testing.T, q *queue) {
		q.install()
		events := q.k.Fixed(protocol.SuffixEvents)
		q.do("XADD", events, "1-1", "brand", "bull")
		q.do("XADD", events, "1-2", "brand", "emq")
		q.refuse(kind, q.verb(v, "added", "1"))
		q.do("XDEL", events, "1-1")
		q.published("added", "1")
	})
	scenario(t, env, "a stream without entries is taken", func(t *testing.T, q *queue) {
		q.install()
		events := q.k.Fixed(protocol.SuffixEvents)
		q.do("XADD", events, "1-1", "brand", "bull")
		q.do("XDEL", events, "1-1")
		q.published("added", "1")
	})
	scenario(t, env, "no id left", func(t *testing.T, q *queue) {
		q.install()
		q.do("XADD", q.k.Fixed(protocol.SuffixEvents), "18446744073709551615-18446744073709551615", "brand", "emq")
		q.refuse(protocol.ErrNotAfterTop(v.Name), q.verb(v, "added", "1"))
	})
	scenario(t, env, "brand before the top", func(t *testing.T, q *queue) {
		q.install()
		q.do("XADD", q.k.Fixed(protocol.SuffixEvents), "18446744073709551615-18446744073709551615", "brand", "x")
		q.refuse(kind, q.verb(v, "added", "1"))
	})
	scenario(t, env, "argv odd", func(t *testing.T, q *queue) {
		q.install()
		q.refuse(protocol.ErrArity(v.Name), q.verb(v, "added", "1", "f"))
	})
	scenario(t, env, "argv past 1000 pairs", func(t *testing.T, q *queue) {
		q.install()
		args := []string{"added", "1"}
		for range protocol.MaxEntryFields {
			args = append(args, "f", "v")
		}
		require.False(t, strings.HasPrefix(q.call(v, args...), "(error)"))
		q.refuse(protocol.ErrArity(v.Name), q.verb(v, append(args, "f", "v")...))
	})
	scenario(t, env, "event before id", func(t *testing.T, q *queue) {
		q.install()
		q.refuse(protocol.ErrBadArg(v.Name, "event"), q.verb(v, "", "x"))
	})
}
