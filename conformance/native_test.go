package conformance

import (
	"testing"

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
