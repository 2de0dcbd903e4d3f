package verdict

// Resume decides EMQ.RESUME: a paused queue resumes, and idle workers are
// woken when jobs are pending or wait in lanes. A queue not paused is left as it is, with no
// further read.
func Resume(s *PauseSeen) PauseStep {
	if !s.Version.Made {
		return PauseStep{Need: PauseFirst}
	}
	if err := Fence(s.Version); err != nil {
		return PauseStep{Err: err}
	}
	if s.Paused.Err != nil {
		return PauseStep{Err: s.Paused.Err}
	}
	if !s.Paused.Val.Is("1") {
		return PauseStep{}
	}
	if !s.Signal.Made {
		return PauseStep{Need: ResumeTypes}
	}
	if s.Pending.Err != nil {
		return PauseStep{Err: s.Pending.Err}
	}
	if s.Signal.Err != nil {
		return PauseStep{Err: s.Signal.Err}
	}
	return PauseStep{Verdict: PauseVerdict{Change: true, Signal: s.Pending.Val > 0 || rowInt(s.LaneWait) > 0}}
}
