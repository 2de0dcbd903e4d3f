package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// RateValues checks RATE's max (0..MaxRateMax, "bad max") and window_ms
// (0..MaxRateWindow, "bad window"); exactly one of them 0 is "bad window".
func RateValues(maxArg, windowArg []byte) (rmax, window int64, err error) {
	rmax, ok := grammar.Decimal(maxArg, 0, protocol.MaxRateMax)
	if !ok {
		return 0, 0, refusal(protocol.ErrBadArg(protocol.Rate.Name, "max"))
	}
	window, ok = grammar.Decimal(windowArg, 0, protocol.MaxRateWindow)
	if !ok || (rmax == 0) != (window == 0) {
		return 0, 0, refusal(protocol.ErrBadArg(protocol.Rate.Name, "window"))
	}
	return rmax, window, nil
}

// RateChange is what RATE writes over meta's rate_max and rate_window as
// read: set both for a rate, or for 0 0 delete both when either is present.
func RateChange(rmax int64, stored [2]Field) (set, del bool) {
	if rmax > 0 {
		return true, false
	}
	return false, stored[0].Set || stored[1].Set
}
