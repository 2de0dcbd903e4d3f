package verdict

import "testing"

func TestLaneResume(t *testing.T) {
	t.Parallel()
	paused := Str("1")
	for _, tc := range []struct {
		name    string
		waiting int64
		info    [3]Field
		turns   int64
		del     bool
		enter   bool
		signal  bool
	}{
		{"a paused lane with jobs enters turns and wakes", 2, [3]Field{{}, {}, paused}, 0, true, true, true},
		{"turns not empty: no wake", 2, [3]Field{{}, {}, paused}, 3, true, true, false},
		{"an empty paused lane", 0, [3]Field{{}, {}, paused}, 0, true, false, false},
		{"a paused lane at its cap stays out", 2, [3]Field{Str("2"), Str("2"), paused}, 0, true, false, false},
		{"not paused", 2, [3]Field{}, 0, false, false, false},
		{"paused means exactly 1", 2, [3]Field{{}, {}, Str("yes")}, 0, false, false, false},
	} {
		v, err := LaneAccount(settingSeen(tc.waiting, tc.info, tc.turns, LaneResuming), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		e := v.Effects[0]
		if del := LaneResumeChange(e.Before.LaneSettings); del != tc.del {
			t.Errorf("%s: del %v", tc.name, del)
		}
		if e.After.Paused || e.Enter != tc.enter || e.Leave || v.Signal != tc.signal {
			t.Errorf("%s: %+v signal %v", tc.name, e, v.Signal)
		}
	}
}
