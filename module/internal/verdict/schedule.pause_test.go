package verdict

import (
	"errors"
	"testing"
)

// pauseSeen is SCHEDULE.PAUSE's or SCHEDULE.RESUME's reads past the fence.
func pauseSeen(state string, set bool, due Reply[int64]) *SchedulePauseSeen {
	return &SchedulePauseSeen{Version: wire(Reply[Field]{}), State: Got(Field{Bytes: []byte(state), Set: set}), Due: due}
}

func TestSchedulePause(t *testing.T) {
	t.Parallel()
	wrong := errors.New("WRONGTYPE")
	ok := Got(int64(1))
	for _, tc := range []struct {
		seen   *SchedulePauseSeen
		change bool
		want   State
	}{
		{pauseSeen("3 1 50 60 0", true, ok), true, State{Rev: 4, Count: 1, Last: 50, Paused: true}},
		{pauseSeen("3 1 50 0 1", true, ok), false, State{}},
		{pauseSeen("", false, ok), false, State{}},
		// scheddue is typed only when the state changes
		{pauseSeen("3 1 50 0 1", true, Failed[int64](wrong)), false, State{}},
	} {
		st, change, err := SchedulePause(tc.seen)
		if err != nil || change != tc.change || st != tc.want {
			t.Errorf("%q: %+v %v %v", tc.seen.State.Val.Bytes, st, change, err)
		}
	}
	if _, _, err := SchedulePause(pauseSeen("3 1 50 60 0", true, Failed[int64](wrong))); err != wrong {
		t.Errorf("scheddue: %v", err)
	}
	if _, _, err := SchedulePause(&SchedulePauseSeen{Version: Got(Str("x")), State: Failed[Field](wrong)}); err == nil || err == wrong {
		t.Errorf("the fence first: %v", err)
	}
	if _, _, err := SchedulePause(&SchedulePauseSeen{Version: wire(Reply[Field]{}), State: Failed[Field](wrong)}); err != wrong {
		t.Errorf("state: %v", err)
	}
}
