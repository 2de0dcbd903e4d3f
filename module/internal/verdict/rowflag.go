package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// AddFlagsJobFields reports whether ADD writes HSET meta jobfields 1: a job
// of the call stores a kind, timeout or headers field and meta jobfields,
// as read, is not 1 (docs/PROTOCOL.md, "CLAIM's extended rows").
func AddFlagsJobFields(jobs []AddJob, flag Field) bool {
	if flag.Is(protocol.JobFieldsOn) {
		return false
	}
	for _, j := range jobs {
		if j.Kind != nil || j.Timeout != nil || j.Headers != nil {
			return true
		}
	}
	return false
}

// AddRowOpts is the value ADD writes to meta rowopts, or "" for none
// (docs/PROTOCOL.md, "The queue's row flag"). RowOptsOn when a job of the
// call stores a lane, parent, deps, wait or keep field (every job stores
// keep when keep is true: retention is on) and the flag, as read, is not
// RowOptsOn. Else, when every job stores ev (ev is true: events are on),
// RowOptsEvents when the flag is RowOptsOff or absent. Else RowOptsOff when
// the flag is absent: ADD writes it with a queue's first rows, so it is
// absent only while no job was ever added.
func AddRowOpts(jobs []AddJob, keep, ev bool, flag Field) string {
	if len(jobs) == 0 {
		return ""
	}
	stores := keep
	for _, j := range jobs {
		if j.Lane != nil || j.Parent >= 0 || j.IsParent() || j.Wait != nil {
			stores = true
		}
	}
	switch {
	case stores && !flag.Is(protocol.RowOptsOn):
		return protocol.RowOptsOn
	case stores:
		return ""
	case ev && RowFlagOff(flag):
		return protocol.RowOptsEvents
	case !ev && !flag.Set:
		return protocol.RowOptsOff
	}
	return ""
}

// RowFlagOff reports whether meta rowopts, as read, says no row of the
// queue holds lane, parent, deps, keep, wait or ev (docs/PROTOCOL.md, "The
// queue's row flag"): it is RowOptsOff, or absent (no job was ever added:
// ADD writes the flag with a queue's first rows).
func RowFlagOff(flag Field) bool {
	return !flag.Set || flag.Is(protocol.RowOptsOff)
}

// ClaimRowFields is the number of row fields CLAIM's HMGET of a row reads
// after att, data and ev: none without ext; with ext max, and kind timeout
// headers too when meta jobfields, as read, is 1.
func ClaimRowFields(ext bool, flag Field) int {
	switch {
	case !ext:
		return 0
	case flag.Is(protocol.JobFieldsOn):
		return len(protocol.ClaimExtendedFields)
	default:
		return 1
	}
}

// ClaimWait is the wait of CLAIM's extended row (docs/PROTOCOL.md, "CLAIM's
// extended rows"): now less the row's at, at least 0, when the row holds no
// state (a job added ready that nothing claimed or moved since) and at
// reads as a row number; not known (false) otherwise.
func ClaimWait(state, at Field, now int64) (int64, bool) {
	if state.Set || !at.Set {
		return 0, false
	}
	a, ok := grammar.Decimal(at.Bytes, 0, grammar.MaxRowInt)
	if !ok {
		return 0, false
	}
	return max(0, now-a), true
}
