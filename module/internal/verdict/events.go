package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// EventsValue checks EVENTS's max_len: 0 (clear the bound) or
// 1..MaxEventsLen.
func EventsValue(maxLen []byte) (int64, error) {
	n, ok := grammar.Decimal(maxLen, 0, protocol.MaxEventsLen)
	if !ok {
		return 0, refusal(protocol.ErrBadArg(protocol.Events.Name, "max_len"))
	}
	return n, nil
}

// Events decides EVENTS over its one read batch, the fence then HGET meta
// events_max (stored), for the bound maxLen: set is HSET meta events_max
// <maxLen> for a bound, del HDEL meta events_max to clear a bound that is
// there; with neither, nothing is written. The reply is 1 either way.
func Events(version, stored Reply[Field], maxLen int64) (set, del bool, err error) {
	if err := Fence(version); err != nil {
		return false, false, err
	}
	if stored.Err != nil {
		return false, false, stored.Err
	}
	if maxLen > 0 {
		return true, false, nil
	}
	return false, stored.Val.Set, nil
}
