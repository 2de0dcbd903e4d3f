package main

import (
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// EMQ.INSTALL on a real server: stamps once, then answers 0; another wire
// or type refuses and writes nothing.
func TestInstall(t *testing.T) {
	t.Parallel()
	s := startModule(t, valkeyserver.Options{})
	k := protocol.KeysOf("i")
	call := func(keys ...string) []string { return append([]string{"EMQ.INSTALL", "2"}, keys...) }
	if v := valkeytest.Do(t, s, call(k.Base, k.Version)...); v != int64(1) {
		t.Fatalf("first install: %#v", v)
	}
	if v := valkeytest.Do(t, s, call(k.Base, k.Version)...); v != int64(0) {
		t.Fatalf("second install: %#v", v)
	}
	wantRefused(t, s, protocol.ErrLayout("install"), call(k.Base, k.Meta)...)
	wantRefused(t, s, protocol.ErrNumkeys("install", 2), "EMQ.INSTALL", "1", k.Base)
	wantRefused(t, s, protocol.ErrArity("install"), append(call(k.Base, k.Version), "x")...)
	valkeytest.Do(t, s, "SET", k.Version, "2\x00x")
	wantRefused(t, s, "EMQWIRE wire 2", call(k.Base, k.Version)...) // the text ends at the NUL, as the server ends it
	valkeytest.Do(t, s, "DEL", k.Version)
	valkeytest.Do(t, s, "HSET", k.Version, "f", "v")
	wantRefused(t, s, protocol.ErrWrongType, call(k.Base, k.Version)...)
}
