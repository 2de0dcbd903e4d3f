package trafikey

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Sentinel errors. A refusal from the server is returned as an *Error that
// wraps the sentinel of its class, so callers test with errors.Is and
// never compare texts.
var (
	// ErrLeaseLost reports a job its caller no longer holds: its lease
	// expired and it was recovered (then it is an ErrState too), or it was
	// claimed again since, so the caller's attempt token is stale (class
	// EMQSTALE). It is also the cause of a handler's context cancellation
	// when the worker could not extend the job's lease for that reason.
	ErrLeaseLost = errors.New("trafikey: lease lost")
	// ErrState reports a job or queue in a state the verb does not accept
	// (class EMQSTATE), e.g. removing a job a worker holds.
	ErrState = errors.New("trafikey: job not in an accepted state")
	// ErrDuplicate reports a unique key held by another job (class
	// EMQLOCK). errors.As with an *Error gives the holder's id (JobID).
	ErrDuplicate = errors.New("trafikey: duplicate unique key")
	// ErrWire reports a queue whose dataset is not stamped with this
	// client's wire version (class EMQWIRE): not installed, or written by
	// another version of trafikey.
	ErrWire = errors.New("trafikey: wire version mismatch")
	// ErrWritePaused reports a write refused while the server avoids
	// replica traffic (CLIENT PAUSE WRITE, failover); nothing was written
	// and the call can be retried.
	ErrWritePaused = errors.New("trafikey: server writes paused")
	// ErrNotFound reports a job whose row does not exist: it completed, was
	// removed (a waited job removed before it finished, too), or never
	// existed. The server answers such calls with 0, not
	// with an error reply, so this error carries no server text.
	ErrNotFound = errors.New("trafikey: job not found")
	// ErrResultTooLarge reports a completion whose result is over the
	// queue's bound (RetentionPolicy.ResultMax); the job was not completed.
	// It is an ErrState too.
	ErrResultTooLarge = errors.New("trafikey: result too large")
	// ErrJobDead reports a waited job that died (AddAndWait, Queue.Wait);
	// errors.As with an *Error gives its last error text.
	ErrJobDead = errors.New("trafikey: job died")
	// ErrRateLimited reports a claim over the queue's rate limit (class
	// EMQRATE); nothing was claimed. errors.As with an *Error gives the
	// wait until the window ends (RetryAfter).
	ErrRateLimited = errors.New("trafikey: claim rate limited")
	// ErrCancelled reports a job that Queue.Cancel ended while it was
	// claimed: its worker's heartbeat, completion or failure is refused
	// (EMQSTATE <verb> cancelled). It is an ErrState too.
	ErrCancelled = errors.New("trafikey: job cancelled")
	// ErrInvalid reports an argument the client refuses before sending it,
	// e.g. a priority out of range. The server checks the same domains.
	ErrInvalid = errors.New("trafikey: invalid argument")
)

// Error is the detail of a call the server refused, and of a waited job
// that died. errors.As with an *Error gives its fields; errors.Is with the
// sentinels above tells the cases apart, so callers never compare texts. A
// refusal wraps the sentinel of its text's class (ErrLeaseLost, ErrState,
// ErrDuplicate, ...) and the client's *valkey.ValkeyError.
type Error struct {
	// Verb is the protocol verb, e.g. "complete": the one the server
	// refused, or "wait" for a waited job that died.
	Verb string
	// Text is the server's error text, byte for byte, e.g. "EMQSTALE
	// complete token mismatch"; for a job that died, the text of its last
	// error ("lease expired", "child <id> failed", or the handler's).
	Text string
	// JobID is the job the error is about, when there is one: the holder of
	// the unique key (ErrDuplicate; empty when the duplicate was inside one
	// batch), or the job that died (ErrJobDead).
	JobID string
	// RetryAfter is how long until the oldest claims of the queue's rate
	// window leave it and claims are let through again (ErrRateLimited).
	RetryAfter time.Duration

	msg     string
	wrapped []error
}

// Error describes the refusal: the verb and the server's text, or the job
// that died and why.
func (e *Error) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return "trafikey: " + e.Verb + ": " + e.Text
}

// Unwrap returns the sentinels the error matches and the underlying client
// error.
func (e *Error) Unwrap() []error { return e.wrapped }

// rateLimited reports whether err is a claim over the rate limit, and the
// wait the server gave.
func rateLimited(err error) (time.Duration, bool) {
	var e *Error
	if errors.Is(err, ErrRateLimited) && errors.As(err, &e) {
		return e.RetryAfter, true
	}
	return 0, false
}

// jobDead is the error of a waited job id that died of text.
func jobDead(id, text string) *Error {
	return &Error{Verb: "wait", Text: text, JobID: id, msg: "trafikey: job " + id + " died: " + text, wrapped: []error{ErrJobDead}}
}

