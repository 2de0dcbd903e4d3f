package verdict

// ScheduleResume decides SCHEDULE.RESUME at server time now over what
// SCHEDULE.PAUSE reads too: change reports whether the schedule was paused
// (reply 1), and st is its running state, due now, its last fire moved up
// to now when it was earlier.
func ScheduleResume(s *SchedulePauseSeen, now int64) (st State, change bool, err error) {
	old, change, err := scheduleToggle(s, false)
	if !change {
		return State{}, false, err
	}
	return State{Rev: old.Rev + 1, Count: old.Count, Last: max(old.Last, now), Next: now}, true, nil
}
