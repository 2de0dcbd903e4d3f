package protocol

// The job options, rescheduling and cancellation (docs/PROTOCOL.md, "Job
// options, rescheduling and cancellation").
var (
	// Reschedule moves a pending or delayed job to a new due time.
	Reschedule = verb("reschedule", Keeps, SuffixVersion, SuffixPending, SuffixDelayed, SuffixSignal)
	// Cancel ends a pending, delayed or active job in the dead set, with
	// err ErrTextCancelled.
	Cancel = verb("cancel", Keeps, SuffixVersion, SuffixStats, SuffixPending, SuffixDelayed, SuffixActive, SuffixDead)
)

// HandlerVerbs lists the rescheduling and cancellation verbs in the order
// docs/PROTOCOL.md gives them.
var HandlerVerbs = []*Verb{Reschedule, Cancel}

// ADD's option columns for the worker: when, for how long, which handler,
// and the caller's context.
const (
	AddOptionDue     = "due"     // absolute due time, ms since the epoch (server clock)
	AddOptionTimeout = "timeout" // ms one attempt may run
	AddOptionKind    = "kind"    // the job's kind, which a worker routes on
	AddOptionHeaders = "headers" // opaque bytes carried to the worker
)

// Domains of the job options, inclusive.
const (
	MaxDueMS      = 253_402_300_799_999 // 9999-12-31T23:59:59.999Z
	MaxTimeoutMS  = 86_400_000          // one day
	MaxKind       = 128                 // bytes
	MaxHeaders    = 8192                // bytes
	ClaimExtended = "1"                 // CLAIM's ext argument asking for the extended rows
	ClaimWaits    = "2"                 // CLAIM's ext argument asking for them with each job's wait
)

// Row fields of the job options and of a cancelled job.
const (
	FieldKind      = "kind"
	FieldTimeout   = "timeout"
	FieldHeaders   = "headers"
	FieldCancelled = "cancelled" // 1 on a dead job CANCEL ended
)

// ClaimExtendedFields are the row fields CLAIM with ext 1 reads after att,
// data and ev, and replies after the attempt (ev is not replied).
var ClaimExtendedFields = []string{FieldMax, FieldKind, FieldTimeout, FieldHeaders}

// ClaimWaitFields are the row fields CLAIM with ext 2 reads last, after
// ClaimExtendedFields, for the reply's wait: a row without state was added
// ready and neither claimed nor moved since, so it has waited since at.
var ClaimWaitFields = []string{FieldState, FieldAdded}

// ClaimExtendedReply is the length of each job's entry in CLAIM's reply
// with ext 1: id, data and attempt, ClaimExtendedFields and the lane;
// ClaimWaitsReply with ext 2, the wait after them.
const (
	ClaimExtendedReply = 8
	ClaimWaitsReply    = ClaimExtendedReply + 1
)

// MetaJobFields is the meta field ADD sets to 1 when a job of the queue
// stores a kind, timeout or headers field; CLAIM with ext 1 reads those
// fields only when it is set. It is never cleared.
const MetaJobFields = "jobfields"

// JobFieldsOn is meta jobfields' value when set.
const JobFieldsOn = "1"

// MetaRowOpts is the meta field that tells COMPLETE, COMPLETEMANY and
// CLAIM whether a row of the queue may hold a lane, parent, deps, keep, wait
// or ev field: they skip those fields when it is RowOptsOff, which ADD
// writes with a queue's first rows when none stores them, or absent (no job
// was ever added), and all but ev when it is RowOptsEvents; any other value
// has them read.
const MetaRowOpts = "rowopts"

// RowOptsOn is meta rowopts' value once a job of the queue stored one of
// those fields but ev: ADD writes it over any other value, and nothing
// clears it.
const RowOptsOn = "1"

// RowOptsEvents is meta rowopts' value on a queue whose rows may hold ev
// (job events) but were never written with lane, parent, deps, keep or
// wait: ADD writes it over RowOptsOff, or with a queue's first rows, when a
// job of the call stores ev and none stores the others.
const RowOptsEvents = "2"

// RowOptsOff is meta rowopts' value on a queue no row of which was ever
// written with those fields: ADD writes it only when the field is absent
// (no job was ever added), which reads as this value.
const RowOptsOff = "0"

// StatCancelled is the stats counter of the jobs CANCEL ended.
const StatCancelled = "cancelled"

// ErrTextCancelled is the err text CANCEL stores, and the error its
// parent and waiters are told.
const ErrTextCancelled = "cancelled"

// CompleteManyCancelled is COMPLETEMANY's outcome of a job that CANCEL
// ended (COMPLETE's EMQSTATE … cancelled).
const CompleteManyCancelled = -4

// The events of rescheduling and cancellation, with field state.
const (
	EventRescheduled = "rescheduled" // RESCHEDULE; state the new state
	EventCancelled   = "cancelled"   // CANCEL; state the state it left
)

// RESCHEDULE's replies: the job's state after the call.
const (
	RescheduledPending = StatePending
	RescheduledDelayed = StateDelayed
)
