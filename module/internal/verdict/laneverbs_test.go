package verdict

import (
	"testing"
)

func TestLaneSetsChange(t *testing.T) {
	t.Parallel()
	none, capped, paused := LaneSettings{}, LaneSettings{Cap: 2}, LaneSettings{Paused: true}
	both := LaneSettings{Cap: 2, Paused: true}
	for _, tc := range []struct {
		stored        Field
		infoLen       int64
		before, after LaneSettings
		set           bool
		n             int64
	}{
		{Str("0"), 5, none, capped, true, 1},
		{Str("3"), 5, capped, none, true, 2},
		{Str("3"), 5, capped, both, false, 3},   // the lane had a setting
		{Str("3"), 5, both, paused, false, 3},   // and keeps one
		{Str("0"), 5, capped, none, false, 0},   // never below 0
		{Str("2"), 5, capped, capped, false, 2}, // no change
		{Field{}, 5, none, capped, false, 0},    // not known: not written
		{Str("x"), 5, none, paused, false, 0},   // not a count
		{Str("01"), 5, none, paused, false, 0},  // not canonical
		{Field{}, 0, none, paused, true, 1},     // laneinfo empty: from 0
		{Str("x"), 0, none, none, true, 0},      // the count written as known
		{Str("0"), 0, none, none, false, 0},     // already so
		{Str("999999999999999"), 5, none, capped, true, 1000000000000000},
	} {
		if set, n := LaneSetsChange(tc.stored, tc.infoLen, tc.before, tc.after); set != tc.set || n != tc.n {
			t.Errorf("%+v: %v %d", tc, set, n)
		}
	}
}
