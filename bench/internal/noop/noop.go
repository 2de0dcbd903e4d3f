// Package noop runs the benchmarks' workers: Worker values with a handler
// that returns at once, counting the jobs they complete and keeping the
// first that did not complete.
package noop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/trafikey/trafikey"
)

// Workers runs n Worker values on q, each at concurrency conc, their logs
// discarded, and calls done (when not nil) with each job whose completion
// was accepted. stop ends them and returns their errors joined with the
// first job that did not complete.
func Workers(ctx context.Context, q *trafikey.Queue, n, conc int, done func(*trafikey.Job)) (stop func() error, err error) {
	var mu sync.Mutex
	var failed error
	wctx, cancel := context.WithCancel(ctx)
	ran := make(chan error, n)
	for range n {
		w, err := trafikey.NewWorker(q, func(context.Context, *trafikey.Job) error { return nil }, trafikey.WorkerOptions{
			Concurrency: conc,
			Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
			OnDone: func(job *trafikey.Job, outcome trafikey.Outcome, err error) {
				if outcome == trafikey.OutcomeCompleted {
					if done != nil {
						done(job)
					}
					return
				}
				mu.Lock()
				if failed == nil {
					failed = fmt.Errorf("job %s: %s: %v", job.ID, outcome, err)
				}
				mu.Unlock()
			},
		})
		if err != nil {
			cancel()
			return nil, err
		}
		go func() { ran <- w.Run(wctx) }()
	}
	return func() error {
		cancel()
		errs := make([]error, 0, n+1)
		for range n {
			errs = append(errs, <-ran)
		}
		mu.Lock()
		defer mu.Unlock()
		return errors.Join(append(errs, failed)...)
	}, nil
}
