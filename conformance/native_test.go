package conformance

import (
	"testing"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// nativeEnv is the native executor on a new server loading the trafikey
// module, which must register every job-core verb. A Redis server has no
// native executor (the module is Valkey's and needs its API): there the
// suite runs on the Lua executor alone, and the native tests say so.
func nativeEnv(t *testing.T) Env {
	if valkeytest.ServerIsRedis(t) {
		t.Skip("the server is Redis (INFO server): the native executor is a Valkey module, so only the Lua executor runs")
	}
	s := valkeytest.Start(t, valkeyserver.Options{Debug: true, Module: valkeytest.ModulePath(t)})
	c := valkeytest.Client(t, s)
	valkeytest.RequireVerbs(t, c)
	return Env{Server: s, Client: c, Exec: executor.NewNative(c), NewExec: func(c valkey.Client) executor.Executor { return executor.NewNative(c) }}
}

// TestNative runs the suite on the native executor.
func TestNative(t *testing.T) { Run(t, nativeEnv) }

// TestNativeMaxmemory runs the maxmemory scenarios on a server of their own.
func TestNativeMaxmemory(t *testing.T) { RunMaxmemory(t, nativeEnv(t)) }

// TestNativeReadOnly runs the read-only user and pause scenarios on a server
// of their own.
func TestNativeReadOnly(t *testing.T) { RunReadOnly(t, nativeEnv(t)) }
