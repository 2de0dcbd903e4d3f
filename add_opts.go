package trafikey

import (
	"net/url"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Defaults of a job added without options.
const (
	// DefaultMaxAttempts is how many times a job may be claimed before a
	// failure dead-letters it. Three attempts absorb a transient fault
	// without letting a poisoned job keep a worker busy for long; raise it
	// with MaxAttempts for jobs that call flaky remote services.
	DefaultMaxAttempts = 3
	// DefaultBackoffBase is the base of the default exponential backoff:
	// retries wait 1 s, 2 s, 4 s, ...
	DefaultBackoffBase = time.Second
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

// AddOption configures one job for Add or a NewJob.
type AddOption func(*addOptions)

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
	at          time.Time     // the absolute due time; zero: none
	timeout     time.Duration // one attempt's bound; 0: the worker's
	kind        string
	headers     map[string]string
}

func defaultAddOptions() addOptions {
	return addOptions{
		maxAttempts: DefaultMaxAttempts,
		backoff:     BackoffExponential,
		backoffBase: DefaultBackoffBase,
	}
}

// Priority sets the job's priority, 0..1000; higher runs first, equal
// priorities run in the order they were added. The default is 0.
func Priority(p int) AddOption {
	return func(o *addOptions) { o.priority = p }
}

// Delay makes the job wait d before it can be claimed (rounded up to a
// millisecond, at most ten years). Workers move due jobs to pending on their
// promote timer (WorkerOptions.PromoteEvery).
func Delay(d time.Duration) AddOption {
	return func(o *addOptions) { o.delay = d }
}

// MaxAttempts sets how many claims the job gets, 1..1000000; a failure that
// leaves no attempt dead-letters it. The default is DefaultMaxAttempts.
func MaxAttempts(n int) AddOption {
	return func(o *addOptions) { o.maxAttempts = n }
}

// Backoff sets the wait before a retry: kind BackoffFixed or
// BackoffExponential, and base 0..24 h (whole milliseconds). The default is
// exponential from DefaultBackoffBase.
func Backoff(kind BackoffKind, base time.Duration) AddOption {
	return func(o *addOptions) { o.backoff, o.backoffBase = kind, base }
}

// Unique makes the job hold key (1..512 bytes) for ttl: while the key is
// held, adding another job with it is refused with a *DuplicateError naming
// the holder. The key is released when the job completes or is removed, or
// when ttl passes, whichever comes first.
func Unique(key string, ttl time.Duration) AddOption {
	return func(o *addOptions) { o.uniqueKey, o.uniqueTTL, o.unique = key, ttl, true }
}

// Lane puts the job in lane name (1..128 bytes, any bytes): a tenant, a
// customer, a downstream host. Workers take the lanes with waiting jobs, and
// the jobs without a lane, in round-robin turns, so one lane's backlog does
// not hold up another's; a lane can be capped (Queue.SetLaneCap) and paused
// on its own (Queue.PauseLane).
func Lane(name string) AddOption {
	return func(o *addOptions) { o.lane, o.laned = name, true }
}

// KeepOutcome keeps the job's outcome (its result, or its error when it
// dies) for d (1ms..24h) after it finishes, for Queue.Wait to read.
// AddAndWait sets it itself.
func KeepOutcome(d time.Duration) AddOption {
	return func(o *addOptions) { o.wait = d }
}

// At makes the job wait until t (the server's clock decides, so the
// producer's clock does not matter): a t in the past runs it now. With Delay
// as well, the later of the two wins.
func At(t time.Time) AddOption {
	return func(o *addOptions) { o.at = t }
}

// Timeout bounds each attempt of the job to d (1ms..24h), in place of the
// worker's WorkerOptions.Timeout: at the deadline its handler's context
// ends and the attempt fails with an error matching ErrTimeout.
func Timeout(d time.Duration) AddOption {
	return func(o *addOptions) { o.timeout = d }
}

// Kind sets the job's kind (1..128 bytes), which a Mux routes on and
// Job.Kind, Inspect and the dashboard show.
func Kind(name string) AddOption {
	return func(o *addOptions) { o.kind = name }
}

// Headers carries h with the job to its handler (Job.Headers): trace
// context (the trafikeyotel module sets it), a tenant, a request id. Several
// Headers options merge, the later winning per key; encoded, they take at
// most MaxHeaders bytes.
func Headers(h map[string]string) AddOption {
	return func(o *addOptions) {
		if o.headers == nil {
			o.headers = make(map[string]string, len(h))
		}
		for k, v := range h {
			o.headers[k] = v
		}
	}
}

// MaxHeaders bounds a job's encoded Headers, bytes.
const MaxHeaders = protocol.MaxHeaders

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
	due := ""
	if !o.at.IsZero() {
		ms := o.at.UnixMilli()
		if ms < 0 || ms > protocol.MaxDueMS {
			return dst, invalid(op, "time %v outside the epoch .. year 9999", o.at)
		}
		// 0 would read as no due time: the epoch is as past as any.
		due = protocol.FormatInt(max(ms, 1))
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
		due,
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
