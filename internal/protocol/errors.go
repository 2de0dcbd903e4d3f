package protocol

import "strconv"

// The closed registry of refusal texts. Every text an executor sends of its
// own is a constant or a builder here; the first word is its class. The Lua
// scripts hold the same bytes (internal/lua/lib.lua and the scripts), and a test
// re-reads them and fails when a text differs or exists on one side only.
//
// Classes:
//   - EMQWIRE: the fence (the queue's wire version) refused the call.
//   - EMQSTALE: the caller's attempt token is not the job's current attempt.
//   - EMQSTATE: the job or queue is not in a state the verb accepts.
//   - EMQLOCK: a unique key is held by another job.
//   - EMQRATE: the queue's rate limit refused a claim (carries the wait).
//   - EMQKIND: a bus key's brand is not the expected kind.
//   - ERR EMQ <verb> …: shape texts (numkeys, arity, key layout, values).
//   - ERR EMQ …, NOPERM …: host conditions (native executor only).

// Fence refusals.
const (
	// ErrWireMissing: the queue's version key does not exist.
	ErrWireMissing = "EMQWIRE wire not installed"
)

// ErrWireFound is the refusal when the version key holds another wire.
func ErrWireFound(found string) string {
	return "EMQWIRE wire " + found + " found, " + WireString + " expected"
}

// Job-state refusals.
const (
	// ErrAddIDExists: the id the sequence gave already names a row.
	ErrAddIDExists = "EMQSTATE add id exists"
	// ErrAddIDSpace: the sequence would pass MaxJobID.
	ErrAddIDSpace = "EMQSTATE add id space exhausted"
	// ErrAddDuplicateInBatch: two jobs of one batch carry the same unique key.
	ErrAddDuplicateInBatch = "EMQLOCK add duplicate in batch"
	// ErrRemoveActive: REMOVE refuses a job that a worker holds.
	ErrRemoveActive = "EMQSTATE remove job is active"
	// ErrRequeueNotDead: REQUEUE only takes dead jobs.
	ErrRequeueNotDead = "EMQSTATE requeue not dead"
	// ErrRemoveHasChildren: REMOVE without cascade refuses a parent that
	// waits for children.
	ErrRemoveHasChildren = "EMQSTATE remove has children"
	// ErrResultTooLarge: COMPLETE refuses a result over the queue's
	// result_max.
	ErrResultTooLarge = "EMQSTATE complete result too large"
	// ErrRetryNotDelayed: RETRY only takes delayed jobs.
	ErrRetryNotDelayed = "EMQSTATE retry not delayed"
)

// ErrAddDuplicate is the refusal when a unique key is held by job id.
func ErrAddDuplicate(id string) string {
	return "EMQLOCK add duplicate of " + id
}

// ErrStale is the refusal when the caller's attempt token is not the job's
// current attempt: the lease was lost and the job was claimed again, or the
// token never was the job's.
func ErrStale(verb string) string {
	return "EMQSTALE " + verb + " token mismatch"
}

// ErrNotActive is the refusal when the job is not in the active set.
func ErrNotActive(verb string) string {
	return "EMQSTATE " + verb + " not active"
}

// ErrRateLimited is the refusal of a claim over the queue's rate limit; the
// text carries how many milliseconds until a slot frees.
func ErrRateLimited(waitMS int64) string {
	return "EMQRATE claim rate limited, retry in " + strconv.FormatInt(waitMS, 10) + " ms"
}

// ErrKind is the refusal when a bus key exists with another brand.
func ErrKind(verb string) string {
	return "EMQKIND " + verb + " wrong brand"
}

// Shape texts.

// ErrNumkeys is the refusal when numkeys is a valid count but not the verb's.
func ErrNumkeys(verb string, n int) string {
	return "ERR EMQ " + verb + " numkeys must be " + strconv.Itoa(n)
}

// ErrArity is the refusal when the ARGV count is not the verb's.
func ErrArity(verb string) string {
	return "ERR EMQ " + verb + " wrong number of arguments"
}

// ErrLayout is the refusal when a declared key is not the one the queue base
// and the verb's key list give.
func ErrLayout(verb string) string {
	return "ERR EMQ " + verb + " bad key layout"
}

// ErrBadArg is the refusal when an argument value is out of its domain.
func ErrBadArg(verb, arg string) string {
	return "ERR EMQ " + verb + " bad " + arg
}

// ErrCompleteManyRepeated is COMPLETEMANY's refusal of a call that names one
// job twice (a value refusal: each job has one outcome per call).
const ErrCompleteManyRepeated = "ERR EMQ completemany repeated id"

