package trafikey

import (
	"context"
	"fmt"
	"time"

	"github.com/valkey-io/valkey-go"
)

// The signal list lets idle workers sleep without polling: ADD, PROMOTE,
// RECOVER and REQUEUE push one token when pending goes from empty to
// non-empty, and RESUME pushes one when pending is not empty. An idle worker
// blocks on BLPOP; the list never holds more than one token, so a burst of
// adds costs one wake-up.

// waitSignal blocks until a token arrives or timeout passes, and reports
// whether a token arrived. valkey-go runs the blocking BLPOP on a dedicated
// connection, so it does not hold up the pipelined calls of other
// goroutines; cancelling ctx closes that connection.
func (q *Queue) waitSignal(ctx context.Context, timeout time.Duration) (bool, error) {
	cmd := q.client.B().Blpop().Key(q.keys.Signal).Timeout(timeout.Seconds()).Build()
	err := q.client.Do(ctx, cmd).Error()
	switch {
	case err == nil:
		return true, nil
	case valkey.IsValkeyNil(err):
		return false, nil
	default:
		return false, fmt.Errorf("trafikey: wait for signal: %w", err)
	}
}

// pokeSignal leaves one token for the next idle worker, the way the verbs
// do: a worker that claimed a full batch tells the others that more jobs
// may be waiting, since the verbs only signal the first job into an empty
// pending set.
func (q *Queue) pokeSignal(ctx context.Context) error {
	for _, r := range q.client.DoMulti(ctx,
		q.client.B().Lpush().Key(q.keys.Signal).Element("1").Build(),
		q.client.B().Ltrim().Key(q.keys.Signal).Start(0).Stop(0).Build(),
	) {
		if err := r.Error(); err != nil {
			return fmt.Errorf("trafikey: signal: %w", err)
		}
	}
	return nil
}
