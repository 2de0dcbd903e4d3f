package verdict

// SchedulePauseSeen is what SCHEDULE.PAUSE and SCHEDULE.RESUME read: the
// fence, then in one batch HGET schedules s:<id> and the type of scheddue.
type SchedulePauseSeen struct {
	Version Reply[Field]
	State   Reply[Field]
	Due     Reply[int64]
}

// SchedulePause decides SCHEDULE.PAUSE: change reports whether the
// schedule was running (reply 1), and st is its paused state, the next
// fire dropped.
func SchedulePause(s *SchedulePauseSeen) (st State, change bool, err error) {
	old, change, err := scheduleToggle(s, true)
	if !change {
		return State{}, false, err
	}
	return State{Rev: old.Rev + 1, Count: old.Count, Last: old.Last, Paused: true}, true, nil
}

// scheduleToggle reads what SCHEDULE.PAUSE and SCHEDULE.RESUME decide on,
// in their order: the fence, the state, and scheddue's type when the state
// changes. change reports whether the schedule exists and its paused flag
// is not already paused; old is its state as read.
func scheduleToggle(s *SchedulePauseSeen, paused bool) (old State, change bool, err error) {
	if err := Fence(s.Version); err != nil {
		return State{}, false, err
	}
	if s.State.Err != nil {
		return State{}, false, s.State.Err
	}
	old = ParseState(s.State.Val)
	if !old.Exists || old.Paused == paused {
		return State{}, false, nil
	}
	if s.Due.Err != nil {
		return State{}, false, s.Due.Err
	}
	return old, true, nil
}
