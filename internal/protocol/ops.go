package protocol

// The operations verbs (docs/PROTOCOL.md, "Operations"): an operator's
// paged reads of a queue's jobs by state, and the bulk admin verbs, each
// bounded per call and continued with a cursor.
var (
	// Jobs pages the jobs of one state (its set, or a lane's set for
	// pending) in set order, oldest or newest first.
	Jobs = verb("jobs", Reads, SuffixVersion)
	// RequeueDead is REQUEUE for the dead jobs a filter takes, at most
	// limit examined per call.
	RequeueDead = verb("requeuedead", Keeps, SuffixVersion, SuffixStats, SuffixPending, SuffixDead, SuffixSignal)
	// RemoveDead is REMOVE for the dead jobs a filter takes, at most limit
	// examined per call.
	RemoveDead = verb("removedead", Keeps, SuffixVersion, SuffixStats, SuffixDead)
	// PromoteAll moves delayed jobs to pending whether they are due or not,
	// at most limit per call.
	PromoteAll = verb("promoteall", Keeps, SuffixVersion, SuffixPending, SuffixDelayed, SuffixSignal)
	// Retry moves one delayed job to pending now.
	Retry = verb("retry", Keeps, SuffixVersion, SuffixPending, SuffixDelayed, SuffixSignal)
)

// OpsVerbs lists the operations verbs in the order docs/PROTOCOL.md gives
// them.
var OpsVerbs = []*Verb{Jobs, RequeueDead, RemoveDead, PromoteAll, Retry}

// Value domains of the operations verbs, inclusive.
const (
	// MaxScore bounds a cursor's score and a filter's times: every score
	// the verbs write (ms times, pending scores) is below 2^53.
	MaxScore = 1<<53 - 1
	// MaxClip bounds JOBS' clip: the bytes of an error text, a progress
	// value and a payload preview a row carries.
	MaxClip = 1024
	// MaxPreviewData is the largest payload JOBS previews: a row of a
	// larger payload carries its size and no preview, so a page never
	// reads whole large payloads.
	MaxPreviewData = 16384
)

// JobsStates are the states JOBS takes, each naming its set.
var JobsStates = []string{StatePending, StateDelayed, StateActive, StateDead, StateCompleted, StateWaiting}

// JobsRowFields name the entries of one JOBS row, in reply order.
var JobsRowFields = []string{
	"id", "score", FieldState, FieldAttempts, FieldMax, FieldPriority, FieldLane, FieldParent,
	FieldDeps, FieldAdded, FieldError, "err_size", FieldProgress, "data_size", "preview", FieldKind,
}
