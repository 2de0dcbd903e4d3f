package verdict

import (
	"reflect"
	"testing"
)

func TestResume(t *testing.T) {
	t.Parallel()
	flag := []PauseRead{PauseFirst}
	both := []PauseRead{PauseFirst, ResumeTypes}
	for _, tc := range []struct {
		name  string
		sc    pauseScript
		needs []PauseRead
		want  PauseVerdict
		err   error
	}{
		{"not paused", pauseScript{paused: Got(Field{}), pending: Failed[int64](errB)}, flag, PauseVerdict{}, nil},
		{"paused 2", pauseScript{paused: Got(Str("2"))}, flag, PauseVerdict{}, nil},
		{"meta not a hash", pauseScript{paused: Failed[Field](errA)}, flag, PauseVerdict{}, errA},
		{"paused, nothing pending", pauseScript{paused: Got(Str("1"))}, both, PauseVerdict{Change: true}, nil},
		{"paused, jobs pending", pauseScript{paused: Got(Str("1")), pending: Got[int64](3)}, both, PauseVerdict{Change: true, Signal: true}, nil},
		{"paused, jobs in lanes", pauseScript{paused: Got(Str("1")), wait: Str("2")}, both, PauseVerdict{Change: true, Signal: true}, nil},
		{"paused, lanewait not canonical", pauseScript{paused: Got(Str("1")), wait: Str("02")}, both, PauseVerdict{Change: true}, nil},
		{"pending before signal", pauseScript{paused: Got(Str("1")), pending: Failed[int64](errA), signal: Failed[int64](errB)}, both, PauseVerdict{}, errA},
		{"signal", pauseScript{paused: Got(Str("1")), signal: Failed[int64](errA)}, both, PauseVerdict{}, errA},
	} {
		needs, st := tc.sc.run(t, Resume)
		if !reflect.DeepEqual(needs, tc.needs) || st.Err != tc.err || st.Verdict != tc.want {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
	}
}
