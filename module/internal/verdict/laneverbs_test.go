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
		before, after LaneSettings
		set           bool
		n             int64
	}{
		{Str("0"), none, capped, true, 1},
		{Str("3"), capped, none, true, 2},
		{Str("3"), capped, both, false, 3},   // the lane had a setting
		{Str("3"), both, paused, false, 3},   // and keeps one
		{Str("0"), capped, none, false, 0},   // never below 0
		{Str("2"), capped, capped, false, 2}, // no change
		{Field{}, none, capped, true, 1},     // absent: from 0
		{Field{}, capped, none, true, 0},     // absent, never below 0: written
		{Str("x"), none, paused, true, 1},    // not a count: from 0
		{Str("01"), none, paused, true, 1},   // not canonical: from 0
		{Str("-1"), paused, none, true, 0},   // not a row number: 0
		{Str("x"), none, none, true, 0},      // the count written
		{Str("0"), none, none, false, 0},     // already so
		{Str("999999999999999"), none, capped, true, 1000000000000000},
		{Str("1000000000000000"), none, capped, true, 1}, // 16 digits: 0
	} {
		if set, n := LaneSetsChange(tc.stored, tc.before, tc.after); set != tc.set || n != tc.n {
			t.Errorf("%+v: %v %d", tc, set, n)
		}
	}
}
