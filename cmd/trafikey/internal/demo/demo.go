// Package demo runs the trafikey demo behind `trafikey demo`: producers add
// no-op jobs while a Worker runs them, then a steady-rate run and an idle
// worker probe measure latency. It measures; it asserts nothing.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/trafikey/trafikey"
)

// Config sizes the demo.
type Config struct {
	// Jobs is how many jobs the producers add and the worker runs.
	Jobs int
	// Producers is how many goroutines add them, each in batches of Batch
	// (1..1000) jobs per ADD call.
	Producers, Batch int
	// Concurrency is the worker's number of handler slots.
	Concurrency int
	// SteadyRate and SteadyJobs size the steady run: SteadyJobs jobs added
	// one at a time at SteadyRate jobs/s. Zero skips it.
	SteadyRate, SteadyJobs int
	// IdleProbes is how many single jobs are added, one at a time, to an
	// idle worker. Zero skips the probe.
	IdleProbes int
	// Progress receives a progress bar while the jobs run; nil shows none.
	Progress io.Writer
	// Log receives the worker's warnings and errors; nil discards them.
	Log io.Writer
}

// Result is what the demo measured.
type Result struct {
	Executor string
	Queue    string
	Config   Config

	// AddElapsed is how long the producers took to add every job.
	AddElapsed time.Duration
	// Elapsed runs from the first add to the last completion.
	Elapsed time.Duration
	// Latency is add→complete of the jobs of the main run: the time from
	// the add call to the acceptance of the job's COMPLETE.
	Latency Percentiles
	// Steady is add→complete of the steady run.
	Steady        Percentiles
	SteadyElapsed time.Duration
	// Idle is add→start with an idle worker: from the add call to the
	// start of the job's handler.
	Idle Percentiles
	// NotCompleted counts jobs whose outcome was not a completion.
	NotCompleted int64
	// Stats is the queue's state at the end.
	Stats trafikey.Stats
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Jobs < 1:
		return fmt.Errorf("demo: jobs %d: need at least 1", c.Jobs)
	case c.Producers < 1:
		return fmt.Errorf("demo: producers %d: need at least 1", c.Producers)
	case c.Batch < 1 || c.Batch > trafikey.MaxBatch:
		return fmt.Errorf("demo: batch %d outside 1..%d", c.Batch, trafikey.MaxBatch)
	case c.Concurrency < 1:
		return fmt.Errorf("demo: concurrency %d: need at least 1", c.Concurrency)
	case c.SteadyRate < 0 || c.SteadyJobs < 0 || c.IdleProbes < 0:
		return errors.New("demo: steady rate, steady jobs and idle probes cannot be negative")
	}
	return nil
}

// Run runs the demo on q, which should be empty.
func Run(ctx context.Context, q *trafikey.Queue, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logW := cfg.Log
	if logW == nil {
		logW = io.Discard
	}
	logger := slog.New(slog.NewTextHandler(logW, &slog.HandlerOptions{Level: slog.LevelWarn}))
	r := &Result{Executor: string(q.Executor()), Queue: q.Name(), Config: cfg}
	if err := r.main(ctx, q, cfg, logger); err != nil {
		return r, err
	}
	if cfg.SteadyRate > 0 && cfg.SteadyJobs > 0 {
		if err := r.steady(ctx, q, cfg, logger); err != nil {
			return r, err
		}
	}
	if cfg.IdleProbes > 0 {
		if err := r.idle(ctx, q, cfg, logger); err != nil {
			return r, err
		}
	}
	var err error
	r.Stats, err = q.Stats(ctx)
	return r, err
}

// runner is a Worker running in the background until stop.
type runner struct {
	cancel context.CancelFunc
	errc   chan error
	once   sync.Once
	err    error
}

func start(ctx context.Context, w *trafikey.Worker) *runner {
	ctx, cancel := context.WithCancel(ctx)
	r := &runner{cancel: cancel, errc: make(chan error, 1)}
	go func() { r.errc <- w.Run(ctx) }()
	return r
}

// stop ends Run and returns its error; later calls return the same.
func (r *runner) stop() error {
	r.once.Do(func() {
		r.cancel()
		r.err = <-r.errc
	})
	return r.err
}

