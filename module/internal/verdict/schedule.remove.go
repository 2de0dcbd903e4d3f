package verdict

// ScheduleRemoveSeen is what SCHEDULE.REMOVE reads: the fence, then in one
// batch HEXISTS schedules s:<id> and the types of scheddue and schedids.
type ScheduleRemoveSeen struct {
	Version Reply[Field]
	Exists  Reply[int64]
	Due     Reply[int64]
	IDs     Reply[int64]
}

// ScheduleRemove decides SCHEDULE.REMOVE: the reply (1 when the schedule
// existed), or the refusal. Its writes are made whatever the reply.
func ScheduleRemove(s *ScheduleRemoveSeen) (int64, error) {
	if err := Fence(s.Version); err != nil {
		return 0, err
	}
	for _, r := range [...]*Reply[int64]{&s.Exists, &s.Due, &s.IDs} {
		if r.Err != nil {
			return 0, r.Err
		}
	}
	return min(s.Exists.Val, 1), nil
}
