package trafikey

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/groupcommit"
	"github.com/trafikey/trafikey/internal/protocol"
)

// defaultLogCap is how many log lines a job keeps unless QueueOptions.LogCap says
// otherwise; older lines are dropped first.
const defaultLogCap = 1000

// Queue is a handle on one named queue on one server. It is safe for
// concurrent use; open it once and share it.
type Queue struct {
	name       string
	client     valkey.Client
	exec       executor.Executor
	keys       protocol.Keys
	logCap     string
	observer   Observer
	durability Durability

	// verbKeys holds each verb's declared keys, built once: they are the
	// same for every call on this queue and never modified.
	verbKeys map[*protocol.Verb][]string

	// adder coalesces concurrent Add calls into shared ADD calls; nil
	// when QueueOptions.SeparateAdds sends each Add alone.
	adder *groupcommit.Queue[*pendingAdd]
	// noClaimExt is set by QueueOptions.PlainClaims: claims then reply the
	// plain rows, and jobs carry no kind, timeout or headers.
	noClaimExt atomic.Bool
	// cluster is set when client is a cluster client: it follows a
	// redirect on the next try of a call.
	cluster bool

	// parts is set on the handle of a partitioned queue, which runs each
	// call on the handle of one partition, or of each (partition.go): at
	// Open, or when a handle opened before the queue's first growth sees
	// it (partitionsSoon). It is never unset.
	parts atomic.Pointer[partitions]
	// opened is the options Open was given, to build partitions' handles
	// with; partsRead is when an unpartitioned handle last started reading
	// whether its queue is partitioned now (unix ns). Both are set on the
	// handle Open returns only.
	opened    *QueueOptions
	partsRead atomic.Int64
	// of is, on the handle of one partition, the handle of its queue; nil
	// on any other handle.
	of *Queue
	// idSuffix ends the ids of this partition's jobs outside the server
	// ("~<index>"); empty for partition 0 and unpartitioned queues.
	idSuffix string

	// watchers counts the workers subscribed through this handle to its
	// cancels channel; the last to stop unsubscribes (worker_cancels.go).
	watchers cancelWatchers
}

// QueueOptions configure Open. The zero value, like a nil *QueueOptions,
// opens the queue with every default. Options are read once, at Open:
// changing them afterwards changes nothing.
type QueueOptions struct {
	// Executor chooses the executor. Empty (the default) picks the native
	// executor when the server has the trafikey module loaded (EMQ.VERSION
	// answers this client's wire), else the Lua executor. ExecutorLua forces the Lua scripts on a server that has
	// the module, ExecutorNative insists on the module (Open then fails with
	// ErrInvalid when the server lacks it).
	Executor Executor
	// Durability makes the queue's ADD, COMPLETE, COMPLETEMANY and FAIL
	// calls wait for it before they return (Durability's own doc). A
	// process that wants some calls durable and others not opens two
	// handles on the queue, with and without it.
	Durability Durability
	// Observer is told what the queue and the workers that run on it do:
	// jobs added, claimed, started and finished, leases recovered, claims
	// rate-limited. The trafikeyprom module builds one that turns these into
	// Prometheus series.
	Observer Observer
	// LogCap is how many lines Job.Log keeps per job (1..10000; 0 means
	// 100).
	LogCap int
	// SeparateAdds sends every Add in a call of its own. By default jobs
	// without a unique key that callers add while earlier adds are on the
	// wire are sent together in one ADD call, which costs the server far
	// less than one call per job; an Add made while no other is in flight
	// is sent at once, so nothing waits for a batch to fill.
	SeparateAdds bool
	// PlainClaims makes Claim (and so a Worker) ask the server only for
	// each job's id, payload and attempt, not its MaxAttempts, Kind,
	// Timeout and Headers: jobs then carry none of those fields, so a Mux
	// sees every job as of kind "", a job's own Timeout is not applied and
	// Attempt alone tells nothing of the last attempt. It saves the extended rows' server time: on a
	// queue none of whose jobs was added with a kind, timeout or headers the
	// server reads only MaxAttempts for them (a few percent of CLAIM's time
	// per job), else about a fifth of it (docs/BENCHMARKS.md).
	PlainClaims bool
	// NoInstall makes Open skip INSTALL, so opening writes nothing: for
	// read-only tools. Verbs on a queue that was never installed are then
	// refused with ErrWire.
	NoInstall bool
	// Partitions spreads the queue over this many hash slots (1..256), so
	// that on Valkey Cluster it uses the primaries those slots are on
	// (docs/PARTITIONS.md). The count is stored with the queue: 0 (the
	// default) opens the queue as stored, unpartitioned when it never was
	// partitioned; a count above the stored one grows the queue to it; a
	// count below it is ErrInvalid. Handles opened before a growth, the
	// first included, and their workers follow it within about 5 s.
	Partitions int

	// runner, set by tests, runs the queue's verbs in place of the
	// executor Open would pick: tests wrap the real executors to count or
	// alter calls.
	runner executor.Executor
	// partsEvery, set by tests, replaces partitionRefreshEvery for the
	// handle's reads of the partitions hash: a producer's, an unpartitioned
	// handle's, and its workers'.
	partsEvery time.Duration
}