// main adds cfg.Jobs jobs from the producers while a worker runs them.
func (r *Result) main(ctx context.Context, q *trafikey.Queue, cfg Config, logger *slog.Logger) error {
	lat := newSamples(cfg.Jobs)
	var finished, notCompleted atomic.Int64
	allDone := make(chan struct{})
	w, err := trafikey.NewWorker(q, noop, trafikey.WorkerOptions{
		Concurrency: cfg.Concurrency,
		Logger:      logger,
		OnDone: func(j *trafikey.Job, o trafikey.Outcome, _ error) {
			if o != trafikey.OutcomeCompleted {
				notCompleted.Add(1)
			} else if at, ok := stamped(j.Payload); ok {
				lat.add(time.Since(at))
			}
			if finished.Add(1) == int64(cfg.Jobs) {
				close(allDone)
			}
		},
	})
	if err != nil {
		return err
	}
	worker := start(ctx, w)
	defer worker.stop()

	var bar *progressbar.ProgressBar
	if cfg.Progress != nil {
		bar = progressbar.NewOptions64(int64(cfg.Jobs),
			progressbar.OptionSetWriter(cfg.Progress),
			progressbar.OptionSetDescription("jobs completed"),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("jobs"),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
		)
		// its clock starts now, not at its first render: a first render
		// after thousands of jobs would divide them by almost no time
		bar.StartWithoutRender()
	}

	began := time.Now()
	added := make(chan error, 1)
	go func() {
		err := produce(ctx, q, cfg)
		r.AddElapsed = time.Since(began)
		added <- err
	}()

	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	// Every job completes only after its add returned, so added is always
	// received before the loop ends, and AddElapsed is set.
	producing := true
wait:
	for {
		select {
		case err := <-added:
			producing = false
			if err != nil {
				return fmt.Errorf("demo: add: %w", err)
			}
		case <-allDone:
			break wait
		case <-tick.C:
			if bar != nil {
				_ = bar.Set64(finished.Load())
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.Elapsed = time.Since(began)
	if producing {
		if err := <-added; err != nil {
			return fmt.Errorf("demo: add: %w", err)
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	r.Latency = lat.percentiles()
	r.NotCompleted = notCompleted.Load()
	return worker.stop()
}

// produce adds cfg.Jobs jobs from cfg.Producers goroutines in batches.
func produce(ctx context.Context, q *trafikey.Queue, cfg Config) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for p := range cfg.Producers {
		// Producer p adds its share: jobs p, p+P, p+2P... counted by size.
		share := cfg.Jobs / cfg.Producers
		if p < cfg.Jobs%cfg.Producers {
			share++
		}
		wg.Go(func() {
			batch := make([]trafikey.JobSpec, 0, cfg.Batch)
			for share > 0 {
				n := min(share, cfg.Batch)
				batch = batch[:0]
				now := stamp(time.Now())
				for range n {
					batch = append(batch, trafikey.JobSpec{Payload: now})
				}
				if _, err := q.AddBatch(ctx, batch); err != nil {
					cancel(err)
					return
				}
				share -= n
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

func noop(context.Context, *trafikey.Job) error { return nil }

// steady adds jobs one at a time on a fixed schedule and measures
// add→complete, the latency a queue shows when it keeps up with its load.
func (r *Result) steady(ctx context.Context, q *trafikey.Queue, cfg Config, logger *slog.Logger) error {
	lat := newSamples(cfg.SteadyJobs)
	var finished atomic.Int64
	allDone := make(chan struct{})
	w, err := trafikey.NewWorker(q, noop, trafikey.WorkerOptions{
		Concurrency: cfg.Concurrency,
		Logger:      logger,
		OnDone: func(j *trafikey.Job, o trafikey.Outcome, _ error) {
			if at, ok := stamped(j.Payload); ok && o == trafikey.OutcomeCompleted {
				lat.add(time.Since(at))
			}
			if finished.Add(1) == int64(cfg.SteadyJobs) {
				close(allDone)
			}
		},
	})
	if err != nil {
		return err
	}
	worker := start(ctx, w)
	defer worker.stop()

	interval := time.Second / time.Duration(cfg.SteadyRate)
	began := time.Now()
	for i := range cfg.SteadyJobs {
		if wait := time.Until(began.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		if _, err := q.Add(ctx, stamp(time.Now()), nil); err != nil {
			return fmt.Errorf("demo: steady add: %w", err)
		}
	}
	select {
	case <-allDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.SteadyElapsed = time.Since(began)
	r.Steady = lat.percentiles()
	return worker.stop()
}

// idle adds one job at a time to an idle worker and measures add→start:
// the signal's wake-up, the claim and the dispatch.
func (r *Result) idle(ctx context.Context, q *trafikey.Queue, cfg Config, logger *slog.Logger) error {
	started := make(chan time.Time, 1)
	done := make(chan struct{}, 1)
	w, err := trafikey.NewWorker(q, func(context.Context, *trafikey.Job) error {
		started <- time.Now()
		return nil
	}, trafikey.WorkerOptions{
		Concurrency: cfg.Concurrency,
		Logger:      logger,
		OnDone:      func(*trafikey.Job, trafikey.Outcome, error) { done <- struct{}{} },
	})
	if err != nil {
		return err
	}
	worker := start(ctx, w)
	defer worker.stop()

	lat := newSamples(cfg.IdleProbes)
	for range cfg.IdleProbes {
		// Give the worker time to find pending empty and block on the
		// signal again, so every probe meets an idle worker.
		time.Sleep(5 * time.Millisecond)
		added := time.Now()
		if _, err := q.Add(ctx, nil, nil); err != nil {
			return fmt.Errorf("demo: idle probe add: %w", err)
		}
		select {
		case at := <-started:
			lat.add(at.Sub(added))
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.Idle = lat.percentiles()
	return worker.stop()
}
