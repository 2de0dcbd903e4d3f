package conformance

import (
	"testing"

	"github.com/trafikey/trafikey/internal/executor"

	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// TestLua runs the suite on the Lua executor, the oracle: one server, the
// scripts run with EVALSHA.
func TestLua(t *testing.T) {
	Run(t, func(t *testing.T) Env {
		s := valkeytest.Start(t, valkeyserver.Options{Debug: true})
		c := valkeytest.Client(t, s)
		return Env{Server: s, Client: c, Exec: executor.NewLua(c)}
	})
}
