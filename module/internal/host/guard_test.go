package host

import (
	"errors"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestWriteGuard(t *testing.T) {
	if err := writeGuard(false); err != nil {
		t.Fatalf("writeGuard(false) = %v, want nil", err)
	}
	err := writeGuard(true)
	if !errors.Is(err, ErrWritePaused) {
		t.Fatalf("writeGuard(true) = %v, want ErrWritePaused", err)
	}
	if err.Error() != protocol.ErrWritePaused {
		t.Fatalf("text %q, want %q", err.Error(), protocol.ErrWritePaused)
	}
}

func TestWritesNeedTheGuard(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Write on a zero Writes did not panic")
		}
	}()
	var w Writes // what code outside the package can make: useless
	w.Write()
}
