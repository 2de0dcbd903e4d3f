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

// LaneSets is meta lanesets as read, the count of the lanes with a cap or a
// pause: read like a row's number (not a canonical decimal, or absent: 0).
func LaneSets(stored Field) int64 {
	return grammar.RowInt(stored.Bytes, stored.Set, grammar.MaxRowInt)
}

// LaneSetsChange is what a lane setting verb (LANECAP, LANEPAUSE,
// LANERESUME) writes to meta lanesets from the field as read (LaneSets) and
// the lane's settings read and after the call: the lane's change moves the
// count by one (never below 0); set when the field does not hold the result.
func LaneSetsChange(stored Field, before, after LaneSettings) (set bool, n int64) {
	n = LaneSets(stored)
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
