package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
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
// RowOptsEvents when the flag is RowOptsOff, or when meta seq (no job was
// ever added, so no row exists) and the flag are both absent. Else
// RowOptsOff when seq and the flag are both absent: a queue whose meta has
// seq but no flag is older than it, and keeps every field read.
func AddRowOpts(jobs []AddJob, keep, ev bool, seq, flag Field) string {
	if len(jobs) == 0 {
		return ""
	}
	stores := keep
	for _, j := range jobs {
		if j.Lane != nil || j.Parent >= 0 || j.IsParent() || j.Wait != nil {
			stores = true
		}
	}
	first := !seq.Set && !flag.Set
	switch {
	case stores && !flag.Is(protocol.RowOptsOn):
		return protocol.RowOptsOn
	case stores:
		return ""
	case ev && (first || flag.Is(protocol.RowOptsOff)):
		return protocol.RowOptsEvents
	case !ev && first:
		return protocol.RowOptsOff
	}
	return ""
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
