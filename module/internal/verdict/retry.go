package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// RetryRead is a read RETRY's verdict asks for.
type RetryRead uint8

// RETRY's reads, in order.
const (
	// RetryNone: the verdict is final.
	RetryNone RetryRead = iota
	// RetryFirst: one batch, GET version (the fence), HMGET <row> att state
	// prio lane (the row is checked against the caller's ACL first: a
	// denial is this read's error), ZSCORE delayed <id>, ZCARD pending,
	// LLEN signal.
	RetryFirst
	// RetryLanes: for a job with a lane (RetryStep.Lane), the lane
	// accounting of its lane, one waiting job more.
	RetryLanes
)

// RetrySeen is what RETRY has read so far.
type RetrySeen struct {
	Version Reply[Field]
	Row     Reply[[]Field] // att state prio lane
	Due     Reply[Field]   // ZSCORE delayed <id>
	Pending Reply[int64]
	Signal  Reply[int64]
	// Lanes is the lane accounting's outcome.
	Lanes Reply[struct{}]
}

// RetryVerdict is what RETRY writes and replies.
type RetryVerdict struct {
	// Gone: the row is absent; reply 0 and write nothing.
	Gone bool
	// Score is the job's pending score.
	Score int64
	// Signal: pending was empty and the job goes to it (the lane
	// accounting may signal too).
	Signal bool
	// Lane is the job's lane (nil: none): it goes to lane:<l>.
	Lane []byte
}

// RetryStep is RETRY's verdict, a refusal, or the next read it needs.
type RetryStep struct {
	Need RetryRead
	// Lane is the job's lane, with RetryLanes.
	Lane    []byte
	Err     error
	Verdict RetryVerdict
}

// Retry decides EMQ.RETRY of job id (a canonical id): a delayed job goes to
// pending now. The order: the fence, the row (absent: 0), its state, its
// place in delayed, the lane accounting, then pending and signal.
func Retry(id int64, s *RetrySeen) RetryStep {
	if !s.Version.Made {
		return RetryStep{Need: RetryFirst}
	}
	if err := Fence(s.Version); err != nil {
		return RetryStep{Err: err}
	}
	if s.Row.Err != nil {
		return RetryStep{Err: s.Row.Err}
	}
	att, state, prio := at(s.Row.Val, 0), at(s.Row.Val, 1), at(s.Row.Val, 2)
	if !att.Set {
		return RetryStep{Verdict: RetryVerdict{Gone: true}}
	}
	if !state.Is(protocol.StateDelayed) {
		return RetryStep{Err: refusal(protocol.ErrRetryNotDelayed)}
	}
	if s.Due.Err != nil {
		return RetryStep{Err: s.Due.Err}
	}
	if !s.Due.Val.Set {
		return RetryStep{Err: refusal(protocol.ErrRetryNotDelayed)}
	}
	lane := LaneName(at(s.Row.Val, 3))
	if lane != nil {
		if !s.Lanes.Made {
			return RetryStep{Need: RetryLanes, Lane: lane}
		}
		if s.Lanes.Err != nil {
			return RetryStep{Err: s.Lanes.Err}
		}
	}
	if s.Pending.Err != nil {
		return RetryStep{Err: s.Pending.Err}
	}
	if s.Signal.Err != nil {
		return RetryStep{Err: s.Signal.Err}
	}
	return RetryStep{Verdict: RetryVerdict{
		Score:  protocol.PendingScore(grammar.RowInt(prio.Bytes, prio.Set, protocol.MaxPriority), id),
		Signal: lane == nil && s.Pending.Val == 0,
		Lane:   lane,
	}}
}
