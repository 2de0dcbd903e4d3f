package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// RequeueRead is a read REQUEUE's verdict asks for.
type RequeueRead uint8

// REQUEUE's reads, in order.
const (
	// RequeueNone: the verdict is final.
	RequeueNone RequeueRead = iota
	// RequeueFirst: one batch, GET version (the fence), then HMGET <row>
	// state att max prio (the row is checked against the caller's ACL first:
	// a denial is this read's error, and the row is not read).
	RequeueFirst
	// RequeueRest: one batch, ZCARD dead, ZCARD pending, LLEN signal, HGET
	// stats requeued.
	RequeueRest
	// RequeueLanes: for a job with a lane (RequeueStep.Lane), the lane
	// accounting of its lane, one waiting job more.
	RequeueLanes
)

// RequeueSeen is what REQUEUE has read so far.
type RequeueSeen struct {
	Version  Reply[Field]
	Row      Reply[[]Field] // state att max prio lane
	Dead     Reply[int64]
	Pending  Reply[int64]
	Signal   Reply[int64]
	Requeued Reply[Field]
	// Lanes is the lane accounting's outcome.
	Lanes Reply[struct{}]
}

// RequeueVerdict is what REQUEUE writes and replies.
type RequeueVerdict struct {
	// Gone: the row is absent; reply 0 and write nothing.
	Gone bool
	// Max is the row's new max: att + max, a fresh set of attempts.
	Max int64
	// Score is the job's pending score.
	Score int64
	// Requeued is the predicted reply of HINCRBY stats requeued 1.
	Requeued int64
	// Signal: pending was empty and the job goes to it (the lane
	// accounting may signal too).
	Signal bool
	// Lane is the job's lane (nil: none): it goes to lane:<l>, not pending.
	Lane []byte
}

// RequeueStep is REQUEUE's verdict, a refusal, or the next read it needs.
type RequeueStep struct {
	Need RequeueRead
	// Lane is the job's lane, with RequeueLanes.
	Lane    []byte
	Err     error
	Verdict RequeueVerdict
}

// Requeue decides EMQ.REQUEUE of job id (a canonical id): a dead job goes
// back to pending with max raised to att + max.
func Requeue(id int64, s *RequeueSeen) RequeueStep {
	if !s.Version.Made {
		return RequeueStep{Need: RequeueFirst}
	}
	if err := Fence(s.Version); err != nil {
		return RequeueStep{Err: err}
	}
	if s.Row.Err != nil {
		return RequeueStep{Err: s.Row.Err}
	}
	state, att, max, prio := s.Row.Val[0], s.Row.Val[1], RowMax(s.Row.Val[2]), s.Row.Val[3]
	if !att.Set {
		return RequeueStep{Verdict: RequeueVerdict{Gone: true}}
	}
	if !state.Is(protocol.StateDead) {
		return RequeueStep{Err: refusal(protocol.ErrRequeueNotDead)}
	}
	lane := LaneName(at(s.Row.Val, 4))
	if lane != nil && !s.Lanes.Made {
		return RequeueStep{Need: RequeueLanes, Lane: lane}
	}
	if !s.Requeued.Made {
		return RequeueStep{Need: RequeueRest}
	}
	if lane != nil && s.Lanes.Err != nil {
		return RequeueStep{Err: s.Lanes.Err}
	}
	for _, r := range []*Reply[int64]{&s.Dead, &s.Pending, &s.Signal} {
		if r.Err != nil {
			return RequeueStep{Err: r.Err}
		}
	}
	if s.Requeued.Err != nil {
		return RequeueStep{Err: s.Requeued.Err}
	}
	n, err := predict(s.Requeued.Val, 1)
	if err != nil {
		return RequeueStep{Err: err}
	}
	return RequeueStep{Verdict: RequeueVerdict{
		Max:      grammar.RowInt(att.Bytes, true, grammar.MaxRowInt) + grammar.RowInt(max.Bytes, max.Set, grammar.MaxRowInt),
		Score:    protocol.PendingScore(grammar.RowInt(prio.Bytes, prio.Set, protocol.MaxPriority), id),
		Requeued: n,
		Signal:   lane == nil && s.Pending.Val == 0,
		Lane:     lane,
	}}
}
