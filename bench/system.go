package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// System is one queue implementation under test. A new System is made for
// every run: Prepare does the unmeasured setup on an empty server (clients,
// and for the process workload the pre-added jobs), Run the measured part,
// Close releases everything.
type System interface {
	Prepare(ctx context.Context, w Workload) error
	Run(ctx context.Context, w Workload) (Outcome, error)
	Close() error
}

// Env is what a system needs to know about the harness.
type Env struct {
	Addr  string // the server, host:port
	Root  string // repository root
	Queue string // queue name
}

// Outcome is what a system observed in the measured part of one run.
type Outcome struct {
	Added     int           // jobs added in the measured part
	Processed int           // jobs completed in the measured part
	Pending   int64         // jobs waiting after an add workload, as the system counts them; -1 unknown
	Elapsed   time.Duration // measured wall time
	ClientCPU time.Duration // CPU of the client process(es) in the measured part
	Lat       LatSummary    // add → complete latency (lifecycle workloads)
}

// LatSummary holds latency percentiles in microseconds.
type LatSummary struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Payloads carry the time they were stamped: 20 decimal digits of
// nanoseconds on this process's monotonic clock, then padding to the
// payload size. The worker reads it back when the job is completed to
// measure add → complete latency.

var clockBase = time.Now()

func nowNS() int64 { return int64(time.Since(clockBase)) }

func stampPayload(size int) []byte {
	p := make([]byte, size)
	for i := 20; i < size; i++ {
		p[i] = 'x'
	}
	putStamp(p, nowNS())
	return p
}

func putStamp(p []byte, ns int64) {
	for i := 19; i >= 0; i-- {
		p[i] = byte('0' + ns%10)
		ns /= 10
	}
}

func readStamp(p []byte) (int64, bool) {
	if len(p) < 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(p[:20]), 10, 64)
	return v, err == nil
}

// latRecorder collects latencies concurrently into a preallocated slice.
type latRecorder struct {
	n    atomic.Int64
	vals []int64
	bad  atomic.Int64 // payloads without a readable stamp
}

func newLatRecorder(capacity int) *latRecorder {
	return &latRecorder{vals: make([]int64, capacity)}
}

func (r *latRecorder) record(payload []byte) {
	ts, ok := readStamp(payload)
	if !ok {
		r.bad.Add(1)
		return
	}
	d := nowNS() - ts
	if i := r.n.Add(1) - 1; i < int64(len(r.vals)) {
		r.vals[i] = d
	}
}

func (r *latRecorder) summary() LatSummary {
	n := min(int(r.n.Load()), len(r.vals))
	return summarize(r.vals[:n])
}

// summarize returns the percentiles of latencies given in nanoseconds.
func summarize(ns []int64) LatSummary {
	if len(ns) == 0 {
		return LatSummary{}
	}
	s := slices.Clone(ns)
	slices.Sort(s)
	q := func(f float64) float64 {
		i := int(f*float64(len(s))+0.999999) - 1
		i = max(0, min(i, len(s)-1))
		return float64(s[i]) / 1e3
	}
	return LatSummary{N: len(s), P50: q(0.50), P90: q(0.90), P99: q(0.99), Max: float64(s[len(s)-1]) / 1e3}
}

// processCPU is this process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// goQueue is a Go queue client under test, reduced to the operations the
// workloads need. goSystem drives every workload on top of it the same way.
type goQueue interface {
	// add adds one job.
	add(ctx context.Context, payload []byte) error
	// batch reports whether addBatch adds several jobs in one call.
	batch() bool
	// addBatch adds the jobs (one call when batch() is true).
	addBatch(ctx context.Context, payloads [][]byte) error
	// work starts workers with the given concurrency that run a no-op
	// handler on each job and complete it, and call done with the job's
	// payload once the system has acknowledged the completion (asynq, which
	// has no such hook, when the handler returns); stop stops them.
	work(ctx context.Context, concurrency int, done func(payload []byte)) (stop func() error, err error)
	// completed is the number of jobs the system has recorded as completed.
	completed(ctx context.Context) (int64, error)
	// pending is the number of jobs waiting to be processed.
	pending(ctx context.Context) (int64, error)
	close() error
}

