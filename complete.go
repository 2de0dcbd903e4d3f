package trafikey

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/trafikey/trafikey/internal/groupcommit"
	"github.com/trafikey/trafikey/internal/protocol"
)

// CompleteMany reports jobs done, as Complete does for each, in calls of up
// to MaxBatch jobs (COMPLETEMANY). It returns one error per job, in the
// order of jobs: nil when the job was completed, else an error that
// errors.Is tells apart as Complete's would be: ErrLeaseLost (also an
// ErrState when the lease expired and the job was recovered) or
// ErrNotFound. A lost claim refuses only its own job;
// the others complete.
//
// Jobs claimed through another Queue value, and nil jobs, are refused
// client-side with ErrInvalid. A job named twice is completed by the first
// and the second is sent in a later call (the server refuses a call that
// names a job twice), where it sees the outcome of the first.
//
// The error returned with the slice is a call's failure (transport, fence,
// WRONGTYPE, writes paused): the jobs of that call and of the calls after it
// were not completed and carry that error too; calls before it stay done.
// A server without COMPLETEMANY (an older module, or an ACL that does not
// allow the command) gets one COMPLETE per job instead; each job's failure
// is then in its own error and the returned error is nil.
func (q *Queue) CompleteMany(ctx context.Context, jobs []*Job) ([]error, error) {
	if q.parts.Load() != nil {
		return q.completeManyParts(ctx, jobs)
	}
	return q.completeOwn(ctx, jobs)
}

// completeOwn is CompleteMany of jobs claimed through q itself: a partition,
// an unpartitioned queue, or a queue partitioned since they were claimed.
func (q *Queue) completeOwn(ctx context.Context, jobs []*Job) ([]error, error) {
	errs := make([]error, len(jobs))
	idx := make([]int, 0, len(jobs))
	for i, j := range jobs {
		switch {
		case j == nil:
			errs[i] = invalid("completemany", "job %d is nil", i)
		case j.q != q:
			errs[i] = invalid("completemany", "job %s was claimed from another queue handle", j.ID)
		case len(j.result) > protocol.MaxResult:
			errs[i] = j.checkResult("completemany")
		default:
			idx = append(idx, i)
		}
	}
	for len(idx) > 0 {
		var chunk []int
		chunk, idx = takeDistinct(idx, func(i int) string { return jobs[i].ID })
		batch := make([]*Job, len(chunk))
		for k, i := range chunk {
			batch[k] = jobs[i]
		}
		got, err := q.completeCall(ctx, batch)
		if err != nil {
			for _, i := range append(chunk, idx...) {
				errs[i] = err
			}
			return errs, err
		}
		for k, i := range chunk {
			errs[i] = got[k]
		}
	}
	return errs, nil
}

// takeDistinct takes up to MaxBatch items of queue whose ids differ, in
// order, and returns them and the items left (in order). The server refuses
// a COMPLETEMANY that names a job twice, so a repeat waits for a later call.
func takeDistinct[T any](queue []T, id func(T) string) (batch, rest []T) {
	seen := make(map[string]struct{}, min(len(queue), MaxBatch))
	for k, item := range queue {
		if len(batch) == MaxBatch {
			return batch, append(rest, queue[k:]...)
		}
		if _, dup := seen[id(item)]; dup {
			rest = append(rest, item)
			continue
		}
		seen[id(item)] = struct{}{}
		batch = append(batch, item)
	}
	return batch, rest
}

// completeCall completes up to MaxBatch jobs of q with distinct ids in one
// COMPLETEMANY and maps each job's outcome to Complete's error. A call
// error (transport, refusal) concerns every job of the call.
func (q *Queue) completeCall(ctx context.Context, jobs []*Job) ([]error, error) {
	args := make([]string, 1, 1+3*len(jobs))
	args[0] = protocol.FormatInt(int64(len(jobs)))
	for _, j := range jobs {
		args = append(args, j.raw(), j.token, string(j.result))
	}
	msg, err := q.call(ctx, protocol.CompleteMany, args...)
	// Completed but not confirmed durable: each completed job gets the
	// durability error, the others their own outcome.
	notDurable := errors.Is(err, ErrNotDurable)
	if err != nil && !notDurable {
		return nil, err
	}
	outs, rerr := msg.ToArray()
	if rerr != nil || len(outs) != len(jobs) {
		return nil, fmt.Errorf("trafikey: completemany: unexpected reply for %d jobs: %v", len(jobs), msg)
	}
	errs := make([]error, len(jobs))
	for i, m := range outs {
		n, rerr := m.AsInt64()
		if rerr != nil {
			return nil, fmt.Errorf("trafikey: completemany: unexpected reply entry %v", m)
		}
		switch n {
		case protocol.CompleteManyDone:
			if notDurable {
				errs[i] = err
			}
		case protocol.CompleteManyGone:
			errs[i] = jobs[i].notFound(protocol.CompleteMany)
		case protocol.CompleteManyStale:
			errs[i] = &outcomeError{verb: protocol.CompleteMany.Name, id: jobs[i].ID, errs: []error{ErrLeaseLost}}
		case protocol.CompleteManyNotActive:
			errs[i] = &outcomeError{verb: protocol.CompleteMany.Name, id: jobs[i].ID, errs: []error{ErrLeaseLost, ErrState}}
		case protocol.CompleteManyCancelled:
			errs[i] = &outcomeError{verb: protocol.CompleteMany.Name, id: jobs[i].ID, errs: []error{ErrCancelled, ErrState}}
		case protocol.CompleteManyTooLarge:
			errs[i] = &outcomeError{verb: protocol.CompleteMany.Name, id: jobs[i].ID, errs: []error{ErrResultTooLarge, ErrState}}
		default:
			return nil, fmt.Errorf("trafikey: completemany: unexpected outcome %d", n)
		}
	}
	return errs, nil
}

