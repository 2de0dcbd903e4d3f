package emq

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valkey-io/valkey-go"

	"trafikey/internal/groupcommit"
	"trafikey/protocol"
)

// DefaultLogCap is how many log lines a job keeps unless WithLogCap says
// otherwise; older lines are dropped first.
const DefaultLogCap = 1000

// Queue is a handle on one named queue on one server. It is safe for
// concurrent use; open it once and share it.
type Queue struct {
	name    string
	client  valkey.Client
	exec    Executor
	keys    protocol.Keys
	logCap  string
	metrics *metrics

	// verbKeys holds each verb's declared keys, built once: they are the
	// same for every call on this queue and never modified.
	verbKeys map[*protocol.Verb][]string

	// adder coalesces concurrent Add calls into shared ADD calls; nil
	// when WithAddCoalescing(false) sends each Add alone.
	adder *groupcommit.Queue[*pendingAdd]
	// noCompleteMany is set once the server refused COMPLETEMANY as an
	// unknown command (a native module older than this client).
	noCompleteMany atomic.Bool
}

// QueueOption configures Open.
type QueueOption func(*queueConfig)

type queueConfig struct {
	exec      Executor
	noInstall bool
	logCap    int
	registry  prometheus.Registerer
	separate  bool
}

// WithExecutor makes the queue run its verbs on e instead of the executor
// Auto picks. Use it to force the Lua executor on a server that has the
// module, or the reverse.
func WithExecutor(e Executor) QueueOption {
	return func(c *queueConfig) { c.exec = e }
}

// WithoutInstall makes Open skip INSTALL, so opening writes nothing: for
// read-only tools. Verbs on a queue that was never installed are then
// refused with ErrWire.
func WithoutInstall() QueueOption {
	return func(c *queueConfig) { c.noInstall = true }
}

// WithLogCap sets how many lines Job.Log keeps per job (1..10000).
func WithLogCap(n int) QueueOption {
	return func(c *queueConfig) { c.logCap = n }
}

// WithAddCoalescing turns the coalescing of concurrent Add calls on (the
// default) or off. With it on, jobs without a unique key that callers add
// while earlier adds are on the wire are sent together in one ADD call,
// which costs the server far less than one call per job; an Add made while
// no other is in flight is sent at once, so nothing waits for a batch to
// fill. Off, every Add is a call of its own.
func WithAddCoalescing(on bool) QueueOption {
	return func(c *queueConfig) { c.separate = !on }
}

// WithMetrics registers Prometheus metrics for the queue and the workers
// that run on it with reg. Every series carries the label queue=<name>, so
// several queues can share one registry. Nothing is registered globally.
func WithMetrics(reg prometheus.Registerer) QueueOption {
	return func(c *queueConfig) { c.registry = reg }
}

// Open returns a handle on queue name. It checks the name, picks the
// executor (the native module when the server has it loaded, else Lua; see
// WithExecutor), and stamps the queue's wire version with INSTALL, which
// refuses with ErrWire when the queue was written by another wire version.
func Open(ctx context.Context, client valkey.Client, name string, opts ...QueueOption) (*Queue, error) {
	if !protocol.ValidQueueName(name) {
		return nil, fmt.Errorf("emq: open %q: %w", name, protocol.ErrQueueName)
	}
	cfg := queueConfig{logCap: DefaultLogCap}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logCap < 1 || cfg.logCap > protocol.MaxLogCap {
		return nil, fmt.Errorf("emq: open %q: log cap %d outside 1..%d: %w", name, cfg.logCap, protocol.MaxLogCap, ErrInvalid)
	}
	if cfg.exec == nil {
		cfg.exec = Auto(ctx, client)
	}
	q := &Queue{
		name:     name,
		client:   client,
		exec:     cfg.exec,
		keys:     protocol.KeysOf(name),
		logCap:   protocol.FormatInt(int64(cfg.logCap)),
		verbKeys: make(map[*protocol.Verb][]string, len(protocol.JobCore)),
	}
	for _, v := range protocol.JobCore {
		q.verbKeys[v] = v.KeyNames(q.keys)
	}
	if !cfg.separate {
		q.adder = newAdder(q)
	}
	if cfg.registry != nil {
		m, err := newMetrics(cfg.registry, name)
		if err != nil {
			return nil, fmt.Errorf("emq: open %q: metrics: %w", name, err)
		}
		q.metrics = m
	}
	if !cfg.noInstall {
		if _, err := q.call(ctx, protocol.Install); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// Name returns the queue's name.
func (q *Queue) Name() string { return q.name }

// Executor returns the name of the executor the queue runs on: "lua" or
// "native".
func (q *Queue) Executor() string { return q.exec.Name() }

// Client returns the valkey client the queue was opened with.
func (q *Queue) Client() valkey.Client { return q.client }

// call runs verb v with its declared keys and args. Transport errors are
// wrapped with the verb; an error reply becomes a *ServerError. A null
// reply is returned as a message for which IsNil is true.
func (q *Queue) call(ctx context.Context, v *protocol.Verb, args ...string) (valkey.ValkeyMessage, error) {
	res := q.exec.Exec(ctx, v, q.verbKeys[v], args)
	if err := res.NonValkeyError(); err != nil {
		return valkey.ValkeyMessage{}, fmt.Errorf("emq: %s: %w", v.Name, err)
	}
	msg, err := res.ToMessage()
	if err != nil && !valkey.IsValkeyNil(err) {
		return msg, serverError(v, errorText(msg, err), err)
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
		return 0, fmt.Errorf("emq: %s: unexpected reply: %w", v.Name, err)
	}
	return n, nil
}
