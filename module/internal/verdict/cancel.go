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

// CancelRead is a read CANCEL's verdict asks for.
type CancelRead uint8

// CANCEL's reads, in order.
const (
	// CancelNone: the verdict is final.
	CancelNone CancelRead = iota
	// CancelFirst: one batch, GET version (the fence), HMGET <row> att
	// state lane parent onfail wait, ZCARD pending, ZCARD delayed, ZCARD
	// active, ZCARD dead and HGET stats cancelled (the verdict takes the
	// type of the job's own set, dead's and the counter in their place).
	// The row is checked against the caller's ACL first; a denial is the
	// row read's error and it is not read.
	CancelFirst
	// CancelFlow: the flow accounting's reads of the job's parent
	// (CancelStep.Parent) and its outcome, when it has one or a wait.
	CancelFlow
	// CancelLanes: the lane accounting of the job's lane (CancelStep.Lane):
	// one waiting job less when pending, one active job less when active;
	// then of the parents released to a lane.
	CancelLanes
	// CancelFlowTypes: the flow accounting's types.
	CancelFlowTypes
)

// CancelSeen is what CANCEL has read so far.
type CancelSeen struct {
	Version Reply[Field]
	// Row is HMGET <row> att state lane parent onfail wait.
	Row Reply[[6]Field]
	// Sets are ZCARD pending, delayed, active and dead; Counter HGET stats
	// cancelled.
	Sets    [4]Reply[int64]
	Counter Reply[Field]
	// Flow, Lanes and FlowTypes are the accountings' outcomes.
	Flow, Lanes, FlowTypes Reply[struct{}]
}

// CancelVerdict is what CANCEL writes and replies.
type CancelVerdict struct {
	// Gone: the row has no att; reply 0 and write nothing.
	Gone bool
	// From is the state the job leaves, Set the index in CancelSeen.Sets of
	// its set (-1: its lane's, a pending job with a lane).
	From string
	Set  int
	// Cancelled is HINCRBY stats cancelled 1's predicted reply.
	Cancelled int64
	// Wait is the job's wait (0: none).
	Wait int64
}

// CancelStep is CANCEL's verdict, a refusal, or the next read it needs.
type CancelStep struct {
	Need CancelRead
	// Lane is the job's lane when its count changes (nil: none), DW and DA
	// its change; Parent its parent (nil: none), Policy its onfail.
	Lane    []byte
	DW, DA  int64
	Parent  []byte
	Policy  Field
	Err     error
	Verdict CancelVerdict
}

