package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// ChildrenValues checks CHILDREN's id, after (0 or a job id) and count
// (1..MaxCount).
func ChildrenValues(id, after, count []byte) (from, n int64, err error) {
	if !grammar.ID(id) {
		return 0, 0, refusal(protocol.ErrBadArg(protocol.Children.Name, "id"))
	}
	from, ok := grammar.Decimal(after, 0, protocol.MaxJobID)
	if !ok {
		return 0, 0, refusal(protocol.ErrBadArg(protocol.Children.Name, "after"))
	}
	n, ok = grammar.Decimal(count, 1, protocol.MaxCount)
	if !ok {
		return 0, 0, refusal(protocol.ErrBadArg(protocol.Children.Name, "count"))
	}
	return from, n, nil
}
