package verdict

import (
	"bytes"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// The dead filters of REQUEUEDEAD and REMOVEDEAD (docs/PROTOCOL.md, "Dead
// filters") and their walk of dead.

// DeadFilter is the filter of REQUEUEDEAD and REMOVEDEAD: ARGV limit
// after_score after_member min max lane error.
type DeadFilter struct {
	Limit    int64
	After    Cursor
	Min, Max int64
	Lane     []byte // nil: any
	Error    []byte // nil: any
}

// DeadFilterValues reads the filter of verb, in ARGV order.
func DeadFilterValues(verb string, args [][]byte) (DeadFilter, error) {
	var d DeadFilter
	var ok bool
	if d.Limit, ok = grammar.Decimal(args[0], 1, protocol.MaxCount); !ok {
		return d, refusal(protocol.ErrBadArg(verb, "limit"))
	}
	var err error
	if d.After, err = CursorValue(verb, args[1], args[2]); err != nil {
		return d, err
	}
	if d.Min, ok = Score(args[3]); !ok {
		return d, refusal(protocol.ErrBadArg(verb, "min"))
	}
	if d.Max, ok = Score(args[4]); !ok {
		return d, refusal(protocol.ErrBadArg(verb, "max"))
	}
	if len(args[5]) > protocol.MaxLaneName {
		return d, refusal(protocol.ErrBadArg(verb, "lane"))
	}
	if len(args[5]) > 0 {
		d.Lane = args[5]
	}
	if len(args[6]) > protocol.MaxText {
		return d, refusal(protocol.ErrBadArg(verb, "error"))
	}
	if len(args[6]) > 0 {
		d.Error = args[6]
	}
	return d, nil
}

// Matches reports whether a dead member's row matches the filter: present
// (att set), state exactly dead, a score within min … max, its lane as read
// the filter's (when it names one), its error containing the filter's
// (when it names one).
func (d *DeadFilter) Matches(score int64, att, state, lane, errText Field) bool {
	if !att.Set || !state.Is(protocol.StateDead) || score < d.Min || score > d.Max {
		return false
	}
	if d.Lane != nil && !bytes.Equal(LaneName(lane), d.Lane) {
		return false
	}
	if d.Error != nil && (!errText.Set || !bytes.Contains(errText.Bytes, d.Error)) {
		return false
	}
	return true
}

// WalkStart is the rank a filter's walk reads from: after the cursor (e)
// and not before the first member of score min (below, ZCOUNT dead -inf
// (<min>).
func WalkStart(e, below int64) int64 { return max(e, below) }

// Walk is how many of the members a walk read (their scores, in order; at
// most limit + 1) it examines: those while their score is at most max, at
// most limit; more reports whether the walk goes on (a member after the
// last examined was read with a score at most max), so that the last
// examined is the next cursor.
func Walk(scores []int64, limit, maxScore int64) (examined int, more bool) {
	for examined < len(scores) && int64(examined) < limit && scores[examined] <= maxScore {
		examined++
	}
	more = examined > 0 && examined < len(scores) && scores[examined] <= maxScore
	return examined, more
}

// PredictCounter is the HINCRBY of a stats counter by n, predicted with the
// server's integer rules from its HGET.
func PredictCounter(f Field, n int64) (int64, error) { return predict(f, n) }