// outcomeError is a job's refusal inside a call with per-job outcomes: the
// server answers with an integer, not an error reply, so there is no server
// text, but it wraps the sentinels COMPLETE's error reply would.
type outcomeError struct {
	verb, id string
	errs     []error
}

func (e *outcomeError) Error() string {
	return "trafikey: " + e.verb + " job " + e.id + ": " + e.errs[0].Error()
}

func (e *outcomeError) Unwrap() []error { return e.errs }

// completion is a worker's finished job waiting for its batch.
type completion struct {
	job *Job
	// deadline is when the report's time runs out (zero: never). It
	// bounds the call that carries the job; no timer per job runs for it.
	deadline time.Time
	// done receives the job's result exactly once: from takeCompletions
	// when the deadline passed while it was queued, else from the call.
	done chan error
	// release, when set, is called by the call for a job the server has
	// answered for (done or refused: it holds the job no more), before
	// done receives the answer; released records it. A worker's slots so
	// come back a batch at a time, and its next CLAIM asks for them all.
	release  func()
	released bool
}

// completionSenders is how many COMPLETEMANY calls a worker keeps in flight:
// while one is on the wire the next batch is already gathering, and the
// client pipelines the two.
const completionSenders = 2

func newCompleter(q *Queue) *groupcommit.Queue[*completion] {
	senders := completionSenders
	if q.of != nil {
		// A worker's completions are split over the partitions already:
		// one call in flight each keeps their batches larger, so fewer
		// calls carry them (docs/BENCHMARKS.md, partitioned queues).
		senders = 1
	}
	return groupcommit.New(senders, takeCompletions, q.sendCompletions)
}

// takeCompletions takes the next batch of distinct jobs. A completion whose
// report time ran out while it waited is answered here and not sent: its
// expired deadline would otherwise bound, and fail, the call of every job
// taken with it.
func takeCompletions(queue []*completion) (batch, rest []*completion) {
	now := time.Now()
	live := make([]*completion, 0, len(queue))
	for _, c := range queue {
		if !c.deadline.IsZero() && !now.Before(c.deadline) {
			c.done <- fmt.Errorf("trafikey: completemany job %s: %w", c.job.ID, context.DeadlineExceeded)
			continue
		}
		live = append(live, c)
	}
	return takeDistinct(live, func(c *completion) string { return c.job.ID })
}

// sendCompletions runs one COMPLETEMANY for a batch of completions. The
// call ends at the earliest of their deadlines, so no job's report takes
// longer than its own bound: one timer per call, none per job.
func (q *Queue) sendCompletions(batch []*completion) {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	var earliest time.Time
	for _, c := range batch {
		if !c.deadline.IsZero() && (earliest.IsZero() || c.deadline.Before(earliest)) {
			earliest = c.deadline
		}
	}
	if !earliest.IsZero() {
		ctx, cancel = context.WithDeadline(ctx, earliest)
	}
	jobs := make([]*Job, len(batch))
	for i, c := range batch {
		jobs[i] = c.job
	}
	errs, err := q.completeCall(ctx, jobs)
	cancel()
	if err == nil {
		for i, c := range batch {
			if c.release != nil && (errs[i] == nil || !transient(errs[i])) {
				c.release()
				c.released = true
			}
		}
	}
	for i, c := range batch {
		if err != nil {
			c.done <- err
		} else {
			c.done <- errs[i]
		}
	}
}

// awaitCompletion queues c and returns its result. It waits on c.done
// alone, which the completer answers by c's deadline (when the deadline
// passes while c is queued, or when the call carrying c, bounded by it,
// ends), so it needs no timer of its own, and c.done is free for the
// next completion once it returns.
func awaitCompletion(b *groupcommit.Queue[*completion], c *completion) error {
	b.Push(c)
	return <-c.done
}

// completeQueued completes j through the completer, in a batch with the
// completions that arrive meanwhile, and returns what Complete would, by
// the time ctx ends. It is the way of a report tried again after a
// transient failure, whose ctx may end before the completer answers.
func completeQueued(ctx context.Context, b *groupcommit.Queue[*completion], j *Job) error {
	deadline, _ := ctx.Deadline()
	c := &completion{job: j, deadline: deadline, done: make(chan error, 1)}
	b.Push(c)
	select {
	case err := <-c.done:
		return err
	case <-ctx.Done():
		// Still queued, it is dropped when the next batch is taken; already
		// sent (the call carries this deadline too), the job may still
		// complete, as with any call abandoned in flight.
		return fmt.Errorf("trafikey: completemany job %s: %w", j.ID, ctx.Err())
	}
}
