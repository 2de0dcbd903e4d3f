package trafikey

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// ErrBreakerOpen is the failure of a job whose Breaker is open: the
// downstream failed more than the threshold in the current window, so the
// handler was not run. The attempt is retried after its backoff like any
// failed one.
var ErrBreakerOpen = errors.New("trafikey: circuit breaker open")

// Breaker is a circuit breaker over a downstream's failures, shared by every
// worker of a queue: each failure is counted on the server with
// EMQ.FAILURES.INCR in a window that starts with the first failure and ends
// window later, and the breaker is open while the window's count is above
// the threshold. When the window ends the count starts again from zero, so
// the breaker closes by itself.
//
// Use it on its own (Failure after each failed call to the downstream, Open
// before each call) or as a worker Middleware. It is safe for concurrent use.
type Breaker struct {
	q         *Queue
	name      string
	threshold int
	ttl       string
	keys      []string
}

// Breaker returns the circuit breaker of downstream (a bus name: 1..128
// bytes of letters, digits and - _ . : / @) on the queue: open once more
// than threshold (1..2^53) failures were counted in a window of window
// (1 ms to ten years, rounded up to a millisecond). Breakers of one name
// share their count, whatever their threshold.
func (q *Queue) Breaker(downstream string, threshold int, window time.Duration) (*Breaker, error) {
	const op = "breaker"
	if !protocol.ValidBusName([]byte(downstream)) {
		return nil, invalid(op, "downstream %s must be 1..%d bytes of letters, digits and - _ . : / @", echo(downstream), protocol.MaxBusName)
	}
	if threshold < 1 || int64(threshold) > 1<<53 {
		return nil, invalid(op, "threshold %d must be 1..2^53", threshold)
	}
	ms := (window + time.Millisecond - 1) / time.Millisecond
	if window <= 0 || ms > protocol.MaxFailuresTTL {
		return nil, invalid(op, "window %s must be 1ms..%s", window, time.Duration(protocol.MaxFailuresTTL)*time.Millisecond)
	}
	v := protocol.FailuresIncr
	return &Breaker{
		q: q, name: downstream, threshold: threshold, ttl: strconv.FormatInt(int64(ms), 10),
		keys: []string{q.keys.Base, q.keys.Version, v.NamedKey(q.keys, downstream)},
	}, nil
}

// Failure counts one failure of the downstream and reports the window's
// count after it, and whether the breaker is open now.
func (b *Breaker) Failure(ctx context.Context) (count int, open bool, err error) {
	v := protocol.FailuresIncr
	msg, err := b.q.untilRun(ctx, func() (valkey.ValkeyMessage, error) {
		return b.q.reply(ctx, v, b.q.exec.Exec(ctx, v, b.keys, []string{b.ttl}))
	})
	if err != nil {
		return 0, false, err
	}
	n, err := msg.AsInt64()
	if err != nil {
		return 0, false, fmt.Errorf("trafikey: %s: unexpected reply: %w", v.Name, err)
	}
	return int(n), int(n) > b.threshold, nil
}

// failures returns the current window's count (0 when no window is open).
// It is a plain GET of the counter, read-only.
func (b *Breaker) failures(ctx context.Context) (int, error) {
	c := b.q.client
	s, err := c.Do(ctx, c.B().Get().Key(b.keys[2]).Build()).ToString()
	if valkey.IsValkeyNil(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("trafikey: breaker %s: %w", b.name, err)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("trafikey: breaker %s: the counter holds %s: %w", b.name, echo(s), err)
	}
	return n, nil
}

// Open reports whether the breaker is open: more than the threshold's
// failures in the current window.
func (b *Breaker) Open(ctx context.Context) (bool, error) {
	n, err := b.failures(ctx)
	return n > b.threshold, err
}

// Middleware runs each job's handler only while the breaker is closed, and
// counts the handler's failures. An open breaker fails the job with
// ErrBreakerOpen without running the handler (so the downstream is spared
// and the job is retried after its backoff). counts decides which handler
// errors are the downstream's failures; nil counts every error but a
// cancelled context's.
func (b *Breaker) Middleware(counts func(error) bool) Middleware {
	if counts == nil {
		counts = func(err error) bool {
			return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
		}
	}
	return func(next Handler) Handler {
		return func(ctx context.Context, job *Job) error {
			open, err := b.Open(ctx)
			if err != nil {
				return err
			}
			if open {
				return fmt.Errorf("%w: %s", ErrBreakerOpen, b.name)
			}
			err = next(ctx, job)
			if err != nil && counts(err) {
				if _, _, ferr := b.Failure(ctx); ferr != nil {
					return errors.Join(err, ferr)
				}
			}
			return err
		}
	}
}
