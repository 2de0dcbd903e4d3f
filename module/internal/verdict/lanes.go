package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// LanesValues checks LANES's after (empty, from the first lane, or up to
// MaxLaneName bytes) and count (1..MaxCount), in that order. Each entry of
// its reply is LANE's (LaneInfoReply) after the lane's name.
func LanesValues(after, count []byte) (int64, error) {
	if len(after) > protocol.MaxLaneName {
		return 0, refusal(protocol.ErrBadArg(protocol.Lanes.Name, "after"))
	}
	n, ok := grammar.Decimal(count, 1, protocol.MaxCount)
	if !ok {
		return 0, refusal(protocol.ErrBadArg(protocol.Lanes.Name, "count"))
	}
	return n, nil
}
