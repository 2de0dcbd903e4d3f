package protocol

// Verb describes one command of the protocol: its name, its declared keys and
// what it does to the dataset. docs/PROTOCOL.md gives each verb's arguments,
// reply, refusals, reads and writes.
type Verb struct {
	// Name is the verb in lower case, as refusal texts spell it ("claim").
	Name string
	// Command is the native command name ("EMQ.CLAIM").
	Command string
	// Script is the Lua script's file name in lua/ ("claim.lua").
	Script string
	// Keys are the suffixes of the declared keys after KEYS[1], the base.
	Keys []string
	// Write reports whether the verb can write.
	Write bool
	// Mode is what the verb can do to the dataset's memory, which decides
	// whether it runs when the server is at maxmemory.
	Mode Mode
	// Named, when set, is the prefix of the verb's last declared key: that
	// key is the base, Named and a bus name (ValidBusName), and the last of
	// Keys is Named followed by DefaultBusName.
	Named string
}

// Mode is what a verb can do to the dataset's memory. At maxmemory
// (noeviction) a verb that can grow the dataset is refused by the server
// before it runs, with the server's own OOM text, on both executors (the
// native command is flagged deny-oom; the Lua script's shebang has no
// allow-oom flag). Every other verb runs, so a full queue can still drain:
// workers claim, complete, fail and recover.
type Mode int

const (
	// Reads never writes (native flag readonly; Lua no-writes, run with
	// EVALSHA_RO, so read-only users and paused servers can run it).
	Reads Mode = iota + 1
	// Grows can add to the dataset without a bound per job (new jobs, log
	// lines, progress values): refused at maxmemory.
	Grows
	// Keeps moves, shrinks or overwrites bounded fields of existing jobs,
	// or writes a constant few bytes per queue: runs at maxmemory.
	Keeps
)

// String names the mode as docs/PROTOCOL.md does.
func (m Mode) String() string {
	switch m {
	case Reads:
		return "reads"
	case Grows:
		return "grows"
	case Keeps:
		return "keeps"
	}
	return "mode?"
}

// NumKeys is the exact numkeys of the verb: the base plus its suffixes.
func (v *Verb) NumKeys() int { return 1 + len(v.Keys) }

// KeyNames builds the verb's declared keys for queue keys k.
func (v *Verb) KeyNames(k Keys) []string {
	out := make([]string, 0, v.NumKeys())
	out = append(out, k.Base)
	for _, s := range v.Keys {
		out = append(out, k.Base+s)
	}
	return out
}