// The numkeys texts of the server's own EVAL family, which the native
// executor repeats so both executors answer a malformed numkeys alike.
const (
	ErrNotInteger      = "ERR value is not an integer or out of range"
	ErrNumkeysNegative = "ERR Number of keys can't be negative"
	ErrNumkeysTooMany  = "ERR Number of keys can't be greater than number of args"
)

// ErrWrongType is the server's text for an operation on a key of another
// type. Both executors send it before any write.
const ErrWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

// ErrStreamExhausted is the server's XADD text for a stream whose top is
// the last possible id. A job-events call refuses with it, nothing
// written: XADD's own reply when its first entry meets that top, or, for
// a call of several entries, the top read before them leaving no id for
// all of them.
const ErrStreamExhausted = "ERR The stream has exhausted the last possible ID, unable to add more items"

// The server's own integer texts, which both executors predict before the
// first write (HINCRBY on a stored field that is not an integer, or would
// overflow), so no increment can fail after an earlier write.
const (
	ErrHashNotInteger = "ERR hash value is not an integer"
	ErrOverflow       = "ERR increment or decrement would overflow"
)

// Host texts: conditions of the native executor's host, not of the data,
// and the ACL refusal of a derived key, which both executors send.
const (
	// ErrWritePaused: the write guard found AvoidReplicaTraffic set
	// (CLIENT PAUSE WRITE, failover); nothing was written.
	ErrWritePaused = "ERR EMQ write-paused"
	// ErrHostReply: a host reply of a type the adapter does not accept, or
	// one that contradicts a prediction made before the guard.
	ErrHostReply = "ERR EMQ unsupported host reply"
	// ErrInternal: a Go panic inside a handler, turned into a reply.
	ErrInternal = "ERR EMQ internal error"
	// ErrNoPerm: the caller's ACL denies a key derived from the base (the
	// server's own text for a declared key).
	ErrNoPerm = "NOPERM No permissions to access a key"
)

// ErrNotAfterTop is the bus refusal of an entry id that is not after the
// stream's top (its last generated id) and the batch's previous entry, or of
// a PUBLISH the stream has no id left for: no entry of the call is written.
func ErrNotAfterTop(verb string) string {
	return "EMQSTATE " + verb + " id not after the stream top"
}

// The TRA family's own texts (native only; docs/PROTOCOL.md, "The TRA
// family"). TRA commands have no numkeys, no fence and no EMQ class.
const (
	// ErrTRAOffset: the offset is not a decimal in 0..MaxBitOffset.
	ErrTRAOffset = "ERR TRA bit offset is not an integer or out of range"
	// ErrTRABit: the value is not 0 or 1.
	ErrTRABit = "ERR TRA bit is not 0 or 1"
	// ErrTRAWrongType: the key holds another type than a string.
	ErrTRAWrongType = "ERR TRA wrong type"
)

// ErrCancelled is the refusal of EXTEND, COMPLETE or FAIL with the token of
// a job that CANCEL ended: the worker stops its handler.
func ErrCancelled(verb string) string {
	return "EMQSTATE " + verb + " cancelled"
}

// Rescheduling and cancellation refusals.
const (
	// ErrCancelState: CANCEL takes pending, delayed and active jobs only.
	ErrCancelState = "EMQSTATE cancel not cancellable"
	// ErrRescheduleState: RESCHEDULE takes pending and delayed jobs only.
	ErrRescheduleState = "EMQSTATE reschedule not pending or delayed"
)

// Schedule refusals (docs/PROTOCOL.md, "SCHEDULE.FIRE").
const (
	// ErrScheduleChanged: the schedule is gone, paused, or its revision or
	// last fired time is not the one the occurrences were computed from
	// (another worker fired them first).
	ErrScheduleChanged = "EMQSTALE schedule.fire schedule changed"
	// ErrScheduleNotDue: the call's upto is after the server's time.
	ErrScheduleNotDue = "EMQSTATE schedule.fire occurrence not due"
	// ErrScheduleOutside: an occurrence is before start or after end, the
	// cap would be passed, or a jitter is above the schedule's.
	ErrScheduleOutside = "EMQSTATE schedule.fire occurrence outside the schedule"
	// ErrScheduleBroken: the stored definition does not decode, or a value
	// of it is outside SCHEDULE.SET's domains.
	ErrScheduleBroken = "EMQSTATE schedule.fire broken definition"
)
