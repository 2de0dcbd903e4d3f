package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// RETAIN's verdict, after its fence, and the result bound it sets.

// RetainNames are RETAIN's arguments in ARGV order, as its refusals name
// them, and RetainFields the meta fields they set.
var (
	RetainNames  = [5]string{"keep_done", "keep_done_max", "keep_dead", "keep_dead_max", "result_max"}
	RetainFields = [5]string{protocol.MetaKeepDone, protocol.MetaKeepDoneMax, protocol.MetaKeepDead, protocol.MetaKeepDeadMax, protocol.MetaResultMax}
	retainBounds = [5]int64{protocol.MaxDelayMS, protocol.MaxKeepCount, protocol.MaxDelayMS, protocol.MaxKeepCount, protocol.MaxResult}
)

// RetainValues checks RETAIN's five arguments in order: each a canonical
// decimal within its domain, else "bad <name>".
func RetainValues(args [][]byte) (out [5]int64, err error) {
	for i, a := range args[:5] {
		v, ok := grammar.Decimal(a, 0, retainBounds[i])
		if !ok {
			return out, refusal(protocol.ErrBadArg(protocol.Retain.Name, RetainNames[i]))
		}
		out[i] = v
	}
	return out, nil
}

// ResultMax is the queue's bound on a result from meta's result_max: absent
// or 0 is protocol.DefaultResult, and never more than protocol.MaxResult.
func ResultMax(f Field) int64 {
	v := rowInt(f)
	if v <= 0 {
		return protocol.DefaultResult
	}
	return min(v, protocol.MaxResult)
}
