package verdict

import "testing"

// settingSeen is a lane setting verb's accounting of one lane with waiting
// jobs and the laneinfo fields active, cap and paused; turns holds turns
// lanes.
func settingSeen(waiting int64, info [3]Field, turns int64, change func(*LaneChange)) *LaneSeen {
	s := &LaneSeen{
		Lanes:    []LaneChange{{Info: Got(info), Waiting: Got(waiting)}},
		Meta:     Got([2]Field{Str("4"), {}}),
		Turns:    Got(turns),
		Registry: Got(int64(1)),
		Signal:   Got(int64(0)),
	}
	change(&s.Lanes[0])
	return s
}

func TestLanePause(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		waiting int64
		info    [3]Field
		set     bool
		leave   bool
	}{
		{"a ready lane leaves turns", 2, [3]Field{}, true, true},
		{"an empty lane", 0, [3]Field{}, true, false},
		{"a lane at its cap was not in turns", 2, [3]Field{Str("1"), Str("1"), {}}, true, false},
		{"already paused", 2, [3]Field{{}, {}, Str("1")}, false, false},
		{"paused means exactly 1", 2, [3]Field{{}, {}, Str("yes")}, true, true},
	} {
		v, err := LaneAccount(settingSeen(tc.waiting, tc.info, 1, LanePausing), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		e := v.Effects[0]
		if set := LanePauseChange(e.Before.LaneSettings); set != tc.set {
			t.Errorf("%s: set %v", tc.name, set)
		}
		if !e.After.Paused || e.Leave != tc.leave || e.Enter || v.Signal {
			t.Errorf("%s: %+v signal %v", tc.name, e, v.Signal)
		}
	}
}
