package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// busWorkload runs every bus verb's writing paths, and refusals, on queue q.
func busWorkload(t *testing.T, s *valkeyserver.Server, q string) {
	t.Helper()
	k := protocol.KeysOf(q)
	named := func(v *protocol.Verb, name string, args ...string) []string {
		keys := []string{k.Base, k.Version, v.NamedKey(k, name)}
		return append(append([]string{v.Command, "3"}, keys...), args...)
	}
	valkeytest.Do(t, s, verbArgs(protocol.Install, q)...)
	require.Equal(t, int64(2), valkeytest.Do(t, s, named(protocol.Append, "orders", "2", "5-1", "1", "f", "v", "5-2", "1", "g", "w")...))
	wantRefused(t, s, protocol.ErrNotAfterTop("append"), named(protocol.Append, "orders", "2", "6-0", "1", "f", "v", "5-2", "1", "f", "v")...)
	id := valkeytest.Do(t, s, verbArgs(protocol.Publish, q, "added", "1", "k", "v")...)
	require.IsType(t, "", id)

	valkeytest.Do(t, s, "SET", protocol.FailuresIncr.NamedKey(k, "bad"), "abc")
	wantRefused(t, s, protocol.ErrNotInteger, named(protocol.FailuresIncr, "bad", "60000")...)
	for want := int64(1); want <= 3; want++ {
		require.Equal(t, want, valkeytest.Do(t, s, named(protocol.FailuresIncr, "smtp", "600000")...))
	}
}

// The bus verbs' writes reach the AOF and a replica without the module as
// their effects: XADD with the ids, INCR and PEXPIREAT, never EMQ.*.
func TestBusEffects(t *testing.T) {
	t.Parallel()
	p := startModule(t, valkeyserver.Options{AOF: true})
	r := valkeytest.Start(t, valkeyserver.Options{ReplicaOf: p.Addr()})
	require.NoError(t, r.WaitReplicaSync(ctxT(t)))
	busWorkload(t, p, "bus")
	aof := readAOF(t, p)
	require.NotContains(t, strings.ToUpper(aof), "EMQ.", "the AOF holds an EMQ command")
	for _, w := range []string{"XADD", "$3\r\n5-1\r\n", "INCR", "PEXPIREAT", "MULTI", "EXEC"} {
		require.Contains(t, aof, w, "the AOF lacks %s", w)
	}
	require.NotContains(t, aof, "$1\r\n*\r\n", "PUBLISH's XADD travels with the id the primary generated")
	want := valkeytest.Snapshot(t, p, "emq:*")
	valkeytest.WaitReplicated(t, p, r)
	valkeytest.RequireUnchanged(t, want, valkeytest.Snapshot(t, r, "emq:*"))
}
