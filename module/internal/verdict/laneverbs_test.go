package verdict

import (
	"errors"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

func TestLaneCapChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stored   Field
		cap      int64
		set, del bool
	}{
		{Field{}, 3, true, false},
		{Str("3"), 3, false, false},
		{Str("03"), 3, true, false}, // compared as stored bytes
		{Str("2"), 3, true, false},
		{Str("2"), 0, false, true},
		{Str(""), 0, false, true},
		{Field{}, 0, false, false},
	} {
		if set, del := LaneCapChange(tc.stored, tc.cap); set != tc.set || del != tc.del {
			t.Errorf("%+v: %v %v", tc, set, del)
		}
	}
}

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

func TestLaneInfoReply(t *testing.T) {
	t.Parallel()
	got, err := LaneInfoReply(Got([3]Field{Str("2"), Str("x"), Str("1")}), Got[int64](4))
	if err != nil || got != [4]int64{4, 2, 0, 1} {
		t.Errorf("%v %v", got, err)
	}
	if _, err := LaneInfoReply(Failed[[3]Field](errA), Failed[int64](errB)); err != errA {
		t.Errorf("laneinfo first: %v", err)
	}
}

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
