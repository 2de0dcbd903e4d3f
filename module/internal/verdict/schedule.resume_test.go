package verdict

import (
	"errors"
	"testing"
)

func TestScheduleResume(t *testing.T) {
	t.Parallel()
	wrong := errors.New("WRONGTYPE")
	ok := Got(int64(1))
	for _, tc := range []struct {
		seen   *SchedulePauseSeen
		change bool
		want   State
	}{
		{pauseSeen("3 1 50 0 1", true, ok), true, State{Rev: 4, Count: 1, Last: 100, Next: 100}},
		{pauseSeen("3 1 150 0 1", true, ok), true, State{Rev: 4, Count: 1, Last: 150, Next: 100}},
		{pauseSeen("3 1 50 60 0", true, ok), false, State{}},
		{pauseSeen("", false, ok), false, State{}},
		// scheddue is typed only when the state changes
		{pauseSeen("3 1 50 60 0", true, Failed[int64](wrong)), false, State{}},
	} {
		st, change, err := ScheduleResume(tc.seen, 100)
		if err != nil || change != tc.change || st != tc.want {
			t.Errorf("%q: %+v %v %v", tc.seen.State.Val.Bytes, st, change, err)
		}
	}
	if _, _, err := ScheduleResume(pauseSeen("3 1 50 0 1", true, Failed[int64](wrong)), 100); err != wrong {
		t.Errorf("scheddue: %v", err)
	}
}
