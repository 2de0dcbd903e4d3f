package verdict

// LaneInfoReply is LANE's (and a LANES entry's) four integers: waiting,
// active, cap (0: none), paused (0 or 1).
func LaneInfoReply(info Reply[[3]Field], waiting Reply[int64]) ([4]int64, error) {
	if info.Err != nil {
		return [4]int64{}, info.Err
	}
	if waiting.Err != nil {
		return [4]int64{}, waiting.Err
	}
	l := ReadLane(info.Val, waiting.Val)
	paused := int64(0)
	if l.Paused {
		paused = 1
	}
	return [4]int64{l.Waiting, l.Active, l.Cap, paused}, nil
}
