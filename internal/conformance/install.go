package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testInstall: EMQ.INSTALL stamps the wire and runs no fence.
func testInstall(t *testing.T, env Env) {
	scenario(t, env, "absent: SET version 2", func(t *testing.T, q *queue) {
		require.Equal(t, Int(1), q.call(protocol.Install))
		require.Equal(t, Bulk(protocol.WireString), q.r("GET", q.k.Version))
		require.Equal(t, Int(-1), q.r("PTTL", q.k.Version))
		require.Equal(t, []string{q.k.Version}, keysOf(q.snapshot()))
	})
	scenario(t, env, "installed: 0", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Install)))
	})
	for _, found := range []string{"1", "3", "01", "", "1\x00", "2\x00", "1 ", "02"} {
		scenario(t, env, "other wire "+quote(found), func(t *testing.T, q *queue) {
			q.do("SET", q.k.Version, found)
			q.refuse(ErrorText(protocol.ErrWireFound(found)), q.verb(protocol.Install))
		})
	}
	scenario(t, env, "other wire with jobs", func(t *testing.T, q *queue) {
		fixtures[protocol.Stats](q)
		q.do("SET", q.k.Version, "7")
		q.refuse(protocol.ErrWireFound("7"), q.verb(protocol.Install))
	})
	// no dataset is upgraded in place (nothing of wire 1 was released): a
	// queue whose version holds 1 is refused by INSTALL and every verb
	scenario(t, env, "wire 1 with jobs is refused by install and the verbs", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b", delay: "60000"})
		c := q.claimOne()
		q.addOne("c")
		q.do("SET", q.k.Version, "1")
		q.refuse(protocol.ErrWireFound("1"), q.verb(protocol.Install))
		q.refuse(protocol.ErrWireFound("1"), q.verb(protocol.Claim, "30000", "1"))
		q.refuse(protocol.ErrWireFound("1"), q.verb(protocol.Complete, c.id, c.token(), ""))
	})
}

func keysOf(snap map[string]string) []string {
	out := make([]string, 0, len(snap))
	for k := range snap {
		out = append(out, k)
	}
	return out
}
