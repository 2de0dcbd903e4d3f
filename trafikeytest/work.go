package trafikeytest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/trafikey/trafikey"
)

// Result is what became of the job Work ran.
type Result struct {
	// ID is the job's id.
	ID string
	// Outcome is what the worker reported: OutcomeCompleted,
	// OutcomeRetrying or OutcomeDead for a handler that returned or
	// panicked.
	Outcome trafikey.Outcome
	// Err is the handler's error (a *trafikey.PanicError for a panic), or
	// the error that kept the outcome from being reported; nil when the
	// job completed.
	Err error
	// Info is the job as the server holds it after the outcome: nil once
	// it completed (a completed job is deleted), else its state, attempts
	// and stored error.
	Info *trafikey.JobInfo
}

// ErrQueueBusy is Work's error when the queue already has claimable jobs
// or is paused: Work would not be sure to run its own job.
var ErrQueueBusy = errors.New("trafikeytest: queue has pending jobs or is paused")

// Work adds one job (payload and opts) to q and runs handler on it through
// a trafikey.Worker, as production would: a returned error fails the
// attempt and retries it while attempts remain, SkipRetry dead-letters it,
// and a panic fails it with its stack. It returns when the outcome is
// reported. The worker neither promotes nor recovers, so a retried job
// stays delayed for the test to inspect.
//
// The queue must have no pending job and must not be paused (else
// ErrQueueBusy), and no other worker should run on it meanwhile. A job
// added with a delay is refused with trafikey.ErrInvalid: it would not be
// claimable.
func Work(ctx context.Context, q *trafikey.Queue, handler trafikey.Handler, payload []byte, opts *trafikey.JobOptions) (*Result, error) {
	if q == nil || handler == nil {
		return nil, fmt.Errorf("trafikeytest: work: queue and handler are required: %w", trafikey.ErrInvalid)
	}
	s, err := q.Stats(ctx)
	if err != nil {
		return nil, err
	}
	if s.Pending > 0 || s.Paused {
		return nil, fmt.Errorf("%w (pending %d, paused %v)", ErrQueueBusy, s.Pending, s.Paused)
	}
	id, err := q.Add(ctx, payload, opts)
	if err != nil {
		return nil, err
	}
	if info, err := q.Inspect(ctx, id); err != nil {
		return nil, err
	} else if info.State != trafikey.StatePending {
		return nil, fmt.Errorf("trafikeytest: work: job %s is %s, not pending (a delay?): %w", id, info.State, trafikey.ErrInvalid)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan *Result, 1)
	w, err := trafikey.NewWorker(q, handler, trafikey.WorkerOptions{
		Concurrency:  1,
		PromoteEvery: -1,
		RecoverEvery: -1,
		OnDone: func(job *trafikey.Job, outcome trafikey.Outcome, err error) {
			if job.ID == id {
				done <- &Result{ID: id, Outcome: outcome, Err: err}
				stop()
			}
		},
	})
	if err != nil {
		return nil, err
	}
	runErr := make(chan error, 1)
	go func() { runErr <- w.Run(runCtx) }()

	var r *Result
	select {
	case r = <-done:
	case <-ctx.Done():
	}
	// Run returns once the handler has reported; it is waited for so that
	// no goroutine of the worker outlives Work.
	if err := <-runErr; err != nil && r == nil {
		return nil, err
	}
	if r == nil {
		return nil, ctx.Err()
	}
	infoCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	info, err := q.Inspect(infoCtx, id)
	switch {
	case errors.Is(err, trafikey.ErrNotFound):
	case err != nil:
		return r, err
	default:
		r.Info = info
	}
	return r, nil
}
