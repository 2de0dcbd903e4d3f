package verdict

import (
	"errors"
	"math"
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
	if got := m(42, 7); got != "000000000000042:7" {
		t.Errorf("member %q", got)
	}
	if set, del := RateChange(0, [2]Field{}); set || del {
		t.Error("0 0 of no rate writes nothing")
	}
}

// rateLog is a rate log read at now with its first live and last entries.
func rateLog(now int64, first string, firstAt float64, last string, lastAt float64) RateLog {
	return RateLog{Now: now, Live: true, First: RateEntry{[]byte(first), firstAt}, Last: RateEntry{[]byte(last), lastAt}}
}

// m is the rate log member of an entry of k claims from before.
func m(before, k int64) string { return string(AppendRateMember(nil, before, k)) }

func TestRateUsed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                 string
		rmax, window         int64
		log                  RateLog
		used, next, at, wait int64
	}{
		{"no live entry", 5, 1000, RateLog{Now: 5000}, 0, 0, 5000, 0},
		{"one entry", 5, 1000, rateLog(5000, m(0, 3), 4500, m(0, 3), 4500), 3, 3, 5000, 0},
		{"entries since the first live", 10, 1000, rateLog(5000, m(7, 2), 4100, m(12, 4), 4900), 9, 16, 5000, 0},
		{"used up", 9, 1000, rateLog(5000, m(7, 2), 4100, m(12, 4), 4900), 9, 16, 0, 100},
		{"past the max", 3, 1000, rateLog(5000, m(7, 2), 4999, m(12, 4), 4999), 9, 16, 0, 999},
		{"a wait of at least 1", 1, 1000, rateLog(5000, m(0, 1), 4000.5, m(0, 1), 4000.5), 1, 1, 0, 1},
		{"a wait of at most the window", 1, 1000, rateLog(5000, m(0, 1), 9000, m(0, 1), 9000), 1, 1, 0, 1000},
		{"a fraction waits the next ms", 1, 1000, rateLog(5000, m(0, 1), 4100.2, m(0, 1), 4100.2), 1, 1, 0, 101},
		{"members that are not entries count 0", 5, 1000, rateLog(5000, "x", 4500, "3", 4600), 0, 0, 5000, 0},
		{"a last entry below the first counts 0", 5, 1000, rateLog(5000, m(9, 1), 4500, m(1, 1), 4600), 0, 2, 5000, 0},
		{"a count not in 15 digits reads 0", 20, 1000, rateLog(5000, "7:2", 4500, m(12, 4), 4600), 16, 16, 5000, 0},
		{"a count of other bytes reads 0", 20, 1000, rateLog(5000, "00000000000000x:2", 4500, m(12, 4), 4600), 16, 16, 5000, 0},
		{"claims read like a row's number", 5, 1000, rateLog(5000, m(1, 1), 4500, "000000000000002:-1", 4600), 1, 2, 5000, 0},
		{"a last entry ahead of the clock scores the next", 5, 1000, rateLog(5000, m(0, 1), 4500, m(1, 1), 5040.2), 2, 2, 5041, 0},
		{"at most a window ahead", 5, 1000, rateLog(5000, m(0, 1), 4500, m(1, 1), 9000), 2, 2, 6000, 0},
		{"an infinite score is a window ahead", 5, 1000, rateLog(5000, m(0, 1), 4500, m(1, 1), math.Inf(1)), 2, 2, 6000, 0},
		{"claims with a leading zero read 0", 5, 1000, rateLog(5000, m(1, 1), 4500, "000000000000002:01", 4600), 1, 2, 5000, 0},
	} {
		used, next, at, wait := RateUsed(tc.rmax, tc.window, tc.log)
		if used != tc.used || next != tc.next || at != tc.at || wait != tc.wait {
			t.Errorf("%s: used %d next %d at %d wait %d, want %d %d %d %d", tc.name, used, next, at, wait, tc.used, tc.next, tc.at, tc.wait)
		}
	}
}
