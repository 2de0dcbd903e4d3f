package conformance

import (
	"testing"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// luaEnv is the Lua executor on a new server.
func luaEnv(t *testing.T) Env {
	s := valkeytest.Start(t, valkeyserver.Options{Debug: true})
	c := valkeytest.Client(t, s)
	return Env{Server: s, Client: c, Exec: executor.NewLua(c), NewExec: func(c valkey.Client) executor.Executor { return executor.NewLua(c) }}
}

// TestLua runs the suite on the Lua executor, the oracle: a server per
// shard (see Run), the scripts run with EVALSHA.
func TestLua(t *testing.T) {
	skipSuiteInShort(t)
	Run(t, luaEnv)
}

// skipSuiteInShort skips the whole suite under -short: its thousands of
// scenarios take minutes, while the maxmemory and read-only scenarios, on
// servers of their own, take a second and still run.
func skipSuiteInShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the suite's thousands of scenarios take minutes; the full run (go test ./internal/conformance, as scripts/test.sh and scripts/test-matrix.sh run it) covers them")
	}
}

// TestLuaMaxmemory runs the maxmemory scenarios on a server of their own.
func TestLuaMaxmemory(t *testing.T) { RunMaxmemory(t, luaEnv(t)) }

// TestLuaReadOnly runs the read-only user and pause scenarios on a server
// of their own.
func TestLuaReadOnly(t *testing.T) { RunReadOnly(t, luaEnv(t)) }
