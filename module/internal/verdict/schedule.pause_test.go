package verdict

import (
	"errors"
	"testing"
)

func TestSchedulePause(t *testing.T) {
	t.Parallel()
	wrong := errors.New("WRONGTYPE")
	seen := func(state string, set bool, due Reply[int64]) *SchedulePauseSeen {
		return &SchedulePauseSeen{Version: wire(Reply[Field]{}), State: Got(Field{Bytes: []byte(state), Set: set}), Due: due}
	}
	ok := Got(int64(1))
	for _, tc := range []struct {
		seen   *SchedulePauseSeen
		pause  bool
		change bool
		want   State
	}{
		{seen("3 1 50 60 0", true, ok), true, true, State{Rev: 4, Count: 1, Last: 50, Paused: true}},
		{seen("3 1 50 0 1", true, ok), true, false, State{}},
		{seen("", false, ok), true, false, State{}},
		{seen("3 1 50 0 1", true, ok), false, true, State{Rev: 4, Count: 1, Last: 100, Next: 100}},
		{seen("3 1 150 0 1", true, ok), false, true, State{Rev: 4, Count: 1, Last: 150, Next: 100}},
		{seen("3 1 50 60 0", true, ok), false, false, State{}},
		// scheddue is typed only when the state changes
		{seen("3 1 50 0 1", true, Failed[int64](wrong)), true, false, State{}},
	} {
		st, change, err := SchedulePause(tc.seen, tc.pause, 100)
		if err != nil || change != tc.change || st != tc.want {
			t.Errorf("%q pause=%v: %+v %v %v", tc.seen.State.Val.Bytes, tc.pause, st, change, err)
		}
	}
	if _, _, err := SchedulePause(seen("3 1 50 60 0", true, Failed[int64](wrong)), true, 100); err != wrong {
		t.Errorf("scheddue: %v", err)
	}
}
