package conformance

import (
	"testing"

	"trafikey/emq"
	"trafikey/internal/valkeyserver"
	"trafikey/internal/valkeytest"
)

// TestLua runs the suite on the Lua executor, the oracle: one server, the
// scripts run with EVALSHA.
func TestLua(t *testing.T) {
	Run(t, func(t *testing.T) Env {
		s := valkeytest.Start(t, valkeyserver.Options{Debug: true})
		c := valkeytest.Client(t, s)
		return Env{Server: s, Client: c, Exec: emq.NewLua(c)}
	})
}
