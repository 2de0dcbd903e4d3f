// Package latency reads a queue's latency: how long its oldest waiting job
// has waited since it was added. The CLI's dashboard and the Prometheus
// exporter show it, per queue and per lane.
package latency

import (
	"context"
	"strconv"
	"time"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
)

// MaxPriorities bounds the priorities Oldest reads the head of.
const MaxPriorities = 16

// Oldest returns when the oldest job waiting in lane of q ("" for the jobs
// without a lane) was added, by the server's clock; the zero time when none
// waits. Waiting jobs are in claim order, highest priority first and then
// in the order they were added, so the oldest is the first of one of the
// priorities present: Oldest reads the first job of each, one JOBS call a
// priority (one a partition each, on a partitioned queue), up to
// MaxPriorities of them, highest first; on a queue whose jobs use more,
// the oldest of those read.
func Oldest(ctx context.Context, q *trafikey.Queue, lane string) (time.Time, error) {
	var oldest time.Time
	after := ""
	for range MaxPriorities {
		p, err := q.Jobs(ctx, trafikey.StatePending, trafikey.JobsOptions{Lane: lane, Limit: 1, Clip: -1, After: after})
		if err != nil || len(p.Rows) == 0 {
			return oldest, err
		}
		head := p.Rows[0]
		// a member whose row is gone has no add time: passed over
		if head.Exists && !head.AddedAt.IsZero() && (oldest.IsZero() || head.AddedAt.Before(oldest)) {
			oldest = head.AddedAt
		}
		// after the last place of the head's priority: the next one's first
		// (a score is (MaxPriority − priority) × PriorityStride + id)
		band := head.Score / protocol.PriorityStride
		if band >= protocol.MaxPriority {
			return oldest, nil // priority 0, the last
		}
		after = strconv.FormatInt((band+1)*protocol.PriorityStride-1, 10) + ":" + head.ID
	}
	return oldest, nil
}

// Since is how long a job added at added (Oldest) has waited at now: this
// process's clock against the server's, never below 0; 0 for the zero time
// (none waits).
func Since(added, now time.Time) time.Duration {
	if added.IsZero() {
		return 0
	}
	return max(0, now.Sub(added))
}
