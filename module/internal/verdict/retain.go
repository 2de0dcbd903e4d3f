package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// This file holds the verdicts of the retention verbs (RETAIN, TRIM) and
// CHILDREN, after their fence.

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

// TrimBounds is the retention meta fields TRIM reads (HMGET meta keep_done
// keep_done_max keep_dead keep_dead_max), read as numbers: the dead bound
// defaults to protocol.DefaultKeepDead when absent.
type TrimBounds struct {
	KeepDone, KeepDoneMax, KeepDead, KeepDeadMax int64
}

// ReadTrimBounds reads meta's retention fields.
func ReadTrimBounds(f [4]Field) TrimBounds {
	b := TrimBounds{KeepDone: rowInt(f[0]), KeepDoneMax: rowInt(f[1]), KeepDead: rowInt(f[2]), KeepDeadMax: rowInt(f[3])}
	if !f[3].Set {
		b.KeepDeadMax = protocol.DefaultKeepDead
	}
	return b
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