// Cancel decides EMQ.CANCEL, in the order of internal/lua/cancel.lua: the fence; the
// row (gone; a state other than pending, delayed or active: EMQSTATE cancel
// not cancellable); the parent and the outcome (flow accounting); the lane
// accounting; the type of the job's set (a lane's is the accounting's),
// dead's, stats cancelled typed and predicted; the flow types.
func Cancel(s *CancelSeen) CancelStep {
	if !s.Version.Made {
		return CancelStep{Need: CancelFirst}
	}
	if err := Fence(s.Version); err != nil {
		return CancelStep{Err: err}
	}
	if s.Row.Err != nil {
		return CancelStep{Err: s.Row.Err}
	}
	att, state := s.Row.Val[0], RowState(s.Row.Val[1], s.Row.Val[0])
	if !att.Set {
		return CancelStep{Verdict: CancelVerdict{Gone: true}}
	}
	v := CancelVerdict{Wait: waitField(s.Row.Val[5])}
	switch {
	case state.Is(protocol.StatePending):
		v.From, v.Set = protocol.StatePending, 0
	case state.Is(protocol.StateDelayed):
		v.From, v.Set = protocol.StateDelayed, 1
	case state.Is(protocol.StateActive):
		v.From, v.Set = protocol.StateActive, 2
	default:
		return CancelStep{Err: cancelState}
	}
	step := CancelStep{Parent: ChildParent(s.Row.Val[3]), Policy: s.Row.Val[4]}
	if lane := LaneName(s.Row.Val[2]); lane != nil {
		switch v.From {
		case protocol.StatePending:
			step.Lane, step.DW, v.Set = lane, -1, -1
		case protocol.StateActive:
			step.Lane, step.DA = lane, -1
		}
	}
	if step.Parent != nil || v.Wait > 0 {
		if !s.Flow.Made {
			step.Need, step.Verdict = CancelFlow, v
			return step
		}
		if s.Flow.Err != nil {
			return CancelStep{Err: s.Flow.Err}
		}
	}
	if step.Lane != nil || step.Parent != nil {
		if !s.Lanes.Made {
			step.Need, step.Verdict = CancelLanes, v
			return step
		}
		if s.Lanes.Err != nil {
			return CancelStep{Err: s.Lanes.Err}
		}
	}
	if v.Set >= 0 && s.Sets[v.Set].Err != nil {
		return CancelStep{Err: s.Sets[v.Set].Err}
	}
	if s.Sets[3].Err != nil {
		return CancelStep{Err: s.Sets[3].Err}
	}
	if s.Counter.Err != nil {
		return CancelStep{Err: s.Counter.Err}
	}
	var err error
	if v.Cancelled, err = predict(s.Counter.Val, 1); err != nil {
		return CancelStep{Err: err}
	}
	if step.Parent != nil || v.Wait > 0 {
		if !s.FlowTypes.Made {
			step.Need, step.Verdict = CancelFlowTypes, v
			return step
		}
		if s.FlowTypes.Err != nil {
			return CancelStep{Err: s.FlowTypes.Err}
		}
	}
	step.Verdict = v
	return step
}

var cancelState = refusal(protocol.ErrCancelState)

// AddFlagsJobFields reports whether ADD writes HSET meta jobfields 1: a job
// of the call stores a kind, timeout or headers field and meta jobfields,
// as read, is not 1 (docs/PROTOCOL.md, "CLAIM's extended rows").
func AddFlagsJobFields(jobs []AddJob, flag Field) bool {
	if flag.Is(protocol.JobFieldsOn) {
		return false
	}
	for _, j := range jobs {
		if j.Kind != nil || j.Timeout != nil || j.Headers != nil {
			return true
		}
	}
	return false
}

// AddRowOpts is the value ADD writes to meta rowopts, or "" for none
// (docs/PROTOCOL.md, "The queue's row flag"). RowOptsOn when a job of the
// call stores a lane, parent, deps, wait or keep field (every job stores
// keep when keep is true: retention is on) and the flag, as read, is not
// RowOptsOn. Else, when every job stores ev (ev is true: events are on),
// RowOptsEvents when the flag is RowOptsOff, or when meta seq (no job was
// ever added, so no row exists) and the flag are both absent. Else
// RowOptsOff when seq and the flag are both absent: a queue whose meta has
// seq but no flag is older than it, and keeps every field read.
func AddRowOpts(jobs []AddJob, keep, ev bool, seq, flag Field) string {
	if len(jobs) == 0 {
		return ""
	}
	stores := keep
	for _, j := range jobs {
		if j.Lane != nil || j.Parent >= 0 || j.IsParent() || j.Wait != nil {
			stores = true
		}
	}
	first := !seq.Set && !flag.Set
	switch {
	case stores && !flag.Is(protocol.RowOptsOn):
		return protocol.RowOptsOn
	case stores:
		return ""
	case ev && (first || flag.Is(protocol.RowOptsOff)):
		return protocol.RowOptsEvents
	case !ev && first:
		return protocol.RowOptsOff
	}
	return ""
}

// ClaimRowFields is the number of row fields CLAIM's HMGET of a row reads
// after att, data and ev: none without ext; with ext max, and kind timeout
// headers too when meta jobfields, as read, is 1.
func ClaimRowFields(ext bool, flag Field) int {
	switch {
	case !ext:
		return 0
	case flag.Is(protocol.JobFieldsOn):
		return len(protocol.ClaimExtendedFields)
	default:
		return 1
	}
}
