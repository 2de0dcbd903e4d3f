package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// ScheduleDueLimit checks SCHEDULE.DUE's limit, 1..MaxCount: the most due
// schedules one call reads.
func ScheduleDueLimit(limit []byte) (int64, error) {
	n, ok := grammar.Decimal(limit, 1, protocol.MaxCount)
	if !ok {
		return 0, refusal(protocol.ErrBadArg(protocol.ScheduleDue.Name, "limit"))
	}
	return n, nil
}
