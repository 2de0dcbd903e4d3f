package verdict

// LanePauseChange is LANEPAUSE's verdict on its lane as the lane
// accounting read it (before): set reports whether the lane was not paused,
// so the call writes HSET laneinfo paused:<l> 1 with the accounting's
// writes and replies 1; else it writes nothing and replies 0.
func LanePauseChange(before LaneSettings) (set bool) { return !before.Paused }

// LanePausing is the lane's change of LANEPAUSE in the lane accounting:
// paused after the call.
func LanePausing(l *LaneChange) { l.SetPaused, l.PausedTo = true, true }
