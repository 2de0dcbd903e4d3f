package verdict

import (
	"bytes"
	"math"
	"strconv"

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

// RateLog is CLAIM's read of a queue's rate log (docs/PROTOCOL.md, "Rate
// limit") at the call's clock Now: the first live entry (scored above Now
// less the window) and the last entry, when an entry is live.
type RateLog struct {
	Now         int64
	Live        bool
	First, Last RateEntry
}

// RateEntry is an entry of the rate log: its member, <before>:<k>, and its
// score, the clock of the claim it logs.
type RateEntry struct {
	Member []byte
	Score  float64
}

// RateUsed reads the rate log of a rate of rmax claims per window ms: the
// claims in the last window, the running count the next entry starts at
// and its score (the clock, or the last entry's score rounded up when that
// is later, at most a window ahead: scores never go down while the clock
// steps back less than a window), and, when the window is used up, the wait
// in ms (1 to window) until its first live entry leaves it, else 0.
func RateUsed(rmax, window int64, log RateLog) (used, next, at, wait int64) {
	if !log.Live {
		return 0, 0, log.Now, 0
	}
	first, _ := rateEntry(log.First.Member)
	before, k := rateEntry(log.Last.Member)
	next = before + k
	used = max(next-first, 0)
	if used >= rmax {
		w := math.Ceil(log.First.Score + float64(window) - float64(log.Now))
		return used, next, 0, int64(max(1, min(float64(window), w)))
	}
	at = int64(max(float64(log.Now), min(math.Ceil(log.Last.Score), float64(log.Now+window))))
	return used, next, at, 0
}

// RateBeforeDigits is the width of a rate log member's running count, zero
// padded: entries logged in one ms (one score) then sort in the order they
// were logged.
const RateBeforeDigits = 15

// rateEntry reads a rate log member, <before>:<k>: the running count before
// the entry, RateBeforeDigits digits, and its claims like a row's number;
// 0 and 0 when the member is not of that form.
func rateEntry(m []byte) (before, k int64) {
	b, c, ok := bytes.Cut(m, []byte(":"))
	if !ok || len(b) != RateBeforeDigits {
		return 0, 0
	}
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, 0
		}
		before = before*10 + int64(d-'0')
	}
	return before, rowInt(Field{Bytes: c, Set: true})
}

// AppendRateMember appends to dst the rate log member of an entry of k
// claims whose running count starts at before: before in RateBeforeDigits
// digits, ':', k.
func AppendRateMember(dst []byte, before, k int64) []byte {
	var d [20]byte
	digits := strconv.AppendInt(d[:0], before, 10)
	for range RateBeforeDigits - len(digits) {
		dst = append(dst, '0')
	}
	dst = append(append(dst, digits...), ':')
	return strconv.AppendInt(dst, k, 10)
}
