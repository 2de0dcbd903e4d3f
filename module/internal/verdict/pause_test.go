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
