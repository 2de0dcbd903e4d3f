package admin

import (
	"context"
	"time"

	"github.com/trafikey/trafikey"
)

// HeadAddedAt reads when the next job to be claimed of lane of q ("" for
// the jobs without a lane) was added, by the server's clock: the zero time
// when none waits. It is one JOBS call of one row without its texts (one
// per partition of a partitioned queue, whose lane may have jobs in more
// than one: the earliest in claim order is the head).
//
// It is the queue latency's definition that trafikeyprom's QueueCollector
// exports as trafikey_queue_latency_seconds and
// trafikey_lane_latency_seconds; that module cannot import this one, so it
// reads the same row with a copy of these lines.
func HeadAddedAt(ctx context.Context, q *trafikey.Queue, lane string) (time.Time, error) {
	p, err := q.Jobs(ctx, trafikey.StatePending, trafikey.JobsOptions{Lane: lane, Limit: 1, Clip: -1})
	if err != nil || len(p.Rows) == 0 {
		return time.Time{}, err
	}
	return p.Rows[0].AddedAt, nil
}

// Latency is how long a job added at added (HeadAddedAt) has waited at
// now: this process's clock against the server's, never below 0; 0 for the
// zero time (none waits).
func Latency(added, now time.Time) time.Duration {
	if added.IsZero() {
		return 0
	}
	return max(0, now.Sub(added))
}
