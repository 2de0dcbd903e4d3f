package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/protocol"
)

// testInstall: EMQ.INSTALL stamps the wire and runs no fence.
func testInstall(t *testing.T, env Env) {
	scenario(t, env, "absent: SET version 1", func(t *testing.T, q *queue) {
		require.Equal(t, Int(1), q.call(protocol.Install))
		require.Equal(t, Bulk("1"), q.r("GET", q.k.Version))
		require.Equal(t, Int(-1), q.r("PTTL", q.k.Version))
		require.Equal(t, []string{q.k.Version}, keysOf(q.snapshot()))
	})
	scenario(t, env, "installed: 0", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.Install)))
	})
	for _, found := range []string{"2", "01", "", "1\x00"} {
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
}

func keysOf(snap map[string]string) []string {
	out := make([]string, 0, len(snap))
	for k := range snap {
		out = append(out, k)
	}
	return out
}
