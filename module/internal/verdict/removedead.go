package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
)

// RemoveDeadFields is REMOVEDEAD's HMGET of a row (ev follows), in order.
var RemoveDeadFields = []string{protocol.FieldAttempts, protocol.FieldState, protocol.FieldLane, protocol.FieldError, protocol.FieldUnique}

// DeadFate is what REMOVEDEAD does with one examined member.
type DeadFate uint8

// The fates of an examined member of REMOVEDEAD.
const (
	// DeadLeft: the filter does not take it; it stays.
	DeadLeft DeadFate = iota
	// DeadTaken: the filter takes it: it leaves dead and is deleted.
	DeadTaken
	// DeadRowless: not a job id, or its row is absent: it leaves dead,
	// not counted.
	DeadRowless
)

// RemoveDeadJob decides one examined member of REMOVEDEAD from its row
// (RemoveDeadFields; nil for a member that is not a job id).
func RemoveDeadJob(f *DeadFilter, score int64, row []Field) DeadFate {
	if row == nil || !row[0].Set {
		return DeadRowless
	}
	if f.Matches(score, row[0], row[1], row[2], row[3]) {
		return DeadTaken
	}
	return DeadLeft
}