// Executor names the executor a Queue runs its verbs on. Both take the same
// keys and arguments and give the same replies, byte for byte.
type Executor string

const (
	// ExecutorLua runs every verb as a Lua script with EVALSHA: it works on
	// any Valkey or Redis 7+ with nothing installed on the server.
	ExecutorLua Executor = "lua"
	// ExecutorNative runs every verb as the module's EMQ.* command: faster,
	// and it needs the module loaded in the server.
	ExecutorNative Executor = "native"
)

// Open returns a handle on queue name. It checks the name, picks the
// executor (the native module when the server has it loaded, else Lua; see
// QueueOptions.Executor), and stamps the queue's wire version with INSTALL, which
// refuses with ErrWire when the queue was written by another wire version.
// While the server cannot be reached (it is restarting, or failing over),
// or refuses calls without running them (it is loading its data, the
// queue's slot is migrating), Open tries again until ctx ends.
func Open(ctx context.Context, client valkey.Client, name string, opts *QueueOptions) (*Queue, error) {
	if err := checkQueueName("open", name); err != nil {
		return nil, err
	}
	var cfg QueueOptions
	if opts != nil {
		cfg = *opts
	}
	if cfg.LogCap == 0 {
		cfg.LogCap = defaultLogCap
	}
	if client == nil && cfg.runner == nil {
		return nil, invalid("open", "client is nil")
	}
	if cfg.LogCap < 1 || cfg.LogCap > protocol.MaxLogCap {
		return nil, invalid("open", "log cap %d outside 1..%d", cfg.LogCap, protocol.MaxLogCap)
	}
	if err := cfg.Durability.check("open"); err != nil {
		return nil, err
	}
	if cfg.runner == nil {
		switch cfg.Executor {
		case "", ExecutorNative:
			err := untilReachable(ctx, func() (err error) {
				cfg.runner, err = executor.Detect(ctx, client, notRunReply)
				if ve, ok := valkey.IsValkeyErr(err); ok {
					return serverError(versionVerb, ve.Error(), ve)
				}
				switch {
				case err == nil || ctx.Err() != nil:
				case closedClient(ctx, client, err):
					err = closedError(err)
				default:
					err = &transportError{err: err}
				}
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("trafikey: open %q: %w", name, err)
			}
			if cfg.Executor == ExecutorNative && Executor(cfg.runner.Name()) != ExecutorNative {
				return nil, invalid("open", "executor %q needs the trafikey module loaded in the server (%s does not answer wire %d)",
					cfg.Executor, protocol.VersionCommand, protocol.Wire)
			}
		case ExecutorLua:
			cfg.runner = executor.NewLua(client)
		default:
			return nil, invalid("open", "executor %s is none of \"\", %q, %q", echo(string(cfg.Executor)), ExecutorLua, ExecutorNative)
		}
	}
	if cfg.Partitions < 0 || cfg.Partitions > maxPartitions {
		return nil, invalid("open", "partitions %d outside 0..%d", cfg.Partitions, maxPartitions)
	}
	var tags []string
	var keyed int
	if client != nil {
		err := untilReachable(ctx, func() (err error) {
			tags, keyed, err = loadPartitions(ctx, client, name, cfg.Partitions, cfg.NoInstall)
			return err
		})
		if err != nil {
			return nil, err
		}
	} else if cfg.Partitions > 1 {
		return nil, invalid("open", "partitions need a client")
	}
	q := newHandle(client, name, name, &cfg)
	q.opened = &cfg
	if len(tags) > 1 {
		q.parts.Store(newPartitions(q, tags, keyed, &cfg))
	} else {
		q.partsRead.Store(time.Now().UnixNano())
	}
	if !cfg.NoInstall {
		for _, h := range q.handles() {
			err := untilReachable(ctx, func() error {
				_, err := h.call(ctx, protocol.Install)
				return err
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return q, nil
}

// newHandle builds the handle of queue name whose keys have the hash tag
// tag: the name itself, or a partition's tag.
func newHandle(client valkey.Client, name, tag string, cfg *QueueOptions) *Queue {
	q := &Queue{
		name:       name,
		client:     client,
		exec:       cfg.runner,
		keys:       protocol.KeysOf(tag),
		logCap:     protocol.FormatInt(int64(cfg.LogCap)),
		observer:   cfg.Observer,
		durability: cfg.Durability,
		verbKeys:   make(map[*protocol.Verb][]string, len(protocol.All)),
		cluster:    client != nil && client.Mode() == valkey.ClientModeCluster,
	}
	for _, v := range protocol.All {
		q.verbKeys[v] = v.KeyNames(q.keys)
	}
	if !cfg.SeparateAdds {
		q.adder = newAdder(q)
	}
	q.noClaimExt.Store(cfg.PlainClaims)
	return q
}

// versionVerb names EMQ.VERSION in the errors of the executor's detection;
// it takes no keys and is not one of protocol.All.
var versionVerb = &protocol.Verb{Name: "version", Command: protocol.VersionCommand}

// notRunReply reports whether err is an error reply that the server gave
// without running the command, for a state that passes (notRunClass).
func notRunReply(err error) bool {
	ve, ok := valkey.IsValkeyErr(err)
	return ok && notRunClass(firstWord(ve.Error()))
}

// untilReachable runs call until it returns anything but a transient error
// (a reply, or a refusal that trying again would not change), waiting from
// 50 ms doubling to 2 s between tries, for as long as ctx lasts: a process
// that starts while its server is restarting waits for it instead of
// failing.
func untilReachable(ctx context.Context, call func() error) error {
	return retryTransient(ctx, 2*time.Second, call, nil)
}

// retryTransient runs call until it returns nil or an error that is not
// transient, or ctx ends (the error then wraps ctx's and the last try's),
// waiting from 50 ms doubling to maxWait between tries; failed is told of
// each transient error that is tried again.
func retryTransient(ctx context.Context, maxWait time.Duration, call func() error, failed func(error)) error {
	wait := 50 * time.Millisecond
	for {
		err := call()
		if err == nil || !transient(err) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w; last try: %w", ctx.Err(), err)
		}
		if failed != nil {
			failed(err)
		}
		if !sleep(ctx, wait) {
			return fmt.Errorf("%w; last try: %w", ctx.Err(), err)
		}
		wait = min(2*wait, maxWait)
	}
}

// ctxDone is ctx's error, or DeadlineExceeded once its deadline has passed
// (the context's own timer may not have fired yet): nil while ctx lasts.
func ctxDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// transportError is a call that got no reply from the server (a broken or
// refused connection, a closing client), while the caller's context was
// still alive: the call may or may not have run.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// closedClient reports whether the transport error err comes from c
// closed. valkey-go reports a closed client with ErrClosing, but also a
// call caught on a connection that broke under it, and a call caught by
// the close itself can fail its dial ("operation was canceled"); a PING
// refused with ErrClosing at once tells them apart, as a broken connection
// is dialled again and a closed client refuses every call so (a PING
// caught by the close as well fails its dial the same way, cancelled, which
// an open client's fresh dial is not). A closed client is not a transport
// error: nothing will ever answer it.
func closedClient(ctx context.Context, c valkey.Client, err error) bool {
	if c == nil || (!errors.Is(err, valkey.ErrClosing) && !errors.Is(err, context.Canceled)) {
		// an outage's errors (refused, timed out) are not probed
		return false
	}
	ping, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	perr := c.Do(ping, c.B().Ping().Build()).Error()
	if errors.Is(perr, valkey.ErrClosing) {
		return true
	}
	return ping.Err() == nil && errors.Is(err, context.Canceled) && errors.Is(perr, context.Canceled)
}

// closedError is err, from a closed client, as a call returns it: matching
// valkey.ErrClosing whatever err was.
func closedError(err error) error {
	if errors.Is(err, valkey.ErrClosing) {
		return fmt.Errorf("client closed: %w", err)
	}
	return fmt.Errorf("client closed (%w): %w", valkey.ErrClosing, err)
}

// isClosed reports whether err is a call on a closed client.
func isClosed(err error) bool {
	var te *transportError
	return errors.Is(err, valkey.ErrClosing) && !errors.As(err, &te)
}

// transient reports whether err is worth a retry: the call got no reply
// (a transport error), or the server refused it without running it, while
// it avoids writes (ErrWritePaused) or for another state that passes
// (errNotRun: a slot migrating, a dataset loading, a cluster down). Any
// other reply or refusal will not change by trying again.
func transient(err error) bool {
	var te *transportError
	return errors.As(err, &te) || errors.Is(err, ErrWritePaused) || errors.Is(err, errNotRun)
}

// Name returns the queue's name.
func (q *Queue) Name() string { return q.name }

// Executor returns the executor the queue runs on: ExecutorLua or
// ExecutorNative.
func (q *Queue) Executor() Executor { return Executor(q.exec.Name()) }

// call runs verb v with its declared keys and args. Transport errors are
// wrapped with the verb; an error reply becomes an *Error. A null
// reply is returned as a message for which IsNil is true. A verb with a
// durability waits for it (callDurable). A call the server refused without
// running it is sent again until ctx ends (untilRun).
func (q *Queue) call(ctx context.Context, v *protocol.Verb, args ...string) (valkey.ValkeyMessage, error) {
	return q.untilRun(ctx, func() (valkey.ValkeyMessage, error) { return q.callOnce(ctx, v, args...) })
}

// callOnce is call without its tries again of a call the server did not
// run: for a call whose effect depends on when it runs, such as the
// worker's RECOVER, which may follow only a renewal of its own leases.
func (q *Queue) callOnce(ctx context.Context, v *protocol.Verb, args ...string) (valkey.ValkeyMessage, error) {
	q.partitionsSoon()
	if d := q.durabilityOf(v); d.on() {
		if err := d.check(v.Name); err != nil {
			return valkey.ValkeyMessage{}, err
		}
		return q.callDurable(ctx, v, d, args)
	}
	return q.reply(ctx, v, q.exec.Exec(ctx, v, q.verbKeys[v], args))
}

// The waits between the tries of a call the server did not run: short, as
// the server answered and a slot migration's TRYAGAIN window is often
// shorter than a second (docs/OPERATIONS.md, "Resharding"), so the caller
// sees the migration end within a few tens of ms; capped low, as a try
// costs the server only its refusal.
const (
	notRunFirstWait = 10 * time.Millisecond
	notRunMaxWait   = 200 * time.Millisecond
)

// untilRun runs call until the server runs it: a refusal that says it did
// not (notRun) is tried again, from 10 ms doubling to 200 ms, until ctx
// ends; the error then wraps ctx's and the last try's. Such a refusal
// wrote nothing, so any verb, ADD included, can be sent again as it is.
func (q *Queue) untilRun(ctx context.Context, call func() (valkey.ValkeyMessage, error)) (valkey.ValkeyMessage, error) {
	wait := notRunFirstWait
	for {
		msg, err := call()
		if err == nil || !q.notRun(err) {
			return msg, err
		}
		if ctx.Err() != nil || !sleep(ctx, wait) {
			return msg, fmt.Errorf("%w; last try: %w", ctx.Err(), err)
		}
		wait = min(2*wait, notRunMaxWait)
	}
}

// notRun reports whether err is a refusal the server gave without running
// the call and that trying again can get past: a passing state (errNotRun),
// or, on a cluster client, a redirect the client follows on the next try
// with its refreshed slot map. A client of one node would only meet the
// redirect again.
func (q *Queue) notRun(err error) bool {
	return errors.Is(err, errNotRun) || (q.cluster && errors.Is(err, errRedirected))
}

// reply turns a verb's result into its message or its error.
func (q *Queue) reply(ctx context.Context, v *protocol.Verb, res valkey.ValkeyResult) (valkey.ValkeyMessage, error) {
	if err := res.NonValkeyError(); err != nil {
		switch done := ctxDone(ctx); {
		case done == nil && closedClient(ctx, q.client, err):
			err = closedError(err)
		case done == nil:
			err = &transportError{err: err}
		case !errors.Is(err, done):
			// A dial or read cut short by ctx's deadline reports a
			// network timeout: the caller asked for the deadline.
			err = fmt.Errorf("%w: %w", done, err)
		}
		return valkey.ValkeyMessage{}, fmt.Errorf("trafikey: %s: %w", v.Name, err)
	}
	msg, err := res.ToMessage()
	if err != nil && !valkey.IsValkeyNil(err) {
		e := serverError(v, errorText(msg, err), err)
		if e.JobID != "" {
			e.JobID = q.outID(e.JobID)
		}
		return msg, e
	}
	return msg, nil
}

// callInt runs v and reads an integer reply.
func (q *Queue) callInt(ctx context.Context, v *protocol.Verb, args ...string) (int64, error) {
	msg, err := q.call(ctx, v, args...)
	if err != nil {
		return 0, err
	}
	n, err := msg.AsInt64()
	if err != nil {
		return 0, fmt.Errorf("trafikey: %s: unexpected reply: %w", v.Name, err)
	}
	return n, nil
}
