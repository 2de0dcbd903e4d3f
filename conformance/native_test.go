package conformance

import (
	"testing"

	"trafikey/emq"
	"trafikey/internal/valkeyserver"
	"trafikey/internal/valkeytest"
)

// TestNative runs the suite on the native executor: one server loading the
// trafikey module, which registers every job-core verb.
func TestNative(t *testing.T) {
	module := valkeytest.ModulePath(t)
	Run(t, func(t *testing.T) Env {
		s := valkeytest.Start(t, valkeyserver.Options{Debug: true, Module: module})
		c := valkeytest.Client(t, s)
		return Env{Server: s, Client: c, Exec: emq.NewNative(c)}
	})
}
