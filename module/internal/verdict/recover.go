package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// RecoverRead is a read RECOVER's verdict asks for.
type RecoverRead uint8

// RECOVER's reads, in order.
const (
	// RecoverNone: the verdict is final.
	RecoverNone RecoverRead = iota
	// RecoverFirst: one batch, GET version (the fence), then ZRANGEBYSCORE
	// active -inf (<now> LIMIT 0 <limit>, the leases whose deadline passed.
	RecoverFirst
	// RecoverRows: one batch. HMGET <row> att max prio for each expired
	// member that is a JobMember, in order (their rows are checked against
	// the caller's ACL first); then ZCARD pending, ZCARD dead, LLEN signal
	// and HMGET stats recovered dead.
	RecoverRows
	// RecoverLanes: the lane accounting of the lanes of the jobs taken back
	// (RecoverVerdict.Moves with a Lane), in order: one active job less
	// each, one waiting job more for each that goes to its lane.
	RecoverLanes
	// RecoverFlow: the flow accounting of the jobs that die with a parent
	// or a wait (RecoverVerdict.Flow): their outcomes and their parents'
	// reads, before the lane accounting.
	RecoverFlow
	// RecoverFlowTypes: the flow accounting's types, after the counters.
	RecoverFlowTypes
)

// RecoverSeen is what RECOVER has read so far. Rows has one entry per member
// of Expired; the entries of members that are not ids stay unmade.
type RecoverSeen struct {
	Version  Reply[Field]
	Expired  Reply[[][]byte]
	Rows     []Reply[[]Field]
	Pending  Reply[int64]
	Dead     Reply[int64]
	Signal   Reply[int64]
	Counters Reply[[]Field]
	// Lanes is the lane accounting's outcome.
	Lanes Reply[struct{}]
	// Flow and FlowTypes are the flow accounting's outcomes.
	Flow, FlowTypes Reply[struct{}]
	// Moves is memory the verdict may fill with its Moves: a handler keeps
	// it from one call to the next, so a steady load allocates nothing.
	Moves []Move
}

// RecoverVerdict is what RECOVER writes and replies.
type RecoverVerdict struct {
	// Requeued and Died are the reply [requeued, dead].
	Requeued, Died int64
	// Moves has one entry per member of Expired: every member leaves
	// active, a job with attempts left goes to pending, one without to dead.
	Moves []Move
	// Recovered and Dead are the predicted replies of HINCRBY stats
	// recovered <Requeued> and HINCRBY stats dead <Died> (each written only
	// when its count is not 0): the counters' new values, which the native
	// executor writes with one HSET when both grow.
	Recovered, Dead int64
	// Signal: pending was empty and jobs go to it (the lane accounting may
	// signal too).
	Signal bool
	// Flow: a job that dies has a parent or a wait.
	Flow bool
}

// RecoverStep is RECOVER's verdict, a refusal, or the next read it needs.
type RecoverStep struct {
	Need    RecoverRead
	Err     error
	Verdict RecoverVerdict
}

// Recover decides EMQ.RECOVER at time now (ms) over what has been read:
// expired leases go back to pending while the job has attempts left
// (att < max), else to dead with time of death now.
func Recover(now int64, s *RecoverSeen) RecoverStep {
	if !s.Version.Made {
		return RecoverStep{Need: RecoverFirst}
	}
	if err := Fence(s.Version); err != nil {
		return RecoverStep{Err: err}
	}
	if s.Expired.Err != nil {
		return RecoverStep{Err: s.Expired.Err}
	}
	ids := s.Expired.Val
	if len(ids) == 0 {
		return RecoverStep{}
	}
	if !s.Counters.Made {
		return RecoverStep{Need: RecoverRows}
	}
	v := RecoverVerdict{Moves: moves(&s.Moves, len(ids))}
	lanes, toPending, rowErr := recoverMoves(now, s, &v)
	if v.Flow {
		if !s.Flow.Made {
			return RecoverStep{Need: RecoverFlow, Verdict: v}
		}
		if s.Flow.Err != nil {
			return RecoverStep{Err: s.Flow.Err}
		}
		lanes = true // a parent released may go to its lane
	}
	if rowErr != nil {
		return RecoverStep{Err: rowErr}
	}
	if lanes {
		if !s.Lanes.Made {
			return RecoverStep{Need: RecoverLanes, Verdict: v}
		}
		if s.Lanes.Err != nil {
			return RecoverStep{Err: s.Lanes.Err}
		}
	}
	if err := recoverCounters(s, &v); err != nil {
		return RecoverStep{Err: err}
	}
	if v.Flow {
		if !s.FlowTypes.Made {
			return RecoverStep{Need: RecoverFlowTypes, Verdict: v}
		}
		if s.FlowTypes.Err != nil {
			return RecoverStep{Err: s.FlowTypes.Err}
		}
	}
	v.Signal = toPending && s.Pending.Val == 0
	return RecoverStep{Verdict: v}
}

// recoverMoves decides each expired job's move: to pending (or its lane)
// while attempts remain, else to dead. A row's refusal ends the jobs
// there: the parents of the jobs before it are still told (and may refuse
// first), as internal/lua/recover.lua reads each job through before the
// next row. It reports whether a job has a lane, whether one goes to
// pending, and the row's refusal.
func recoverMoves(now int64, s *RecoverSeen, v *RecoverVerdict) (lanes, toPending bool, rowErr error) {
	for i, m := range s.Expired.Val {
		if !JobMember(m) {
			continue
		}
		row := s.Rows[i]
		if row.Err != nil {
			return lanes, toPending, row.Err
		}
		att, max, prio := row.Val[0], RowMax(row.Val[1]), row.Val[2]
		if !att.Set {
			continue
		}
		lane := LaneName(at(row.Val, 3))
		if lane != nil {
			lanes = true
		}
		if grammar.RowInt(att.Bytes, true, grammar.MaxRowInt) < grammar.RowInt(max.Bytes, max.Set, grammar.MaxRowInt) {
			id, _ := grammar.Decimal(m, 1, protocol.MaxJobID)
			v.Moves[i] = Move{To: ToPending, Score: protocol.PendingScore(grammar.RowInt(prio.Bytes, prio.Set, protocol.MaxPriority), id), Lane: lane}
			if lane != nil {
				v.Moves[i].To = ToLane
			} else {
				toPending = true
			}
			v.Requeued++
		} else {
			v.Moves[i] = Move{To: ToDead, Score: now, Lane: lane}
			v.Died++
			if ChildParent(at(row.Val, 4)) != nil || waitField(at(row.Val, 6)) > 0 {
				v.Flow = true
			}
		}
	}
	return lanes, toPending, nil
}

// recoverCounters checks the types read (pending, dead, signal, stats) and
// predicts the counters that grow.
func recoverCounters(s *RecoverSeen, v *RecoverVerdict) error {
	for _, r := range []*Reply[int64]{&s.Pending, &s.Dead, &s.Signal} {
		if r.Err != nil {
			return r.Err
		}
	}
	if s.Counters.Err != nil {
		return s.Counters.Err
	}
	var err error
	if v.Requeued > 0 {
		if v.Recovered, err = predict(s.Counters.Val[0], v.Requeued); err != nil {
			return err
		}
	}
	if v.Died > 0 {
		if v.Dead, err = predict(s.Counters.Val[1], v.Died); err != nil {
			return err
		}
	}
	return nil
}