// The class words and fixed shapes of the registry, read from the protocol
// package's builders so that no refusal text is spelled twice. These are
// computed once and never written.
var (
	classStale = firstWord(protocol.ErrStale("verb"))
	classState = firstWord(protocol.ErrNotActive("verb"))
	classLock  = firstWord(protocol.ErrAddDuplicateInBatch)
	classWire  = firstWord(protocol.ErrWireMissing)
	classRate  = firstWord(protocol.ErrRateLimited(0))

	rateWait = strings.Split(protocol.ErrRateLimited(0), "0") // the text around the wait

	duplicateOfPrefix = protocol.ErrAddDuplicate("")
)

// errNotRun is wrapped by a refusal that the server gave before running
// the call, for a state that passes by itself: nothing was written, and the
// same call succeeds once the state is over, so every verb can be sent
// again (Queue.call does, within its ctx).
var errNotRun = errors.New("trafikey: not run by the server, try again")

// errRedirected is wrapped by a MOVED or ASK refusal: not run either, but
// only a cluster client, which refreshes its slot map on it, reaches
// another node by sending the call again.
var errRedirected = errors.New("trafikey: not run, redirected to another node")

// notRunClass reports whether an error reply of class c refuses a call
// the server did not start, for a state that passes:
//
//   - TRYAGAIN: a multi-key call on a slot being migrated, whose keys are
//     not all on one side (every verb names the queue's base key, which
//     never exists, so every verb meets it for the whole migration);
//   - LOADING: the server is loading its dataset after a restart;
//   - CLUSTERDOWN: the slot has no serving node, or the cluster is failing;
//   - MASTERDOWN: a replica that lost its primary and serves no stale data.
//
// READONLY is not one: a write sent to a replica meets it again on the
// same connection until someone changes the topology (Sentinel kills the
// clients of a primary it demotes, which the client sees as a transport
// error and retries), so it is reported as the deployment fault it is.
func notRunClass(c string) bool {
	switch c {
	case "TRYAGAIN", "LOADING", "CLUSTERDOWN", "MASTERDOWN":
		return true
	}
	return false
}

// redirectClass reports whether an error reply of class c sends the call
// to another node: MOVED (the slot moved) or ASK (it is migrating and the
// keys are on the target).
func redirectClass(c string) bool { return c == "MOVED" || c == "ASK" }

// isClass reports whether err is a server refusal of class word class.
func isClass(err error, class string) bool {
	var se *Error
	return errors.As(err, &se) && firstWord(se.Text) == class
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return w
}

// serverError builds the typed error for an error reply text of verb v. The
// class is the text's first word; within a class, the registry's builders
// tell the details apart.
func serverError(v *protocol.Verb, text string, cause error) *Error {
	e := &Error{Verb: v.Name, Text: text}
	switch firstWord(text) {
	case classStale:
		e.wrapped = append(e.wrapped, ErrLeaseLost)
	case classState:
		if text == protocol.ErrNotActive(v.Name) {
			e.wrapped = append(e.wrapped, ErrLeaseLost)
		}
		if text == protocol.ErrCancelled(v.Name) {
			e.wrapped = append(e.wrapped, ErrCancelled)
		}
		if text == protocol.ErrResultTooLarge {
			e.wrapped = append(e.wrapped, ErrResultTooLarge)
		}
		e.wrapped = append(e.wrapped, ErrState)
	case classLock:
		if id, ok := strings.CutPrefix(text, duplicateOfPrefix); ok {
			e.JobID = id
		}
		e.wrapped = append(e.wrapped, ErrDuplicate)
	case classWire:
		e.wrapped = append(e.wrapped, ErrWire)
	case classRate:
		if ms, ok := strings.CutPrefix(text, rateWait[0]); ok {
			if ms, ok = strings.CutSuffix(ms, rateWait[1]); ok {
				n, _ := strconv.ParseInt(ms, 10, 64)
				e.RetryAfter = time.Duration(n) * time.Millisecond
			}
		}
		e.wrapped = append(e.wrapped, ErrRateLimited)
	default:
		switch c := firstWord(text); {
		case text == protocol.ErrWritePaused:
			e.wrapped = append(e.wrapped, ErrWritePaused)
		case notRunClass(c):
			e.wrapped = append(e.wrapped, errNotRun)
		case redirectClass(c):
			e.wrapped = append(e.wrapped, errRedirected)
		}
	}
	if cause != nil {
		e.wrapped = append(e.wrapped, cause)
	}
	return e
}

// errorText returns the exact text of an error reply. valkey-go drops a
// leading "ERR " from the error it returns, so the text is read from the
// message itself.
func errorText(msg valkey.ValkeyMessage, err error) string {
	if text, _ := msg.ToString(); text != "" {
		return text
	}
	return err.Error()
}
