package verdict

// LaneResumeChange is LANERESUME's verdict on its lane as the lane
// accounting read it (before): del reports whether the lane was paused, so
// the call writes HDEL laneinfo paused:<l> with the accounting's writes
// (the lane may become ready and wake workers) and replies 1; else it
// writes nothing and replies 0.
func LaneResumeChange(before LaneSettings) (del bool) { return before.Paused }

// LaneResuming is the lane's change of LANERESUME in the lane accounting:
// not paused after the call.
func LaneResuming(l *LaneChange) { l.SetPaused, l.PausedTo = true, false }
