package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
)

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
	// Notice: the job was active, so its end is announced to the worker
	// holding it on the queue's cancels channel, the message its id and
	// the row's att, when the caller's ACL allows (a check of the host's,
	// not a refusal).
	Notice bool
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
	var ok bool
	if v.From, v.Set, ok = cancelFrom(state); !ok {
		return CancelStep{Err: cancelState}
	}
	v.Notice = v.From == protocol.StateActive
	step := CancelStep{Parent: ChildParent(s.Row.Val[3]), Policy: s.Row.Val[4]}
	if lane := LaneName(s.Row.Val[2]); lane != nil {
		switch v.From {
		case protocol.StatePending:
			step.Lane, step.DW, v.Set = lane, -1, -1
		case protocol.StateActive:
			step.Lane, step.DA = lane, -1
		}
	}
	return cancelWrites(s, step, v)
}

// cancelFrom is the state a job is cancelled from and the index of its set
// in CancelSeen.Sets; ok is false for a state that cannot be cancelled.
func cancelFrom(state Field) (from string, set int, ok bool) {
	switch {
	case state.Is(protocol.StatePending):
		return protocol.StatePending, 0, true
	case state.Is(protocol.StateDelayed):
		return protocol.StateDelayed, 1, true
	case state.Is(protocol.StateActive):
		return protocol.StateActive, 2, true
	}
	return "", 0, false
}

// cancelWrites is the verdict v of a job cancelled (step carries its lane's
// change, parent and policy), after the reads its writes need: the flow
// accounting (a parent or a wait), the lane accounting, the type of the
// job's set and dead's, stats cancelled predicted, the flow types.
func cancelWrites(s *CancelSeen, step CancelStep, v CancelVerdict) CancelStep {
	flow := step.Parent != nil || v.Wait > 0
	if flow {
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
	if err := cancelCounter(s, &v); err != nil {
		return CancelStep{Err: err}
	}
	if flow {
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

// cancelCounter checks the types read (the job's set, unless a lane's,
// and dead; stats) and predicts stats cancelled.
func cancelCounter(s *CancelSeen, v *CancelVerdict) error {
	if v.Set >= 0 && s.Sets[v.Set].Err != nil {
		return s.Sets[v.Set].Err
	}
	if s.Sets[3].Err != nil {
		return s.Sets[3].Err
	}
	if s.Counter.Err != nil {
		return s.Counter.Err
	}
	var err error
	v.Cancelled, err = predict(s.Counter.Val, 1)
	return err
}

var cancelState = refusal(protocol.ErrCancelState)
