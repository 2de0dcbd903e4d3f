package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// The checks the lane verbs (LANECAP, LANEPAUSE, LANERESUME, LANE, LANES)
// share, after their fence; a verb's own verdict is in the file named for it.

// LaneValue checks a lane argument: 1..MaxLaneName bytes, else "bad lane".
func LaneValue(verb string, lane []byte) error {
	if !protocol.ValidLaneName(string(lane)) {
		return refusal(protocol.ErrBadArg(verb, "lane"))
	}
	return nil
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
