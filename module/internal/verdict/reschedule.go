package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// RescheduleRead is a read RESCHEDULE's verdict asks for.
type RescheduleRead uint8

// RESCHEDULE's reads, in order.
const (
	// RescheduleNone: the verdict is final.
	RescheduleNone RescheduleRead = iota
	// RescheduleFirst: one batch, GET version (the fence), HMGET <row> att
	// state prio lane, ZCARD pending, ZCARD delayed and LLEN signal (the
	// verdict takes the types last). The row is checked against the
	// caller's ACL first; a denial is the row read's error and it is not
	// read.
	RescheduleFirst
	// RescheduleLanes: the lane accounting of the job's lane
	// (RescheduleStep.Lane) when it moves between pending and delayed: one
	// waiting job more to pending, one less to delayed.
	RescheduleLanes
)

// RescheduleSeen is what RESCHEDULE has read so far.
type RescheduleSeen struct {
	Version Reply[Field]
	// Row is HMGET <row> att state prio lane.
	Row                      Reply[[4]Field]
	Lanes                    Reply[struct{}]
	Pending, Delayed, Signal Reply[int64]
}

// RescheduleVerdict is what RESCHEDULE writes and replies.
type RescheduleVerdict struct {
	// Gone: the row has no att; reply 0 and write nothing.
	Gone bool
	// From and To are the job's state before and after (pending or
	// delayed). Stay: a pending job stays pending; reply To and write
	// nothing.
	From, To string
	Stay     bool
	// Due is the new due time (delayed); Score the job's pending score.
	Due, Score int64
	// Signal: the job goes to pending without a lane while pending was
	// empty (the lane accounting may signal too).
	Signal bool
}

// RescheduleStep is RESCHEDULE's verdict, a refusal, or the next read it
// needs.
type RescheduleStep struct {
	Need RescheduleRead
	// Lane is the job's lane (nil: none), set once the row is read.
	Lane    []byte
	Err     error
	Verdict RescheduleVerdict
}

// Reschedule decides EMQ.RESCHEDULE of job id (its number) to max(now +
// delay, due), in the order of internal/lua/reschedule.lua: the fence; the row (gone;
// a state other than pending or delayed: EMQSTATE reschedule not pending or
// delayed); a pending job due now stays; the lane accounting of a job with
// a lane that moves; pending, delayed and signal typed.
func Reschedule(id, now, due, delay int64, s *RescheduleSeen) RescheduleStep {
	if !s.Version.Made {
		return RescheduleStep{Need: RescheduleFirst}
	}
	if err := Fence(s.Version); err != nil {
		return RescheduleStep{Err: err}
	}
	if s.Row.Err != nil {
		return RescheduleStep{Err: s.Row.Err}
	}
	att, state, prio := s.Row.Val[0], RowState(s.Row.Val[1], s.Row.Val[0]), s.Row.Val[2]
	if !att.Set {
		return RescheduleStep{Verdict: RescheduleVerdict{Gone: true}}
	}
	var v RescheduleVerdict
	switch {
	case state.Is(protocol.StatePending):
		v.From = protocol.StatePending
	case state.Is(protocol.StateDelayed):
		v.From = protocol.StateDelayed
	default:
		return RescheduleStep{Err: rescheduleState}
	}
	v.Due = max(now+delay, due)
	v.To = protocol.StatePending
	if v.Due > now {
		v.To = protocol.StateDelayed
	}
	if v.From == protocol.StatePending && v.To == protocol.StatePending {
		v.Stay = true
		return RescheduleStep{Verdict: v}
	}
	lane := LaneName(s.Row.Val[3])
	if lane != nil && v.From != v.To {
		if !s.Lanes.Made {
			return RescheduleStep{Need: RescheduleLanes, Lane: lane, Verdict: v}
		}
		if s.Lanes.Err != nil {
			return RescheduleStep{Err: s.Lanes.Err}
		}
	}
	for _, r := range [...]*Reply[int64]{&s.Pending, &s.Delayed, &s.Signal} {
		if r.Err != nil {
			return RescheduleStep{Err: r.Err}
		}
	}
	v.Score = protocol.PendingScore(grammar.RowInt(prio.Bytes, prio.Set, protocol.MaxPriority), id)
	v.Signal = v.To == protocol.StatePending && lane == nil && s.Pending.Val == 0
	return RescheduleStep{Lane: lane, Verdict: v}
}

var rescheduleState = refusal(protocol.ErrRescheduleState)
