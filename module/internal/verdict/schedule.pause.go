package verdict

// SchedulePauseSeen is what SCHEDULE.PAUSE and SCHEDULE.RESUME read: the
// fence, then in one batch HGET schedules s:<id> and the type of scheddue.
type SchedulePauseSeen struct {
	Version Reply[Field]
	State   Reply[Field]
	Due     Reply[int64]
}

// SchedulePause decides SCHEDULE.PAUSE (pause) or SCHEDULE.RESUME at server
// time now: change reports whether the state changes (reply 1), and st is
// the new state.
func SchedulePause(s *SchedulePauseSeen, pause bool, now int64) (st State, change bool, err error) {
	if err := Fence(s.Version); err != nil {
		return State{}, false, err
	}
	if s.State.Err != nil {
		return State{}, false, s.State.Err
	}
	old := ParseState(s.State.Val)
	if !old.Exists || old.Paused == pause {
		return State{}, false, nil
	}
	if s.Due.Err != nil {
		return State{}, false, s.Due.Err
	}
	st = State{Rev: old.Rev + 1, Count: old.Count, Last: old.Last, Paused: pause}
	if !pause {
		st.Last, st.Next = max(old.Last, now), now
	}
	return st, true, nil
}
