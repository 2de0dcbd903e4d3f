package protocol

// The bus verbs (docs/PROTOCOL.md, "Bus verbs"): streams and counters under
// the queue's base, in the queue's slot. APPEND and FAILURES.INCR name their
// key: its last declared key is the base, a prefix (Verb.Named) and a bus
// name (ValidBusName).
var (
	// Append writes a batch of stream entries with explicit ids: all of
	// them or none.
	Append = named(verb("append", Grows, SuffixVersion, SuffixBus+DefaultBusName), SuffixBus)
	// Publish appends one branded event to the queue's events stream.
	Publish = verb("publish", Grows, SuffixVersion, SuffixEvents)
	// FailuresIncr counts one failure of a downstream in a window of ttl_ms.
	FailuresIncr = named(verb("failures.incr", Grows, SuffixVersion, SuffixFailuresCount+DefaultBusName), SuffixFailuresCount)
)

// BusVerbs lists the bus verbs in the order docs/PROTOCOL.md gives them.
var BusVerbs = []*Verb{Append, Publish, FailuresIncr}

// Events turns a queue's job events on (meta events_max, the events
// stream's approximate MAXLEN) or off (0). docs/PROTOCOL.md, "Job events".
var Events = verb("events", Keeps, SuffixVersion, SuffixMeta)

// EventVerbs lists the job-event verbs in the order docs/PROTOCOL.md gives
// them.
var EventVerbs = []*Verb{Events}

// MetaEventsMax is the meta field EVENTS sets: the events stream's bound,
// absent (or 0) when the queue publishes no job events.
const MetaEventsMax = "events_max"

// MaxEventsLen bounds EVENTS' max_len, inclusive.
const MaxEventsLen = 1_000_000

// A call's job events share stream entries, in order, MaxEntryEvents and
// MaxEntryArgs of their arguments at most each (docs/PROTOCOL.md, "Job
// events"): brand emq, then, when the entry holds two or more events, the
// pair n <count>, then each event's event <name> id <id> [field value]
// [kind <kind>]. EventCountField names that pair: a PUBLISH entry has event
// second, so it never reads as one of several. MaxEntryEvents is MaxCount,
// and an event of a job without a kind has at most 6 arguments, so a call
// of any count of such jobs (ADD, CLAIM, PROMOTE, RECOVER, COMPLETEMANY
// without releases) writes one entry; a kind adds 2, and MaxEntryArgs
// keeps an entry's XADD under the Lua executor's bound on one call's
// arguments (unpack's 8000 stack slots).
const (
	EventCountField = "n"
	MaxEntryEvents  = MaxCount
	MaxEntryArgs    = 6 * MaxEntryEvents
)

// The job events, by the name their entries carry in the event field
// (docs/PROTOCOL.md, "Job events").
const (
	EventAdded     = "added"     // ADD; field state
	EventClaimed   = "claimed"   // CLAIM; field att
	EventCompleted = "completed" // COMPLETE, COMPLETEMANY
	EventRetrying  = "retrying"  // FAIL of a job retried; field error
	EventDead      = "dead"      // FAIL, RECOVER, a parent whose child failed it; field error
	EventRecovered = "recovered" // RECOVER of a job requeued
	EventPromoted  = "promoted"  // PROMOTE
	EventRemoved   = "removed"   // REMOVE, per job of the removal
	EventRequeued  = "requeued"  // REQUEUE
	EventProgress  = "progress"  // PROGRESS; field value
	EventReleased  = "released"  // a parent whose children finished, to pending
)

// Event fields after brand, event and id, as the entries name them.
const (
	EventStateField = "state" // added: pending, delayed or waiting
	EventAttField   = "att"   // claimed: the attempt token
	EventErrorField = "error" // retrying, dead: the error text
	EventValueField = "value" // progress: the value
	EventKindField  = "kind"  // every event of a job with a kind: its row's kind
)

// The bus keys: prefixes followed by a bus name, and the events stream.
const (
	SuffixBus           = "bus:"      // stream per bus name: emq:{q}:bus:<name> (APPEND)
	SuffixEvents        = "events"    // stream: the queue's branded events (PUBLISH)
	SuffixFailuresCount = "failures:" // string per downstream, a counter with a TTL: emq:{q}:failures:<name>
)

// DefaultBusName is the bus name Verb.KeyNames builds for a named verb.
const DefaultBusName = "main"

// MaxBusName bounds a bus name, in bytes.
const MaxBusName = 128

// Bus value domains, inclusive.
const (
	MaxEntryFields = 1000            // field/value pairs of one APPEND entry or one PUBLISH
	MaxEventName   = 128             // bytes of a PUBLISH event name
	MaxStreamPart  = 999999999999999 // each half of an APPEND id, ms-seq
	MaxFailuresTTL = 315_360_000_000 // ten years, ms
)

// The fields PUBLISH writes first in every event entry, in this order:
// brand emq event <event> id <id>. The brand check reads the first entry's
// first pair.
const (
	EventBrandField = "brand"
	EventBrand      = "emq"
	EventNameField  = "event"
	EventIDField    = "id"
)

// ValidBusName reports whether name can be a bus name: 1..MaxBusName bytes
// of letters, digits and - _ . : / @. No brace, space or control byte, so
// the name never moves the key's hash tag and prints as it is.
func ValidBusName(name []byte) bool {
	if len(name) == 0 || len(name) > MaxBusName {
		return false
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':', c == '/', c == '@':
		default:
			return false
		}
	}
	return true
}

// NamedKey is the key of bus name under queue keys k for named verb v
// (emq:{q}:bus:<name>, emq:{q}:failures:<name>).
func (v *Verb) NamedKey(k Keys, name string) string { return k.Base + v.Named + name }

func named(v *Verb, prefix string) *Verb {
	v.Named = prefix
	return v
}

// The TRA family (native only): one bit per offset of a string key.
const (
	// TRASetBit is TRA.SETBIT key offset value: the previous bit.
	TRASetBit = "TRA.SETBIT"
	// TRAGetBit is TRA.GETBIT key offset: the bit.
	TRAGetBit = "TRA.GETBIT"
	// MaxBitOffset is the largest bit offset, 2^32 − 1 (a 512 MiB string).
	MaxBitOffset = 1<<32 - 1
)

// SuffixOnce prefixes a "seen" bitmap of the client's Once: a string per
// name, emq:{q}:once:<name>, one bit per job id, written with TRA.SETBIT.
const SuffixOnce = "once:"
