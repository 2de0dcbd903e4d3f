package verdict

import "github.com/trafikey/trafikey/protocol"

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
	// CompleteHolder: GET unique:<uniq>, when the row has a unique key (the
	// key is checked against the caller's ACL first; a denial is this read's
	// error).
	CompleteHolder
	// CompleteLanes: the lane accounting of the job's lane (CompleteStep.Lane),
	// one active job less.
	CompleteLanes
)

// CompleteSeen is what COMPLETE has read so far.
type CompleteSeen struct {
	Version Reply[Field]
	// Row is HMGET <row> att uniq lane.
	Row       Reply[[3]Field]
	Score     Reply[Field]
	Completed Reply[Field]
	// Logs is the caller's ACL on <row>:logs, which only DEL touches: nil,
	// or NOPERM, refused where the writes would start.
	Logs   error
	Holder Reply[Field]
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
}

// CompleteStep is COMPLETE's verdict, a refusal, or the next read it needs.
type CompleteStep struct {
	Need CompleteRead
	// Lane is the job's lane (nil: none), set once the row is read.
	Lane    []byte
	Err     error
	Verdict CompleteVerdict
}

// Complete decides EMQ.COMPLETE of job id for the caller's token, in the
// order of lua/complete.lua: the fence; the row (gone, EMQSTALE); the job's
// place in active (EMQSTATE not active); the unique key's holder (WRONGTYPE);
// stats completed, typed and predicted. ZSCORE types active and HMGET the
// row; DEL takes any type.
func Complete(id, token []byte, s *CompleteSeen) CompleteStep {
	if !s.Version.Made {
		return CompleteStep{Need: CompleteFirst}
	}
	if err := Fence(s.Version); err != nil {
		return CompleteStep{Err: err}
	}
	if s.Row.Err != nil {
		return CompleteStep{Err: s.Row.Err}
	}
	att, uniq := s.Row.Val[0], s.Row.Val[1]
	if !att.Set {
		return CompleteStep{Verdict: CompleteVerdict{Gone: true}}
	}
	if string(att.Bytes) != string(token) {
		return CompleteStep{Err: completeStale}
	}
	if s.Score.Err != nil {
		return CompleteStep{Err: s.Score.Err}
	}
	if !s.Score.Val.Set {
		return CompleteStep{Err: completeNotActive}
	}
	lane := LaneName(s.Row.Val[2])
	var v CompleteVerdict
	if uniq.Set {
		if !s.Holder.Made {
			return CompleteStep{Need: CompleteHolder}
		}
		if s.Holder.Err != nil {
			return CompleteStep{Err: s.Holder.Err}
		}
		v.Release = s.Holder.Val.Set && string(s.Holder.Val.Bytes) == string(id)
	}
	if lane != nil {
		if !s.Lanes.Made {
			return CompleteStep{Need: CompleteLanes, Lane: lane}
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
	if s.Logs != nil {
		return CompleteStep{Err: s.Logs}
	}
	return CompleteStep{Verdict: v, Lane: lane}
}

// COMPLETE's refusals of a lost lease, built once: a stale worker's call is common
// and should cost no allocation.
var (
	completeStale     = refusal(protocol.ErrStale(protocol.Complete.Name))
	completeNotActive = refusal(protocol.ErrNotActive(protocol.Complete.Name))
)