// goSystem runs the workloads on a goQueue.
type goSystem struct {
	env  Env
	open func(ctx context.Context, env Env, w Workload) (goQueue, error)

	q     goQueue
	stop  func() error
	phase atomic.Pointer[phase]
	// base is the system's completed count when the measured part starts
	// (the warm-up's jobs).
	base int64
}

// phase counts the jobs completed in one part of a run: the warm-up, then
// the measured part.
type phase struct {
	target  int64
	handled atomic.Int64 // completions reported to done
	done    chan struct{}
	lat     *latRecorder // nil when latency is not measured
}

func newPhase(target int, measure bool) *phase {
	p := &phase{target: int64(target), done: make(chan struct{})}
	if measure {
		p.lat = newLatRecorder(target)
	}
	return p
}

// warmupJobs is how many jobs run through a lifecycle workload's producers
// and workers before it is measured: a tenth of the jobs, at most 1000.
func warmupJobs(w Workload) int { return max(1, min(1000, w.Jobs/10)) }

func newGoSystem(env Env, open func(ctx context.Context, env Env, w Workload) (goQueue, error)) *goSystem {
	return &goSystem{env: env, open: open}
}

func (g *goSystem) Prepare(ctx context.Context, w Workload) error {
	q, err := g.open(ctx, g.env, w)
	if err != nil {
		return err
	}
	g.q = q
	switch {
	case w.Kind == "process":
		g.phase.Store(newPhase(w.Jobs, false))
		return g.preAdd(ctx, w)
	case w.Lifecycle():
		// Warm-up: workers start and a few jobs take the measured path
		// (connections, scripts, code paths), then the counts start over.
		warm := newPhase(warmupJobs(w), false)
		g.phase.Store(warm)
		if g.stop, err = g.q.work(ctx, w.Concurrency, g.done); err != nil {
			return fmt.Errorf("start workers: %w", err)
		}
		if err := parallel(ctx, int(warm.target), w.Producers, func(ctx context.Context, _ int) error {
			return g.q.add(ctx, stampPayload(w.Payload))
		}); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		if err := g.waitDone(ctx, warm); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		g.base = warm.target
		g.phase.Store(newPhase(w.Jobs, true))
	default:
		g.phase.Store(newPhase(w.Jobs, false))
	}
	return nil
}

// preAdd fills the queue before a process run, with the system's bulk API
// when it has one (1000 jobs a call, 4 calls in flight), else with
// concurrent single adds.
func (g *goSystem) preAdd(ctx context.Context, w Workload) error {
	if g.q.batch() {
		const chunk = 1000
		return parallel(ctx, (w.Jobs+chunk-1)/chunk, 4, func(ctx context.Context, i int) error {
			n := min(chunk, w.Jobs-i*chunk)
			ps := make([][]byte, n)
			for j := range ps {
				ps[j] = stampPayload(w.Payload)
			}
			return g.q.addBatch(ctx, ps)
		})
	}
	return parallel(ctx, w.Jobs, w.Producers, func(ctx context.Context, _ int) error {
		return g.q.add(ctx, stampPayload(w.Payload))
	})
}

// done counts a completed job and records its add → complete latency.
func (g *goSystem) done(payload []byte) {
	p := g.phase.Load()
	if p.lat != nil {
		p.lat.record(payload)
	}
	if p.handled.Add(1) == p.target {
		close(p.done)
	}
}

