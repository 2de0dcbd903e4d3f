package trafikey

import (
	"context"
	"fmt"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Cancel ends a pending, delayed or claimed job: it goes to the dead jobs
// with the error "cancelled" (Requeue runs it again), counted by
// Stats.TotalCancelled rather than as a failure. A parent waiting for it is
// told as of a child that died; a waiter gets ErrJobDead.
//
// A claimed job ends at once, its lease and lane slot freed. Its worker
// learns of it from the notice the server publishes on the queue's cancels
// channel, which every Worker subscribes to (or, should it miss the notice,
// at the job's next heartbeat: Extend is refused with ErrCancelled),
// cancels the handler's context with cause ErrCancelled, and the job's
// outcome is OutcomeCancelled; a completion or failure it reports later is
// refused with ErrCancelled. The notice is sent when the caller's ACL
// allows SPUBLISH on the channel emq:{q}:cancels; without it the cancel
// succeeds all the same and the worker learns it at the heartbeat.
//
// A job in another state (a parent waiting for children, a dead or retained
// completed job) is refused with ErrState; one that does not exist is
// ErrNotFound.
func (q *Queue) Cancel(ctx context.Context, id string) error {
	p, err := q.partOf("cancel", id)
	if err != nil {
		return err
	}
	return p.byID(ctx, protocol.Cancel, id)
}

// Reschedule moves a pending or delayed job (a retrying one included) to
// run d from the server's now (0..10 years, rounded up to a millisecond):
// 0 makes it pending at once, a later time delays it until then. Its
// attempts and other fields are kept. It returns the job's state after the
// call (StatePending or StateDelayed); a job claimed, dead, waiting for
// children or retained is refused with ErrState, one that does not exist is
// ErrNotFound.
func (a Admin) Reschedule(ctx context.Context, id string, d time.Duration) (JobState, error) {
	q := a.q
	ms := ceilMS(d)
	if d < 0 || ms > protocol.MaxDelayMS {
		return "", invalid("reschedule", "delay %v outside 0..%dms", d, int64(protocol.MaxDelayMS))
	}
	p, err := q.partOf("reschedule", id)
	if err != nil {
		return "", err
	}
	return p.reschedule(ctx, id, "0", protocol.FormatInt(ms))
}

func (q *Queue) reschedule(ctx context.Context, id, due, delay string) (JobState, error) {
	raw, err := q.rawID("reschedule", id)
	if err != nil {
		return "", err
	}
	msg, err := q.call(ctx, protocol.Reschedule, raw, due, delay)
	if err != nil {
		return "", err
	}
	if msg.IsInt64() {
		return "", fmt.Errorf("trafikey: reschedule job %s: %w", id, ErrNotFound)
	}
	state, err := msg.ToString()
	if err != nil || (state != protocol.StatePending && state != protocol.StateDelayed) {
		return "", fmt.Errorf("trafikey: reschedule: unexpected reply %v", msg)
	}
	return JobState(state), nil
}
