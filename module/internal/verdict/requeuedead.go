package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// RequeueDeadFields is REQUEUEDEAD's HMGET of a row (ev follows), in order.
var RequeueDeadFields = []string{protocol.FieldState, protocol.FieldAttempts, protocol.FieldMax, protocol.FieldPriority,
	protocol.FieldLane, protocol.FieldParent, protocol.FieldOnFail, protocol.FieldChildFail, protocol.FieldError,
	protocol.FieldCancelled}

// RequeueDeadJob decides one examined member of REQUEUEDEAD from its row
// (RequeueDeadFields): taken when the filter matches, then it goes to
// pending (or its lane) with its pending score, and its max becomes att +
// max, as REQUEUE's.
func RequeueDeadJob(f *DeadFilter, member []byte, score int64, row []Field) (mv Move, newMax int64, taken bool) {
	state, att, mx, prio, lane, errText := row[0], row[1], row[2], row[3], row[4], row[8]
	if !f.Matches(score, att, state, lane, errText) {
		return Move{}, 0, false
	}
	id, _ := grammar.Decimal(member, 1, protocol.MaxJobID)
	mv = Move{To: ToPending, Score: protocol.PendingScore(grammar.RowInt(prio.Bytes, prio.Set, protocol.MaxPriority), id)}
	if l := LaneName(lane); l != nil {
		mv.To, mv.Lane = ToLane, l
	}
	mx = RowMax(mx) // a row leaves out max at its default
	newMax = grammar.RowInt(att.Bytes, true, grammar.MaxRowInt) + grammar.RowInt(mx.Bytes, mx.Set, grammar.MaxRowInt)
	return mv, newMax, true
}
