package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// FailRead is a read FAIL's verdict asks for.
type FailRead uint8

// FAIL's reads.
const (
	// FailNone: the verdict is final.
	FailNone FailRead = iota
	// FailAll: one batch, GET version (the fence), HMGET <row> att max bo,
	// ZSCORE active <id>, ZCARD delayed, ZCARD dead and HMGET stats failed
	// retried dead. The row is checked against the caller's ACL first; a
	// denial is the row read's error and the row is not read.
	FailAll
	// FailCancelled (the job is not in active): HGET <row> cancelled.
	FailCancelled
	// FailFlow: the flow accounting's reads of the parent of a job that
	// dies (FailStep.Parent).
	FailFlow
	// FailLanes: the lane accounting of the job's lane (FailStep.Lane), one
	// active job less, and of the parents released to a lane.
	FailLanes
	// FailFlowTypes: the flow accounting's types, for a job that dies with
	// a parent or a wait.
	FailFlowTypes
)

// FailSeen is what FAIL has read so far.
type FailSeen struct {
	Version Reply[Field]
	// Row is HMGET <row> att max bo lane parent onfail wait.
	Row     Reply[[7]Field]
	Score   Reply[Field]
	Delayed Reply[int64]
	Dead    Reply[int64]
	// Counters is HMGET stats failed retried dead.
	Counters Reply[[3]Field]
	// Cancelled is HGET <row> cancelled, read when the job is not active.
	Cancelled Reply[Field]
	// Lanes is the lane accounting's outcome.
	Lanes Reply[struct{}]
	// Flow and FlowTypes are the flow accounting's outcomes.
	Flow, FlowTypes Reply[struct{}]
}

// FailVerdict is what FAIL writes and replies.
type FailVerdict struct {
	// Gone: the row has no att; reply 0 and write nothing.
	Gone bool
	// Retry: the job goes to delayed, due after Delay ms, and FAIL replies
	// "retry"; else it goes to dead and FAIL replies "dead".
	Retry bool
	Delay int64
	// Failed and Outcome are the predicted replies of HINCRBY stats failed 1
	// and HINCRBY stats <retried|dead> 1: the counters' new values, which
	// the native executor writes with one HSET.
	Failed, Outcome int64
	// Wait is the wait of a job that dies (0: none).
	Wait int64
}

// FailStep is FAIL's verdict, a refusal, or the next read it needs.
type FailStep struct {
	Need FailRead
	// Lane is the job's lane (nil: none), set once the row is read; Parent
	// the parent of a job that dies (nil: none), Policy its onfail.
	Lane, Parent []byte
	Policy       Field
	Err          error
	Verdict      FailVerdict
}

// Fail decides EMQ.FAIL for the caller's token and retry flag, in the order
// of internal/lua/fail.lua: the fence; the row (gone, EMQSTALE); the job's place in
// active (EMQSTATE not active); delayed and dead typed; stats failed, then
// the outcome's counter, typed and predicted. A retry is granted when retry
// is asked and att < max (both read as row integers); its delay follows the
// row's bo (grammar.RetryDelay).
func Fail(token []byte, retry bool, s *FailSeen) FailStep {
	if step, done := failRow(token, s); done {
		return step
	}
	maxF := RowMax(s.Row.Val[1])
	att := grammar.RowInt(s.Row.Val[0].Bytes, true, grammar.MaxRowInt)
	v := FailVerdict{Retry: retry && att < grammar.RowInt(maxF.Bytes, maxF.Set, grammar.MaxRowInt)}
	var parent []byte
	if !v.Retry {
		parent, v.Wait = ChildParent(s.Row.Val[4]), waitField(s.Row.Val[6])
	}
	step := FailStep{Lane: LaneName(s.Row.Val[3]), Parent: parent, Policy: s.Row.Val[5]}
	flow := parent != nil || v.Wait > 0
	if flow {
		if !s.Flow.Made {
			step.Verdict = v
			step.Need = FailFlow
			return step
		}
		if s.Flow.Err != nil {
			return FailStep{Err: s.Flow.Err}
		}
	}
	if step.Lane != nil || parent != nil {
		if !s.Lanes.Made {
			step.Need = FailLanes
			return step
		}
		if s.Lanes.Err != nil {
			return FailStep{Err: s.Lanes.Err}
		}
	}
	if err := failCounters(s, &v, att); err != nil {
		return FailStep{Err: err}
	}
	if flow {
		if !s.FlowTypes.Made {
			step.Need, step.Verdict = FailFlowTypes, v
			return step
		}
		if s.FlowTypes.Err != nil {
			return FailStep{Err: s.FlowTypes.Err}
		}
	}
	step.Verdict = v
	return step
}

// failRow is FAIL's first look: the fence, the row (gone, stale), its
// place in active (not active, cancelled). done is false when the job is
// active and its token matches.
func failRow(token []byte, s *FailSeen) (step FailStep, done bool) {
	if !s.Version.Made {
		return FailStep{Need: FailAll}, true
	}
	if err := Fence(s.Version); err != nil {
		return FailStep{Err: err}, true
	}
	if s.Row.Err != nil {
		return FailStep{Err: s.Row.Err}, true
	}
	attF := s.Row.Val[0]
	if !attF.Set {
		return FailStep{Verdict: FailVerdict{Gone: true}}, true
	}
	if string(attF.Bytes) != string(token) {
		return FailStep{Err: failStale}, true
	}
	if s.Score.Err != nil {
		return FailStep{Err: s.Score.Err}, true
	}
	if !s.Score.Val.Set {
		if !s.Cancelled.Made {
			return FailStep{Need: FailCancelled}, true
		}
		return FailStep{Err: NotActive(s.Cancelled, failCancelled, failNotActive)}, true
	}
	return FailStep{}, false
}

// failCounters checks the types read (delayed, dead, stats) and predicts
// the counters: failed, and retried (with the retry's delay, from the
// backoff and att) or dead.
func failCounters(s *FailSeen, v *FailVerdict, att int64) error {
	if s.Delayed.Err != nil {
		return s.Delayed.Err
	}
	if s.Dead.Err != nil {
		return s.Dead.Err
	}
	if s.Counters.Err != nil {
		return s.Counters.Err
	}
	outcome := s.Counters.Val[2] // dead
	if v.Retry {
		outcome = s.Counters.Val[1] // retried
		v.Delay = grammar.RetryDelay(RowBackoff(s.Row.Val[2]).Bytes, att)
	}
	var err error
	if v.Failed, err = predict(s.Counters.Val[0], 1); err != nil {
		return err
	}
	v.Outcome, err = predict(outcome, 1)
	return err
}

// FAIL's refusals of a lost lease, built once: a stale worker's call is common
// and should cost no allocation.
var (
	failStale     = refusal(protocol.ErrStale(protocol.Fail.Name))
	failNotActive = refusal(protocol.ErrNotActive(protocol.Fail.Name))
	failCancelled = refusal(protocol.ErrCancelled(protocol.Fail.Name))
)
