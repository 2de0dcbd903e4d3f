package verdict

import "github.com/trafikey/trafikey/internal/protocol"

// CompleteRead is a read COMPLETE's verdict asks for.
type CompleteRead uint8

// COMPLETE's reads, in order.
const (
	// CompleteNone: the verdict is final.
	CompleteNone CompleteRead = iota
	// CompleteFirst: one batch, GET version (the fence), HMGET <row> att
	// uniq, ZSCORE active <id> and HGET stats completed. The row and its logs
	// are checked against the caller's ACL first; a denied row is the row
	// read's error (and is not read), denied logs are CompleteSeen.Logs.
	CompleteFirst
	// CompleteCancelled (the job is not in active): HGET <row> cancelled.
	CompleteCancelled
	// CompleteHolder: GET unique:<uniq>, when the row has a unique key (the
	// key is checked against the caller's ACL first; a denial is this read's
	// error).
	CompleteHolder
	// CompleteResultMax: HGET meta result_max, when the result is not
	// empty (meta checked against the caller's ACL first, read).
	CompleteResultMax
	// CompleteFlow: the flow accounting's reads of the job's parents
	// (CompleteStep.Parent), when it names one.
	CompleteFlow
	// CompleteLanes: the lane accounting of the job's lane (CompleteStep.Lane),
	// one active job less, and of the parents released to a lane.
	CompleteLanes
	// CompleteFlowTypes: the flow accounting's types, when the job names a
	// parent, is retained or is waited for.
	CompleteFlowTypes
)

// CompleteSeen is what COMPLETE has read so far.
type CompleteSeen struct {
	Version Reply[Field]
	// Row is HMGET <row> att uniq lane parent keep wait.
	Row       Reply[[6]Field]
	Score     Reply[Field]
	Completed Reply[Field]
	// Logs is the caller's ACL on <row>:logs and, for a parent (a row with
	// deps), its kids, results and failures, which only DEL touches: nil,
	// or NOPERM, refused where the writes would start.
	Logs   error
	Holder Reply[Field]
	// Cancelled is HGET <row> cancelled, read when the job is not active.
	Cancelled Reply[Field]
	// ResultMax is HGET meta result_max.
	ResultMax Reply[Field]
	// Flow and FlowTypes are the flow accounting's outcomes.
	Flow, FlowTypes Reply[struct{}]
	// Lanes is the lane accounting's outcome.
	Lanes Reply[struct{}]
}

// CompleteVerdict is what COMPLETE writes and replies.
type CompleteVerdict struct {
	// Gone: the row has no att; reply 0 and write nothing.
	Gone bool
	// Release: the unique key holds this job's id; DEL it too.
	Release bool
	// Completed is HINCRBY stats completed 1's predicted reply.
	Completed int64
	// Keep: the job is retained (its row kept, state completed).
	Keep bool
	// Wait is the job's wait (0: not waited for).
	Wait int64
}

// CompleteStep is COMPLETE's verdict, a refusal, or the next read it needs.
type CompleteStep struct {
	Need CompleteRead
	// Lane is the job's lane (nil: none), and Parent its parent (nil:
	// none), set once the row is read.
	Lane, Parent []byte
	Err          error
	Verdict      CompleteVerdict
}

// Complete decides EMQ.COMPLETE of job id for the caller's token, in the
// order of internal/lua/complete.lua: the fence; the row (gone, EMQSTALE); the job's
// place in active (EMQSTATE cancelled or not active); the unique key's holder (WRONGTYPE);
// stats completed, typed and predicted. ZSCORE types active and HMGET the
// row; DEL takes any type.
func Complete(id, token, result []byte, s *CompleteSeen) CompleteStep {
	if step, done := completeRow(token, s); done {
		return step
	}
	v := CompleteVerdict{Keep: s.Row.Val[4].Is("1"), Wait: waitField(s.Row.Val[5])}
	if step, done := completeOwn(id, result, s, &v); done {
		return step
	}
	return completeRest(s, v, LaneName(s.Row.Val[2]), ChildParent(s.Row.Val[3]))
}

