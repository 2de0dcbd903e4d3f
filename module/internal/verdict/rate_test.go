package verdict

import (
	"errors"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

func TestRateValues(t *testing.T) {
	t.Parallel()
	badMax := grammar.Refusal(protocol.ErrBadArg("rate", "max"))
	badWindow := grammar.Refusal(protocol.ErrBadArg("rate", "window"))
	for _, tc := range []struct {
		max, window string
		err         error
	}{
		{"10", "1000", nil},
		{"0", "0", nil},
		{"1000000", "86400000", nil},
		{"1000001", "1", badMax},
		{"x", "x", badMax},
		{"1", "86400001", badWindow},
		{"1", "0", badWindow},
		{"0", "1", badWindow},
		{"1", "01", badWindow},
	} {
		if _, _, err := RateValues([]byte(tc.max), []byte(tc.window)); !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
			t.Errorf("%s %s: %v", tc.max, tc.window, err)
		}
	}
	if set, del := RateChange(5, [2]Field{}); !set || del {
		t.Error("a rate is always set")
	}
	if set, del := RateChange(0, [2]Field{{}, Str("1")}); set || !del {
		t.Error("0 0 clears a field left")
	}
	if set, del := RateChange(0, [2]Field{}); set || del {
		t.Error("0 0 of no rate writes nothing")
	}
}
