package verdict

// PauseRead is a read PAUSE's or RESUME's verdict asks for.
type PauseRead uint8

// The reads of PAUSE and RESUME, in order.
const (
	// PauseNone: the verdict is final.
	PauseNone PauseRead = iota
	// PauseFirst: one batch, GET version (the fence), then HGET meta paused
	// (paused means exactly "1"); RESUME reads HMGET meta paused lanewait.
	PauseFirst
	// ResumeTypes (RESUME of a paused queue only): one batch, ZCARD pending
	// then LLEN signal.
	ResumeTypes
)

// PauseSeen is what PAUSE or RESUME has read so far.
type PauseSeen struct {
	Version Reply[Field]
	Paused  Reply[Field]
	// LaneWait is meta lanewait, the jobs waiting in lanes (RESUME only).
	LaneWait Field
	Pending  Reply[int64] // RESUME only
	Signal   Reply[int64] // RESUME only
}

// PauseVerdict is what PAUSE or RESUME writes and replies.
type PauseVerdict struct {
	// Change: the state changes (reply 1, PAUSE writes HSET meta paused 1,
	// RESUME HDEL meta paused); else reply 0 and write nothing.
	Change bool
	// Signal (RESUME): jobs are waiting, in pending or in lanes, so push
	// the signal.
	Signal bool
}

// PauseStep is the verdict, a refusal, or the next read.
type PauseStep struct {
	Need    PauseRead
	Err     error
	Verdict PauseVerdict
}

// Pause decides EMQ.PAUSE: a queue not paused becomes paused.
func Pause(s *PauseSeen) PauseStep {
	if !s.Version.Made {
		return PauseStep{Need: PauseFirst}
	}
	if err := Fence(s.Version); err != nil {
		return PauseStep{Err: err}
	}
	if s.Paused.Err != nil {
		return PauseStep{Err: s.Paused.Err}
	}
	return PauseStep{Verdict: PauseVerdict{Change: !s.Paused.Val.Is("1")}}
}
