package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// PromoteRead is a read PROMOTE's verdict asks for.
type PromoteRead uint8

// PROMOTE's reads, in order.
const (
	// PromoteNone: the verdict is final.
	PromoteNone PromoteRead = iota
	// PromoteFirst: one batch, GET version (the fence), then ZRANGEBYSCORE
	// delayed -inf <now> LIMIT 0 <limit>, the delayed jobs due at or before
	// now.
	PromoteFirst
	// PromoteRows: one batch. HMGET <row> att prio lane for each due member that
	// is a JobMember, in order (their rows are checked against the caller's
	// ACL first); then ZCARD pending and LLEN signal.
	PromoteRows
	// PromoteLanes: the lane accounting of the lanes of the jobs promoted
	// (PromoteVerdict.Moves with a Lane), in order: one waiting job more
	// each.
	PromoteLanes
)

// PromoteSeen is what PROMOTE has read so far. Rows has one entry per member
// of Due; the entries of members that are not ids stay unmade.
type PromoteSeen struct {
	Version Reply[Field]
	Due     Reply[[][]byte]
	Rows    []Reply[[]Field]
	Pending Reply[int64]
	Signal  Reply[int64]
	// Lanes is the lane accounting's outcome.
	Lanes Reply[struct{}]
	// Moves is memory the verdict may fill with its Moves: a handler keeps
	// it from one call to the next, so a steady load allocates nothing.
	Moves []Move
}

// PromoteVerdict is what PROMOTE writes and replies.
type PromoteVerdict struct {
	// Moved is the reply: the jobs moved to pending.
	Moved int64
	// Moves has one entry per member of Due: every member leaves delayed,
	// a job whose row is present goes to pending.
	Moves []Move
	// Signal: pending was empty and jobs go to it.
	Signal bool
}

// PromoteStep is PROMOTE's verdict, a refusal, or the next read it needs.
type PromoteStep struct {
	Need    PromoteRead
	Err     error
	Verdict PromoteVerdict
}

// Promote decides EMQ.PROMOTE over what has been read.
func Promote(s *PromoteSeen) PromoteStep {
	if !s.Version.Made {
		return PromoteStep{Need: PromoteFirst}
	}
	if err := Fence(s.Version); err != nil {
		return PromoteStep{Err: err}
	}
	if s.Due.Err != nil {
		return PromoteStep{Err: s.Due.Err}
	}
	ids := s.Due.Val
	if len(ids) == 0 {
		return PromoteStep{}
	}
	if !s.Signal.Made {
		return PromoteStep{Need: PromoteRows}
	}
	v := PromoteVerdict{Moves: moves(&s.Moves, len(ids))}
	lanes, toPending := false, false
	for i, m := range ids {
		if !JobMember(m) {
			continue
		}
		row := s.Rows[i]
		if row.Err != nil {
			return PromoteStep{Err: row.Err}
		}
		att, prio := row.Val[0], row.Val[1]
		if !att.Set {
			continue
		}
		id, _ := grammar.Decimal(m, 1, protocol.MaxJobID)
		v.Moves[i] = Move{To: ToPending, Score: protocol.PendingScore(grammar.RowInt(prio.Bytes, prio.Set, protocol.MaxPriority), id)}
		if lane := LaneName(at(row.Val, 2)); lane != nil {
			v.Moves[i].To, v.Moves[i].Lane, lanes = ToLane, lane, true
		} else {
			toPending = true
		}
		v.Moved++
	}
	if lanes {
		if !s.Lanes.Made {
			return PromoteStep{Need: PromoteLanes, Verdict: v}
		}
		if s.Lanes.Err != nil {
			return PromoteStep{Err: s.Lanes.Err}
		}
	}
	if s.Pending.Err != nil {
		return PromoteStep{Err: s.Pending.Err}
	}
	if s.Signal.Err != nil {
		return PromoteStep{Err: s.Signal.Err}
	}
	v.Signal = toPending && s.Pending.Val == 0
	return PromoteStep{Verdict: v}
}
