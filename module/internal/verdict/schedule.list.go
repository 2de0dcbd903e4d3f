package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// ScheduleListValues checks SCHEDULE.LIST's after (empty, from the first
// schedule, or a schedule id) and count (1..MaxCount), in that order.
func ScheduleListValues(after, count []byte) (int64, error) {
	if len(after) > 0 && !ScheduleID(after) {
		return 0, refusal(protocol.ErrBadArg(protocol.ScheduleList.Name, "after"))
	}
	n, ok := grammar.Decimal(count, 1, protocol.MaxCount)
	if !ok {
		return 0, refusal(protocol.ErrBadArg(protocol.ScheduleList.Name, "count"))
	}
	return n, nil
}
