package verdict

import (
	"errors"
	"reflect"
	"testing"
)

type pauseScript struct {
	version Reply[Field] // unmade: this wire
	paused  Reply[Field]
	wait    Field // meta lanewait
	pending Reply[int64]
	signal  Reply[int64]
}

func (sc pauseScript) run(t *testing.T, decide func(*PauseSeen) PauseStep) ([]PauseRead, PauseStep) {
	t.Helper()
	var s PauseSeen
	needs := drive(t, func() PauseRead { return decide(&s).Need }, func(n PauseRead) {
		switch n {
		case PauseFirst:
			s.Version = wire(sc.version)
			s.Paused, s.LaneWait = sc.paused, sc.wait
			s.Paused.Made = true
		case ResumeTypes:
			s.Pending, s.Signal = sc.pending, sc.signal
			s.Pending.Made, s.Signal.Made = true, true
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, decide(&s)
}

func TestPause(t *testing.T) {
	t.Parallel()
	flag := []PauseRead{PauseFirst}
	for _, tc := range []struct {
		paused Reply[Field]
		change bool
	}{
		{Got(Field{}), true},
		{Got(Str("0")), true},
		{Got(Str("1 ")), true}, // paused means exactly 1
		{Got(Str("1")), false},
	} {
		needs, st := pauseScript{paused: tc.paused}.run(t, Pause)
		if !reflect.DeepEqual(needs, flag) || st.Err != nil || st.Verdict != (PauseVerdict{Change: tc.change}) {
			t.Errorf("%+v: %v %+v", tc.paused, needs, st)
		}
	}
	for _, tc := range fenceCases {
		for _, decide := range []func(*PauseSeen) PauseStep{Pause, Resume} {
			needs, st := pauseScript{version: tc.version, paused: Failed[Field](errB)}.run(t, decide)
			if !reflect.DeepEqual(needs, flag) || !errors.Is(st.Err, tc.want) {
				t.Errorf("fence %s: %v %+v", tc.name, needs, st)
			}
		}
	}
	needs, st := pauseScript{paused: Failed[Field](errA)}.run(t, Pause)
	if !reflect.DeepEqual(needs, flag) || st.Err != errA {
		t.Fatalf("%v %+v", needs, st)
	}
}

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