func (g *goSystem) Run(ctx context.Context, w Workload) (Outcome, error) {
	out := Outcome{Pending: -1}
	cpu0 := processCPU()
	t0 := time.Now()
	ph := g.phase.Load()
	var added atomic.Int64
	var err error
	if w.Processes() && g.stop == nil {
		// Stopped by Close, outside the measured part.
		if g.stop, err = g.q.work(ctx, w.Concurrency, g.done); err != nil {
			return out, fmt.Errorf("start workers: %w", err)
		}
	}
	switch w.Kind {
	case "add", "steady", "flat":
		var interval time.Duration
		if w.Kind == "steady" {
			interval = time.Second / time.Duration(w.Rate)
		}
		err = parallel(ctx, w.Jobs, w.Producers, func(ctx context.Context, k int) error {
			if interval > 0 {
				if d := time.Until(t0.Add(time.Duration(k) * interval)); d > 0 {
					time.Sleep(d)
				}
			}
			if err := g.q.add(ctx, stampPayload(w.Payload)); err != nil {
				return err
			}
			added.Add(1)
			return nil
		})
	case "batch":
		n := (w.Jobs + w.Batch - 1) / w.Batch
		if g.q.batch() {
			err = parallel(ctx, n, w.Producers, func(ctx context.Context, b int) error {
				ps := make([][]byte, min(w.Batch, w.Jobs-b*w.Batch))
				for j := range ps {
					ps[j] = stampPayload(w.Payload)
				}
				if err := g.q.addBatch(ctx, ps); err != nil {
					return err
				}
				added.Add(int64(len(ps)))
				return nil
			})
		} else {
			// No batch API: each producer adds its batch's jobs one by one.
			err = parallel(ctx, n, w.Producers, func(ctx context.Context, b int) error {
				for range min(w.Batch, w.Jobs-b*w.Batch) {
					if err := g.q.add(ctx, stampPayload(w.Payload)); err != nil {
						return err
					}
					added.Add(1)
				}
				return nil
			})
		}
	case "process":
		added.Store(int64(w.Jobs))
	}
	out.Added = int(added.Load())
	if err != nil {
		return out, fmt.Errorf("add: %w", err)
	}
	if w.Processes() {
		if err := g.waitDone(ctx, ph); err != nil {
			return out, err
		}
		out.Processed = int(ph.handled.Load())
	}
	out.Elapsed = time.Since(t0)
	out.ClientCPU = processCPU() - cpu0
	if ph.lat != nil {
		out.Lat = ph.lat.summary()
		if bad := ph.lat.bad.Load(); bad > 0 {
			return out, fmt.Errorf("%d payloads came back without their timestamp", bad)
		}
	}
	if w.Kind == "add" || w.Kind == "batch" {
		if out.Pending, err = g.q.pending(ctx); err != nil {
			return out, fmt.Errorf("count pending: %w", err)
		}
	}
	return out, nil
}

// waitDone waits until every job of phase p was reported completed to the
// workers and the system's own count agrees (polled every millisecond once
// the workers' count is reached).
func (g *goSystem) waitDone(ctx context.Context, p *phase) error {
	select {
	case <-p.done:
	case <-ctx.Done():
		return fmt.Errorf("completed %d of %d jobs: %w", p.handled.Load(), p.target, ctx.Err())
	}
	for {
		n, err := g.q.completed(ctx)
		if err != nil {
			return fmt.Errorf("count completed: %w", err)
		}
		if n-g.base >= p.target {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d jobs recorded as completed: %w", n-g.base, p.target, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

func (g *goSystem) Close() error {
	var errs []error
	if g.stop != nil {
		if err := g.stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop workers: %w", err))
		}
		g.stop = nil
	}
	if g.q != nil {
		errs = append(errs, g.q.close())
		g.q = nil
	}
	return errors.Join(errs...)
}

// parallel calls fn for k = 0..n-1 from `workers` goroutines, handing out
// indexes in order; the first error cancels the rest and is returned.
func parallel(ctx context.Context, n, workers int, fn func(ctx context.Context, k int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, k); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}
