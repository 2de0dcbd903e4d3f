package conformance

import (
	"testing"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/executor"

	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// TestNative runs the suite on the native executor: one server loading the
// trafikey module, which registers every job-core verb.
func TestNative(t *testing.T) {
	module := valkeytest.ModulePath(t)
	Run(t, func(t *testing.T) Env {
		s := valkeytest.Start(t, valkeyserver.Options{Debug: true, Module: module})
		c := valkeytest.Client(t, s)
		valkeytest.RequireVerbs(t, c)
		return Env{Server: s, Client: c, Exec: executor.NewNative(c)}
	})
}

// TestNativeMaxmemory runs the maxmemory scenarios on a server of their own.
func TestNativeMaxmemory(t *testing.T) {
	s := valkeytest.Start(t, valkeyserver.Options{Debug: true, Module: valkeytest.ModulePath(t)})
	c := valkeytest.Client(t, s)
	valkeytest.RequireVerbs(t, c)
	RunMaxmemory(t, Env{Server: s, Client: c, Exec: executor.NewNative(c)})
}

// TestNativeReadOnly runs the read-only user and pause scenarios on a server
// of their own.
func TestNativeReadOnly(t *testing.T) {
	s := valkeytest.Start(t, valkeyserver.Options{Debug: true, Module: valkeytest.ModulePath(t)})
	c := valkeytest.Client(t, s)
	RunReadOnly(t, Env{Server: s, Client: c, Exec: executor.NewNative(c)}, func(c valkey.Client) executor.Executor { return executor.NewNative(c) })
}
