package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// This file holds the verdicts of the lane verbs (LANECAP, LANEPAUSE,
// LANERESUME, LANE, LANES) and RATE, after their fence.

// LaneValue checks a lane argument: 1..MaxLaneName bytes, else "bad lane".
func LaneValue(verb string, lane []byte) error {
	if !protocol.ValidLaneName(string(lane)) {
		return refusal(protocol.ErrBadArg(verb, "lane"))
	}
	return nil
}

// LaneCapChange is what LANECAP writes to the cap field, from the stored
// field and the new cap (0 clears): HSET cap:<l> when cap > 0 and the stored
// value differs, HDEL cap:<l> when cap = 0 and the field is present.
func LaneCapChange(stored Field, capTo int64) (set, del bool) {
	if capTo > 0 {
		return !stored.Is(protocol.FormatInt(capTo)), false
	}
	return false, stored.Set
}

// LaneInfoReply is LANE's (and a LANES entry's) four integers: waiting,
// active, cap (0: none), paused (0 or 1).
func LaneInfoReply(info Reply[[3]Field], waiting Reply[int64]) ([4]int64, error) {
	if info.Err != nil {
		return [4]int64{}, info.Err
	}
	if waiting.Err != nil {
		return [4]int64{}, waiting.Err
	}
	l := ReadLane(info.Val, waiting.Val)
	paused := int64(0)
	if l.Paused {
		paused = 1
	}
	return [4]int64{l.Waiting, l.Active, l.Cap, paused}, nil
}

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

// LaneSetsChange is what a lane setting verb (LANECAP, LANEPAUSE,
// LANERESUME) writes to meta lanesets, the count of the lanes with a cap or
// a pause, from the field as read, HLEN laneinfo and the lane's settings read
// and after the call: the count is the field when it is a count (a row
// number), 0 when it is not and laneinfo is empty, else not known and not
// written. The lane's change moves it by one (never below 0); set when the
// field does not hold the result.
func LaneSetsChange(stored Field, infoLen int64, before, after LaneSettings) (set bool, n int64) {
	n, known := grammar.Decimal(stored.Bytes, 0, grammar.MaxRowInt)
	known = known && stored.Set
	if !known {
		if infoLen != 0 {
			return false, 0
		}
		n = 0
	}
	had, has := before.HasSetting(), after.HasSetting()
	switch {
	case has && !had:
		n++
	case had && !has && n > 0:
		n--
	}
	return !stored.Is(protocol.FormatInt(n)), n
}

// HasSetting reports whether a lane has a cap or is paused: meta lanesets
// counts such lanes.
func (s LaneSettings) HasSetting() bool { return s.Cap > 0 || s.Paused }
