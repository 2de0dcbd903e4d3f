package trafikey

import (
	"net/url"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Defaults of a job added without options.
const (
	// defaultMaxAttempts is how many times a job may be claimed before a
	// failure dead-letters it. Three attempts absorb a transient fault
	// without letting a poisoned job keep a worker busy for long.
	defaultMaxAttempts = 3
	// defaultBackoffBase is the base of the default exponential backoff:
	// retries wait 1 s, 2 s, 4 s, ...
	defaultBackoffBase = time.Second
)

// BackoffKind is how the wait before a retry grows with the attempts.
type BackoffKind string

// Backoff kinds.
const (
	// BackoffFixed waits the base before every retry.
	BackoffFixed BackoffKind = protocol.BackoffFixed
	// BackoffExponential waits base × 2^(attempt−1), at most a week.
	BackoffExponential BackoffKind = protocol.BackoffExponential
)

// JobOptions configure one job: for Add and AddAndWait, and as the Options
// of a JobSpec (AddBatch, AddFlow) or of a Schedule, which stores them. The
// zero value is a job with every default; a nil *JobOptions is the same.
// Add checks them before any I/O: a value out of its range is an error
// matching ErrInvalid.
type JobOptions struct {
	// Priority is 0..1000; higher runs first, equal priorities run in the
	// order they were added.
	Priority int
	// Delay makes the job wait this long, from the server's now, before it
	// can be claimed (rounded up to a millisecond, at most ten years).
	// Workers move due jobs to pending on their promote timer
	// (WorkerOptions.PromoteEvery). A job with children, or a schedule's,
	// takes none.
	Delay time.Duration
	// MaxAttempts is how many claims the job gets, 1..1000000 (0: 3, which
	// absorbs a transient fault without letting a poisoned job keep a
	// worker busy for long; raise it for jobs that call flaky services); a
	// failure that leaves no attempt dead-letters it.
	MaxAttempts int
	// Backoff is how the wait before a retry grows (empty:
	// BackoffExponential), from BackoffBase (0..24 h, whole milliseconds;
	// 0 with an empty Backoff is 1 s: retries wait 1 s, 2 s, 4 s, ...).
	Backoff     BackoffKind
	BackoffBase time.Duration
	// UniqueKey (1..512 bytes) makes the job hold the key for UniqueTTL:
	// while the key is held, adding another job with it is refused with a
	// ErrDuplicate, whose *Error names the holder (JobID). The key is released when the job
	// completes or is removed, or when the TTL passes, whichever comes
	// first. A UniqueTTL without a key is refused.
	UniqueKey string
	UniqueTTL time.Duration
	// Lane puts the job in a lane (1..128 bytes, any bytes; empty: none): a
	// tenant, a customer, a downstream host. Workers take the lanes with
	// waiting jobs, and the jobs without a lane, in round-robin turns, so
	// one lane's backlog does not hold up another's; Queue.Lane caps and
	// pauses a lane.
	Lane string
	// KeepOutcome keeps the job's outcome (its result, or its error when it
	// dies) this long (1ms..24h) after it finishes, for Queue.Wait to read.
	// AddAndWait sets it itself.
	KeepOutcome time.Duration
	// Timeout bounds each attempt of the job (1ms..24h; 0: the worker's
	// WorkerOptions.Timeout): at the deadline its handler's context ends
	// and the attempt fails with an error matching ErrTimeout.
	Timeout time.Duration
	// Kind is the job's kind (up to 128 bytes), which a Mux routes on and
	// Job.Kind, Inspect and the dashboard show.
	Kind string
	// Headers travel with the job to its handler (Job.Headers): trace
	// context (the trafikeyotel module sets it), a tenant, a request id.
	// Encoded (URL query encoding), they take at most 8 KiB.
	Headers map[string]string
}

type addOptions struct {
	priority    int
	delay       time.Duration
	maxAttempts int
	backoff     BackoffKind
	backoffBase time.Duration
	uniqueKey   string
	uniqueTTL   time.Duration
	unique      bool
	lane        string
	laned       bool
	wait        time.Duration // how long the outcome is kept for waiters; 0: not
	timeout     time.Duration // one attempt's bound; 0: the worker's
	kind        string
	headers     map[string]string
}

// resolve fills in the defaults of o; a nil o is every default.
func (o *JobOptions) resolve() addOptions {
	r := addOptions{
		maxAttempts: defaultMaxAttempts,
		backoff:     BackoffExponential,
		backoffBase: defaultBackoffBase,
	}
	if o == nil {
		return r
	}
	r.priority, r.delay = o.Priority, o.Delay
	if o.MaxAttempts != 0 {
		r.maxAttempts = o.MaxAttempts
	}
	if o.Backoff != "" {
		r.backoff, r.backoffBase = o.Backoff, o.BackoffBase
	} else if o.BackoffBase != 0 {
		r.backoffBase = o.BackoffBase
	}
	r.uniqueKey, r.uniqueTTL = o.UniqueKey, o.UniqueTTL
	r.unique = o.UniqueKey != "" || o.UniqueTTL != 0
	r.lane, r.laned = o.Lane, o.Lane != ""
	r.wait, r.timeout, r.kind, r.headers = o.KeepOutcome, o.Timeout, o.Kind, o.Headers
	return r
}

// encodeHeaders is the headers column's value: URL query encoding, keys
// sorted, so equal headers give equal bytes.
func encodeHeaders(h map[string]string) string {
	if len(h) == 0 {
		return ""
	}
	v := make(url.Values, len(h))
	for k, s := range h {
		v.Set(k, s)
	}
	return v.Encode()
}

// decodeHeaders reads the headers column; a value that is not a query
// encoding (written by another producer) gives no headers.
func decodeHeaders(s string) map[string]string {
	if s == "" {
		return nil
	}
	v, err := url.ParseQuery(s)
	if err != nil {
		return nil
	}
	h := make(map[string]string, len(v))
	for k, vs := range v {
		h[k] = vs[0]
	}
	return h
}

// ceilMS converts d to whole milliseconds, rounding up so that a positive
// duration never becomes 0.
func ceilMS(d time.Duration) int64 {
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond > 0 {
		ms++
	}
	return ms
}

// args validates the options and appends the job's ADD argument group:
// data priority delay_ms max_attempts backoff backoff_ms unique_key
// unique_ttl_ms, then its values of the option columns (addColumns; "" for
// none), which a call sends only when some job of it uses them (addCall).
func (o *addOptions) args(op string, dst []string, payload []byte) ([]string, error) {
	if len(payload) > maxPayload {
		return dst, invalid(op, "payload of %d bytes, at most %d", len(payload), maxPayload)
	}
	if o.priority < 0 || o.priority > protocol.MaxPriority {
		return dst, invalid(op, "priority %d outside 0..%d", o.priority, protocol.MaxPriority)
	}
	delay := ceilMS(o.delay)
	if o.delay < 0 || delay > protocol.MaxDelayMS {
		return dst, invalid(op, "delay %v outside 0..%dms", o.delay, int64(protocol.MaxDelayMS))
	}
	if o.maxAttempts < 1 || o.maxAttempts > protocol.MaxAttempts {
		return dst, invalid(op, "max attempts %d outside 1..%d", o.maxAttempts, protocol.MaxAttempts)
	}
	if o.backoff != BackoffFixed && o.backoff != BackoffExponential {
		return dst, invalid(op, "backoff kind %s is neither %q nor %q", echo(string(o.backoff)), BackoffFixed, BackoffExponential)
	}
	backoff := ceilMS(o.backoffBase)
	if o.backoffBase < 0 || backoff > protocol.MaxBackoffMS {
		return dst, invalid(op, "backoff base %v outside 0..%dms", o.backoffBase, protocol.MaxBackoffMS)
	}
	if o.unique && o.uniqueKey == "" {
		// An empty key would silently add the job without deduplication.
		return dst, invalid(op, "unique key is empty")
	}
	if len(o.uniqueKey) > protocol.MaxUniqueKey {
		return dst, invalid(op, "unique key of %d bytes, at most %d", len(o.uniqueKey), protocol.MaxUniqueKey)
	}
	wait := ""
	if o.wait != 0 {
		ms := ceilMS(o.wait)
		if o.wait < 0 || ms > protocol.MaxWaitMS {
			return dst, invalid(op, "outcome kept %v, want 1ms..%dms", o.wait, int64(protocol.MaxWaitMS))
		}
		wait = protocol.FormatInt(ms)
	}
	if o.laned && !protocol.ValidLaneName(o.lane) {
		return dst, invalid(op, "lane name of %d bytes, want 1..%d", len(o.lane), protocol.MaxLaneName)
	}
	timeout := ""
	if o.timeout != 0 {
		ms := ceilMS(o.timeout)
		if o.timeout < 0 || ms > protocol.MaxTimeoutMS {
			return dst, invalid(op, "timeout %v, want 1ms..%dms", o.timeout, int64(protocol.MaxTimeoutMS))
		}
		timeout = protocol.FormatInt(ms)
	}
	if len(o.kind) > protocol.MaxKind {
		return dst, invalid(op, "kind of %d bytes, at most %d", len(o.kind), protocol.MaxKind)
	}
	headers := encodeHeaders(o.headers)
	if len(headers) > protocol.MaxHeaders {
		return dst, invalid(op, "headers of %d bytes encoded, at most %d", len(headers), protocol.MaxHeaders)
	}
	ttl := ceilMS(o.uniqueTTL)
	if o.uniqueKey == "" {
		ttl = 0
	} else if o.uniqueTTL <= 0 || ttl > protocol.MaxDelayMS {
		return dst, invalid(op, "unique ttl %v outside 1ms..%dms", o.uniqueTTL, int64(protocol.MaxDelayMS))
	}
	return append(dst,
		string(payload),
		protocol.FormatInt(int64(o.priority)),
		protocol.FormatInt(delay),
		protocol.FormatInt(int64(o.maxAttempts)),
		string(o.backoff),
		protocol.FormatInt(backoff),
		o.uniqueKey,
		protocol.FormatInt(ttl),
		o.lane,
		"", // parent: set by AddFlow
		"", // onfail: set by AddFlow
		wait,
		"", // due: a job waits by Delay
		timeout,
		o.kind,
		headers,
	), nil
}

// The option columns a job's group carries after its fixed arguments, in
// this order; a call sends only the columns some job of it uses.
var addColumns = []string{
	protocol.AddOptionLane, protocol.AddOptionParent, protocol.AddOptionOnFail, protocol.AddOptionWait,
	protocol.AddOptionDue, protocol.AddOptionTimeout, protocol.AddOptionKind, protocol.AddOptionHeaders,
}

// Positions of the option columns in a job's group.
const (
	colLane = protocol.AddArgsPerJob + iota
	colParent
	colOnFail
	colWait
	colDue
	colTimeout
	colKind
	colHeaders
	jobArgs // the length of a job's group as args builds it
)

// addCall builds ADD's arguments from jobs, the groups args built one after
// another: the count, the option columns some job uses (none for plain
// jobs), then each job's fixed arguments and its values of those columns.
func addCall(jobs []string) []string {
	n := len(jobs) / jobArgs
	var used []int
	for c := range addColumns {
		for i := protocol.AddArgsPerJob + c; i < len(jobs); i += jobArgs {
			if jobs[i] != "" {
				used = append(used, protocol.AddArgsPerJob+c)
				break
			}
		}
	}
	out := make([]string, 0, 2+len(used)+(protocol.AddArgsPerJob+len(used))*n)
	out = append(out, protocol.FormatInt(int64(n)), protocol.FormatInt(int64(len(used))))
	for _, c := range used {
		out = append(out, addColumns[c-protocol.AddArgsPerJob])
	}
	for i := 0; i < len(jobs); i += jobArgs {
		out = append(out, jobs[i:i+protocol.AddArgsPerJob]...)
		for _, c := range used {
			out = append(out, jobs[i+c])
		}
	}
	return out
}