func verb(name string, mode Mode, keys ...string) *Verb {
	upper := make([]byte, len(name))
	for i := range len(name) {
		c := name[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		upper[i] = c
	}
	return &Verb{Name: name, Command: "EMQ." + string(upper), Script: name + ".lua", Keys: keys, Write: mode != Reads, Mode: mode}
}

// The job-core verbs.
var (
	// Install writes one constant key per queue: it runs at maxmemory, so a
	// worker can still open a full queue to drain it.
	Install  = verb("install", Keeps, SuffixVersion)
	Add      = verb("add", Grows, SuffixVersion, SuffixMeta, SuffixStats, SuffixPending, SuffixDelayed, SuffixSignal)
	Claim    = verb("claim", Keeps, SuffixVersion, SuffixMeta, SuffixPending, SuffixActive)
	Extend   = verb("extend", Keeps, SuffixVersion, SuffixActive)
	Complete = verb("complete", Keeps, SuffixVersion, SuffixStats, SuffixActive)
	// CompleteMany finishes up to MaxCount jobs in one call, each with its
	// own outcome; the worker's way to report completions in bulk.
	CompleteMany = verb("completemany", Keeps, SuffixVersion, SuffixStats, SuffixActive)
	Fail         = verb("fail", Keeps, SuffixVersion, SuffixStats, SuffixActive, SuffixDelayed, SuffixDead)
	Recover      = verb("recover", Keeps, SuffixVersion, SuffixStats, SuffixPending, SuffixActive, SuffixDead, SuffixSignal)
	Promote      = verb("promote", Keeps, SuffixVersion, SuffixPending, SuffixDelayed, SuffixSignal)
	Pause        = verb("pause", Keeps, SuffixVersion, SuffixMeta)
	Resume       = verb("resume", Keeps, SuffixVersion, SuffixMeta, SuffixPending, SuffixSignal)
	Remove       = verb("remove", Keeps, SuffixVersion, SuffixStats, SuffixPending, SuffixDelayed, SuffixActive, SuffixDead)
	Requeue      = verb("requeue", Keeps, SuffixVersion, SuffixStats, SuffixPending, SuffixDead, SuffixSignal)
	Log          = verb("log", Grows, SuffixVersion)
	Progress     = verb("progress", Grows, SuffixVersion)
	Stats        = verb("stats", Reads, SuffixVersion, SuffixMeta, SuffixStats, SuffixPending, SuffixDelayed, SuffixActive, SuffixDead)
	Inspect      = verb("inspect", Reads, SuffixVersion)
)

// The lane and rate verbs (docs/PROTOCOL.md, "Lanes" and "Rate limit"). The
// lane keys are derived from the base, so the lane verbs declare only the
// fence.
var (
	// LaneCap and LanePause can store a field for any lane name: they grow.
	LaneCap    = verb("lanecap", Grows, SuffixVersion)
	LanePause  = verb("lanepause", Grows, SuffixVersion)
	LaneResume = verb("laneresume", Keeps, SuffixVersion)
	Lane       = verb("lane", Reads, SuffixVersion)
	Lanes      = verb("lanes", Reads, SuffixVersion)
	Rate       = verb("rate", Keeps, SuffixVersion, SuffixMeta)
)

// The retention and flow verbs (docs/PROTOCOL.md, "Retention", "Flows").
var (
	Retain   = verb("retain", Keeps, SuffixVersion, SuffixMeta)
	Trim     = verb("trim", Keeps, SuffixVersion, SuffixMeta, SuffixStats, SuffixDead)
	Children = verb("children", Reads, SuffixVersion)
)

// COMPLETEMANY's per-job outcomes: each job's integer in its reply
// (docs/PROTOCOL.md, "COMPLETEMANY"). Only a completed job is written.
const (
	CompleteManyDone      = 1  // completed
	CompleteManyGone      = 0  // the row is gone (COMPLETE's reply 0)
	CompleteManyStale     = -1 // the token is not att (COMPLETE's EMQSTALE)
	CompleteManyNotActive = -2 // not in active (COMPLETE's EMQSTATE … not active)
	CompleteManyTooLarge  = -3 // the result is over result_max (COMPLETE's EMQSTATE … result too large)
)

// JobCore lists the keyed job-core verbs in the order docs/PROTOCOL.md gives
// them. EMQ.VERSION takes no keys and is not listed.
var JobCore = []*Verb{
	Install, Add, Claim, Extend, Complete, CompleteMany, Fail, Recover, Promote,
	Pause, Resume, Remove, Requeue, Log, Progress, Stats, Inspect,
}

// LaneVerbs lists the lane and rate verbs in the order docs/PROTOCOL.md gives
// them.
var LaneVerbs = []*Verb{LaneCap, LanePause, LaneResume, Lane, Lanes, Rate}

// FlowVerbs lists the retention and flow verbs in the order
// docs/PROTOCOL.md gives them.
var FlowVerbs = []*Verb{Retain, Trim, Children}

// All lists every keyed verb both executors run: the job core, the lane and
// rate verbs, the retention and flow verbs, the bus verbs, the job-event
// verbs, the operations verbs, the rescheduling and cancellation verbs, then
// the schedule verbs.
var All = append(append(append(append(append(append(append(append([]*Verb(nil), JobCore...), LaneVerbs...), FlowVerbs...), BusVerbs...), EventVerbs...), OpsVerbs...), HandlerVerbs...),
	ScheduleVerbs...)

// VersionCommand is the native executor's probe: no keys, replies Wire.
const VersionCommand = "EMQ.VERSION"

// Value domains, inclusive. An argument outside its domain, or not spelled
// as a canonical non-negative decimal, is refused with ErrBadArg.
const (
	MaxPriority     = 1000
	MaxDelayMS      = 315_360_000_000 // ten years
	MaxAttempts     = 1_000_000
	MaxBackoffMS    = 86_400_000  // one day
	MaxRetryDelay   = 604_800_000 // an exponential backoff is capped at a week
	MaxLeaseMS      = 86_400_000
	MaxCount        = 1000 // jobs per ADD batch, CLAIM, RECOVER or PROMOTE
	MaxLogCap       = 10_000
	MaxUniqueKey    = 512
	MaxText         = 65_536 // error text, log line, progress value
	MaxDecimalSize  = 15     // digits of any integer argument
	MaxJobID        = PriorityStride - 1
	MaxLaneName     = 128
	MaxLaneCap      = 1_000_000
	MaxRateMax      = 1_000_000
	MaxRateWindow   = 86_400_000 // one day
	MaxAddOptions   = 8          // option columns of one ADD
	MaxResult       = 1 << 20    // a result's hard bound, bytes
	DefaultResult   = 262_144    // result_max when a queue sets none
	MaxFlowDepth    = 16         // a root and 15 levels of children
	MaxWaitMS       = 86_400_000 // how long a waited job's outcome is kept
	MaxKeepCount    = 100_000_000
	DefaultKeepDead = 100_000 // keep_dead_max when a queue sets none
	// MaxBlockMS bounds CLAIM's block_ms, as the lease is bounded
	MaxBlockMS = 86_400_000
)

// Child failure policies, as ADD's onfail column takes them.
const (
	OnFailFail     = "fail"     // the parent dies once its children finished (the default)
	OnFailIgnore   = "ignore"   // the parent goes on; nothing recorded
	OnFailContinue = "continue" // the parent goes on; the error is recorded for it
)

// ADD's other option columns (beside AddOptionLane).
const (
	AddOptionParent = "parent" // the 1-based index, in the call, of the job's parent
	AddOptionOnFail = "onfail" // the child's failure policy
	AddOptionWait   = "wait"   // ms the job's outcome is kept for waiters
)

// Backoff kinds as ADD takes them and the row's bo field stores them.
const (
	BackoffFixed       = "fixed"
	BackoffExponential = "exponential"
)

// Job states as the row's state field stores them.
const (
	StatePending   = "pending"
	StateDelayed   = "delayed"
	StateActive    = "active"
	StateDead      = "dead"
	StateWaiting   = "waiting"   // a parent waiting for its children
	StateCompleted = "completed" // a retained completed job
)

// Row fields of a job hash.
const (
	FieldData      = "data"
	FieldState     = "state"
	FieldAttempts  = "att"
	FieldMax       = "max"
	FieldPriority  = "prio"
	FieldBackoff   = "bo"
	FieldAdded     = "at"
	FieldError     = "err"
	FieldProgress  = "prog"
	FieldUnique    = "uniq"
	FieldLane      = "lane"
	FieldKeep      = "keep"   // 1: retained when it completes
	FieldParent    = "parent" // a child's parent id
	FieldOnFail    = "onfail" // a child's policy, when not fail
	FieldDeps      = "deps"   // a parent's unfinished children
	FieldChildFail = "cfail"  // a parent's first child with policy fail that died
	FieldWait      = "wait"   // ms its outcome is kept for waiters
	FieldResult    = "res"    // a retained completed job's result
	FieldEvents    = "ev"     // the events bound of a job added while job events were on
)

// The values ADD leaves out of a row, and every reader reads for the field
// when it is absent from a present row (att present): a plain job's row
// holds data att at and nothing it would hold at the default.
const (
	DefaultState    = StatePending
	DefaultMax      = "3"
	DefaultPriority = "0"
	DefaultBackoff  = BackoffExponential + ":1000"
)

// InspectFields is the order in which INSPECT replies a row's fields.
var InspectFields = []string{
	FieldState, FieldData, FieldAttempts, FieldMax, FieldPriority,
	FieldBackoff, FieldAdded, FieldError, FieldProgress, FieldUnique, FieldLane,
	FieldKeep, FieldParent, FieldOnFail, FieldDeps, FieldChildFail, FieldWait, FieldResult,
	FieldKind, FieldTimeout, FieldHeaders, FieldCancelled,
	FieldSchedule, FieldScheduledAt,
}

// Meta fields.
const (
	MetaSeq         = "seq"
	MetaPaused      = "paused"
	MetaTurn        = "turn"     // the last turn CLAIM gave
	MetaPendingTurn = "pturn"    // the turn of the jobs without a lane
	MetaLaneWait    = "lanewait" // the jobs waiting in lanes
	MetaRateMax     = "rate_max"
	MetaRateWindow  = "rate_window"
	MetaKeepDone    = "keep_done"
	MetaKeepDoneMax = "keep_done_max"
	MetaKeepDead    = "keep_dead"
	MetaKeepDeadMax = "keep_dead_max"
	MetaResultMax   = "result_max"
)

// MetaLaneSets is meta's count of the lanes with a setting (a cap or a
// pause), which LANECAP, LANEPAUSE and LANERESUME keep: at 0 CLAIM reads
// only the lanes' active counts (docs/PROTOCOL.md, "Lane keys").
const MetaLaneSets = "lanesets"

// StatsExtras are the integers STATS replies after the counters, in order.
var StatsExtras = []string{"lanes", "lane_waiting", "rate_max", "rate_window", "waiting", "retained"}

// StatsCounters are the stats hash fields, in the order STATS replies them.
var StatsCounters = []string{
	"added", "completed", "failed", "retried", "dead", "recovered", "removed", "requeued", "trimmed",
	"cancelled",
}

// FailRetry and FailDead are FAIL's replies when a job was retried or
// dead-lettered.
const (
	FailRetry = "retry"
	FailDead  = "dead"
)

// LeaseExpired is the err text RECOVER stores on a job whose last attempt's
// lease expired.
const LeaseExpired = "lease expired"

// AddArgsPerJob is the number of fixed ARGV entries per job in ADD; each job
// then has one value per option column the call names.
const AddArgsPerJob = 8

// AddOptionLane is ADD's option column of the job's lane (empty: none).
const AddOptionLane = "lane"