// completeRow is COMPLETE's first look: the fence, the row (gone, stale),
// its place in active (not active, cancelled). done is false when the job
// is active and its token matches.
func completeRow(token []byte, s *CompleteSeen) (step CompleteStep, done bool) {
	if !s.Version.Made {
		return CompleteStep{Need: CompleteFirst}, true
	}
	if err := Fence(s.Version); err != nil {
		return CompleteStep{Err: err}, true
	}
	if s.Row.Err != nil {
		return CompleteStep{Err: s.Row.Err}, true
	}
	att := s.Row.Val[0]
	if !att.Set {
		return CompleteStep{Verdict: CompleteVerdict{Gone: true}}, true
	}
	if string(att.Bytes) != string(token) {
		return CompleteStep{Err: completeStale}, true
	}
	if s.Score.Err != nil {
		return CompleteStep{Err: s.Score.Err}, true
	}
	if !s.Score.Val.Set {
		if !s.Cancelled.Made {
			return CompleteStep{Need: CompleteCancelled}, true
		}
		return CompleteStep{Err: NotActive(s.Cancelled, completeCancelled, completeNotActive)}, true
	}
	return CompleteStep{}, false
}

// completeOwn is COMPLETE's look at the job's own keys: its unique key's
// holder (released when it holds the job), and its result's bound.
func completeOwn(id, result []byte, s *CompleteSeen, v *CompleteVerdict) (step CompleteStep, done bool) {
	if s.Row.Val[1].Set {
		if !s.Holder.Made {
			return CompleteStep{Need: CompleteHolder}, true
		}
		if s.Holder.Err != nil {
			return CompleteStep{Err: s.Holder.Err}, true
		}
		v.Release = s.Holder.Val.Set && string(s.Holder.Val.Bytes) == string(id)
	}
	if len(result) > 0 {
		if !s.ResultMax.Made {
			return CompleteStep{Need: CompleteResultMax}, true
		}
		if s.ResultMax.Err != nil {
			return CompleteStep{Err: s.ResultMax.Err}, true
		}
		if int64(len(result)) > ResultMax(s.ResultMax.Val) {
			return CompleteStep{Err: completeTooLarge}, true
		}
	}
	return CompleteStep{}, false
}

// completeRest is COMPLETE's last looks: the flow accounting (a parent, a
// retained job, a wait), the lanes (the job's, and the parents released to
// one: the flow's reads tell the handler), stats completed predicted, the
// flows' types, the logs.
func completeRest(s *CompleteSeen, v CompleteVerdict, lane, parent []byte) CompleteStep {
	flow := parent != nil || v.Keep || v.Wait > 0
	if flow {
		if !s.Flow.Made {
			return CompleteStep{Need: CompleteFlow, Lane: lane, Parent: parent, Verdict: v}
		}
		if s.Flow.Err != nil {
			return CompleteStep{Err: s.Flow.Err}
		}
	}
	if lane != nil || parent != nil {
		if !s.Lanes.Made {
			return CompleteStep{Need: CompleteLanes, Lane: lane, Parent: parent}
		}
		if s.Lanes.Err != nil {
			return CompleteStep{Err: s.Lanes.Err}
		}
	}
	if s.Completed.Err != nil {
		return CompleteStep{Err: s.Completed.Err}
	}
	var err error
	if v.Completed, err = predict(s.Completed.Val, 1); err != nil {
		return CompleteStep{Err: err}
	}
	if flow {
		if !s.FlowTypes.Made {
			return CompleteStep{Need: CompleteFlowTypes, Lane: lane, Parent: parent, Verdict: v}
		}
		if s.FlowTypes.Err != nil {
			return CompleteStep{Err: s.FlowTypes.Err}
		}
	}
	if s.Logs != nil && !v.Keep {
		return CompleteStep{Err: s.Logs}
	}
	return CompleteStep{Verdict: v, Lane: lane, Parent: parent}
}

// COMPLETE's refusals of a lost lease, built once: a stale worker's call is common
// and should cost no allocation.
var (
	completeStale     = refusal(protocol.ErrStale(protocol.Complete.Name))
	completeNotActive = refusal(protocol.ErrNotActive(protocol.Complete.Name))
	completeCancelled = refusal(protocol.ErrCancelled(protocol.Complete.Name))
	completeTooLarge  = refusal(protocol.ErrResultTooLarge)
)
