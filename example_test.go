package trafikey_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/trafikeytest"
)

// exampleServer starts the throwaway valkey-server every example runs on.
// In a program, connect to your own server instead:
//
//	client, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
func exampleServer() *trafikeytest.Server {
	srv, err := trafikeytest.Start(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	return srv
}

// exampleQueue opens queue name on a server of its own, as ExampleOpen
// shows; done stops the server.
func exampleQueue(name string, opts *trafikey.QueueOptions) (q *trafikey.Queue, done func()) {
	srv := exampleServer()
	q, err := trafikey.Open(context.Background(), srv.Client(), name, opts)
	if err != nil {
		log.Fatal(err)
	}
	return q, func() { srv.Close() }
}

// Open a queue. The executor is the native module when the server has it
// loaded, else the Lua scripts, which need nothing on the server.
func ExampleOpen() {
	srv := exampleServer()
	defer srv.Close()
	ctx := context.Background()

	q, err := trafikey.Open(ctx, srv.Client(), "emails", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("queue", q.Name(), "runs on the", q.Executor(), "executor")
	// Output: queue emails runs on the lua executor
}

// Force the Lua executor, e.g. to compare it with the module.
func ExampleQueueOptions_executor() {
	srv := exampleServer()
	defer srv.Close()

	q, err := trafikey.Open(context.Background(), srv.Client(), "emails", &trafikey.QueueOptions{Executor: trafikey.ExecutorLua})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(q.Executor())
	// Output: lua
}

// Add a job with options, and read it back.
func ExampleQueue_Add() {
	ctx := context.Background()
	q, done := exampleQueue("emails", nil) // trafikey.Open on a throwaway server
	defer done()

	id, err := q.Add(ctx, []byte(`{"to":"ada@example.com"}`),
		&trafikey.JobOptions{Priority: 10, Delay: 5 * time.Minute, MaxAttempts: 5, Backoff: trafikey.BackoffExponential, BackoffBase: 2 * time.Second},
	)
	if err != nil {
		log.Fatal(err)
	}
	info, err := q.Inspect(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("job", id, info.State, "priority", info.Priority, "max attempts", info.MaxAttempts)
	// Output: job 1 delayed priority 10 max attempts 5
}

// A unique key refuses a second job while the first holds it.
func ExampleJobOptions_unique() {
	ctx := context.Background()
	q, done := exampleQueue("payments", nil) // trafikey.Open on a throwaway server
	defer done()

	for range 2 {
		id, err := q.Add(ctx, []byte("charge order 7"), &trafikey.JobOptions{UniqueKey: "charge:order-7", UniqueTTL: time.Hour})
		var dup *trafikey.Error
		switch {
		case errors.Is(err, trafikey.ErrDuplicate) && errors.As(err, &dup):
			fmt.Println("already queued as job", dup.JobID)
		case err != nil:
			log.Fatal(err)
		default:
			fmt.Println("queued as job", id)
		}
	}
	// Output:
	// queued as job 1
	// already queued as job 1
}

// Add many jobs in few calls. Each call of up to MaxBatch jobs is all or
// none.
func ExampleQueue_AddBatch() {
	ctx := context.Background()
	q, done := exampleQueue("thumbnails", nil) // trafikey.Open on a throwaway server
	defer done()

	jobs := make([]trafikey.JobSpec, 0, 5000)
	for i := range 5000 {
		jobs = append(jobs, trafikey.JobSpec{Payload: fmt.Appendf(nil, "thumbnail %d", i)})
	}
	ids, err := q.AddBatch(ctx, jobs)
	if err != nil {
		log.Fatalf("added %d of %d: %v", len(ids), len(jobs), err)
	}
	s, err := q.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("added", len(ids), "pending", s.Pending)
	// Output: added 5000 pending 5000
}

// Run a worker: a handler error retries the job, SkipRetry dead-letters it.
// Here the worker stops once it has run three jobs; a program runs it until
// it is told to stop (signal.NotifyContext), and running jobs then get up
// to ShutdownTimeout to finish.
func ExampleWorker_Run() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	q, done := exampleQueue("emails", nil) // trafikey.Open on a throwaway server
	defer done()
	for _, to := range []string{"ada@example.com", "", "grace@example.com"} {
		if _, err := q.Add(ctx, []byte(to), nil); err != nil {
			log.Fatal(err)
		}
	}

	var finished atomic.Int64
	w, err := trafikey.NewWorker(q, func(ctx context.Context, job *trafikey.Job) error {
		if len(job.Payload) == 0 {
			// Retrying will not help: dead-letter it now.
			return trafikey.SkipRetry(errors.New("no recipient"))
		}
		return nil // send the email here
	}, trafikey.WorkerOptions{
		Concurrency: 50,
		Lease:       time.Minute,
		OnDone: func(*trafikey.Job, trafikey.Outcome, error) {
			if finished.Add(1) == 3 {
				stop()
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		log.Print(err)
	}
	st := w.Info()
	fmt.Printf("completed %d, dead %d\n", st.Processed, st.Dead)
	// Output: completed 2, dead 1
}

// Bring your own loop: claim a batch, run it, report each outcome.
func ExampleQueue_Claim() {
	ctx := context.Background()
	q, done := exampleQueue("webhooks", nil) // trafikey.Open on a throwaway server
	defer done()
	if _, err := q.AddBatch(ctx, []trafikey.JobSpec{{Payload: []byte("ok")}, {Payload: []byte("timeout")}}); err != nil {
		log.Fatal(err)
	}

	jobs, err := q.Claim(ctx, 30*time.Second, 100)
	if err != nil {
		log.Fatal(err)
	}
	for _, job := range jobs {
		if string(job.Payload) == "timeout" {
			retrying, err := job.Fail(ctx, errors.New("upstream timed out"), true)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println("job", job.ID, "failed, retrying:", retrying)
			continue
		}
		if err := job.Complete(ctx); err != nil {
			log.Fatal(err) // e.g. ErrLeaseLost: the lease was lost meanwhile
		}
		fmt.Println("job", job.ID, "completed")
	}
	// Output:
	// job 1 completed
	// job 2 failed, retrying: true
}

// Read a queue's counts and lifetime counters.
func ExampleQueue_Stats() {
	ctx := context.Background()
	q, done := exampleQueue("emails", nil) // trafikey.Open on a throwaway server
	defer done()
	if _, err := q.Add(ctx, []byte("hello"), nil); err != nil {
		log.Fatal(err)
	}

	s, err := q.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("pending %d, active %d, dead %d, added %d\n", s.Pending, s.Active, s.Dead, s.TotalAdded)
	// Output: pending 1, active 0, dead 0, added 1
}

// A Complete after the job's lease was lost and the job claimed again is
// refused: the error wraps ErrLeaseLost and keeps the server's text.
func ExampleError() {
	ctx := context.Background()
	q, done := exampleQueue("emails", nil) // trafikey.Open on a throwaway server
	defer done()
	if _, err := q.Add(ctx, []byte("hello"), nil); err != nil {
		log.Fatal(err)
	}
	first, err := q.Claim(ctx, time.Millisecond, 1)
	if err != nil {
		log.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // the lease passes
	if _, err := q.Admin().Maintain(ctx, 10); err != nil {
		log.Fatal(err)
	}
	if _, err := q.Claim(ctx, time.Minute, 1); err != nil { // another worker
		log.Fatal(err)
	}

	err = first[0].Complete(ctx)
	var se *trafikey.Error
	if errors.Is(err, trafikey.ErrLeaseLost) && errors.As(err, &se) {
		fmt.Println("refused:", se.Text)
	}
	// Output: refused: EMQSTALE complete token mismatch
}

// Observe what a queue's workers do, e.g. to export metrics (the
// trafikeyprom module does this for Prometheus). An Observer sets only the
// funcs it wants; the others stay nil.
func ExampleObserver() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	// The funcs are called from many goroutines, hence the lock.
	var (
		mu   sync.Mutex
		seen []string
	)
	see := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, what)
	}
	obs := trafikey.Observer{
		JobsAdded:   func(string, string, int) { see("added") },
		JobsClaimed: func(string, string, int) { see("claimed") },
		JobFinished: func(_ *trafikey.Job, out trafikey.Outcome, _ time.Duration) {
			see(string(out))
			stop()
		},
	}
	q, done := exampleQueue("emails", &trafikey.QueueOptions{Observer: obs}) // trafikey.Open on a throwaway server
	defer done()
	if _, err := q.Add(ctx, []byte("hello"), nil); err != nil {
		log.Fatal(err)
	}
	w, err := trafikey.NewWorker(q, func(context.Context, *trafikey.Job) error { return nil }, trafikey.WorkerOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Println(slices.Sorted(slices.Values(seen)))
	// Output: [added claimed completed]
}

// Wait for a replica before an Add returns. The example's server has no
// replica, so the wait times out: the job is added all the same, and the
// error says what was not confirmed.
func ExampleDurability() {
	srv := exampleServer()
	defer srv.Close()
	ctx := context.Background()
	q, err := trafikey.Open(ctx, srv.Client(), "payments", &trafikey.QueueOptions{
		Durability: trafikey.Durability{Replicas: 1, Timeout: 20 * time.Millisecond},
	})
	if err != nil {
		log.Fatal(err)
	}

	id, err := q.Add(ctx, []byte("charge order 7"), nil)
	if errors.Is(err, trafikey.ErrNotDurable) {
		fmt.Printf("job %s added; %v\n", id, err)
	}
	// Output:
	// job 1 added; trafikey: add: durability not confirmed within 20ms: 0 of 1 replicas
}

// Bound each run and wrap the handler: every job's end is logged, and a
// panic reaches the logger as an error.
func ExampleMiddleware() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	q, done := exampleQueue("reports", nil) // trafikey.Open on a throwaway server
	defer done()
	if _, err := q.Add(ctx, []byte("monthly"), nil); err != nil {
		log.Fatal(err)
	}

	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		// no time or run time in the example's output
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "took" {
				return slog.Attr{}
			}
			return a
		},
	}))
	w, err := trafikey.NewWorker(q, func(ctx context.Context, job *trafikey.Job) error {
		return nil // render the report within the timeout
	}, trafikey.WorkerOptions{
		Timeout:    time.Minute,
		Middleware: []trafikey.Middleware{trafikey.LogJobs(logger)},
		OnDone:     func(*trafikey.Job, trafikey.Outcome, error) { stop() },
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
	// Output: level=INFO msg="trafikey: job done" queue=reports job=1 attempt=1
}

// A circuit breaker over a downstream's failures, shared by every worker of
// the queue: open once more than 3 failures were counted in a minute.
func ExampleQueue_Breaker() {
	q, done := exampleQueue("emails", nil)
	defer done()
	ctx := context.Background()

	smtp, err := q.Breaker("smtp", 3, time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	for range 4 {
		n, open, err := smtp.Failure(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("failures", n, "open", open)
	}
	// As a worker middleware, an open breaker fails jobs with
	// ErrBreakerOpen without running their handler:
	//
	//	trafikey.WorkerOptions{Middleware: []trafikey.Middleware{smtp.Middleware(nil)}}

	// Output:
	// failures 1 open false
	// failures 2 open false
	// failures 3 open false
	// failures 4 open true
}

// A "seen" set over job ids as an idempotency marker: the second run of job
// 7 (its completion was lost, say) finds it marked.
func ExampleQueue_Once() {
	q, done := exampleQueue("charges", nil)
	defer done()
	ctx := context.Background()

	charged, err := q.Once("charged")
	if err != nil {
		log.Fatal(err)
	}
	for range 2 {
		first, err := charged.Mark(ctx, "7")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("first run of job 7:", first)
	}
	// Output:
	// first run of job 7: true
	// first run of job 7: false
}

// A periodic job: every occurrence of a cron expression (seconds first, in
// a time zone) enqueues one job, exactly once however many workers run.
// Workers run the schedule step on their timer; an occurrence missed while
// every worker was down is caught up or skipped as Grace and CatchUp say.
func ExampleSchedules_Set() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	q, done := exampleQueue("reports", nil) // trafikey.Open on a throwaway server
	defer done()

	_, err := q.Schedules().Set(ctx, trafikey.Schedule{
		ID:       "nightly",
		Cron:     "0 30 2 * * *", // 02:30:00 every day
		TimeZone: "Europe/Paris",
		Jitter:   time.Minute, // spread the jobs of many schedules
		Grace:    time.Hour,
		CatchUp:  1,
		Payload:  []byte("build the report"),
		Options:  trafikey.JobOptions{MaxAttempts: 5, UniqueKey: "nightly", UniqueTTL: 12 * time.Hour},
	})
	if err != nil {
		log.Fatal(err)
	}
	// an interval schedule, capped at three occurrences
	if _, err := q.Schedules().Set(ctx, trafikey.Schedule{ID: "warmup", Every: 10 * time.Millisecond, Limit: 3}); err != nil {
		log.Fatal(err)
	}

	var ran atomic.Int64
	w, err := trafikey.NewWorker(q, func(ctx context.Context, job *trafikey.Job) error {
		if ran.Add(1) == 3 {
			stop()
		}
		return nil
	}, trafikey.WorkerOptions{ScheduleEvery: 5 * time.Millisecond, PromoteEvery: 5 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		log.Print(err)
	}
	for s, err := range q.Schedules().List(context.Background()) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d occurrences, finished %v\n", s.ID, s.Count, !s.Paused && s.Next.IsZero())
	}
	// Output:
	// nightly: 0 occurrences, finished false
	// warmup: 3 occurrences, finished true
}

// Cap a lane and pause it: its jobs wait while the others run.
func ExampleQueue_Lane() {
	ctx := context.Background()
	q, done := exampleQueue("uploads", nil) // trafikey.Open on a throwaway server
	defer done()

	if _, err := q.Add(ctx, []byte("resize"), &trafikey.JobOptions{Lane: "tenant-42"}); err != nil {
		log.Fatal(err)
	}
	lane := q.Lane("tenant-42")
	if err := lane.SetCap(ctx, 5); err != nil {
		log.Fatal(err)
	}
	if err := lane.Pause(ctx); err != nil {
		log.Fatal(err)
	}
	info, err := lane.Info(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Name, "waiting", info.Waiting, "cap", info.Cap, "paused", info.Paused)
	jobs, err := q.Claim(ctx, time.Minute, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("claimed", len(jobs))
	// Output:
	// tenant-42 waiting 1 cap 5 paused true
	// claimed 0
}

// Operator verbs live on the queue's Admin handle.
func ExampleQueue_Admin() {
	ctx := context.Background()
	q, done := exampleQueue("emails", nil) // trafikey.Open on a throwaway server
	defer done()

	admin := q.Admin()
	if err := admin.Pause(ctx); err != nil {
		log.Fatal(err)
	}
	if err := admin.SetRate(ctx, 100, time.Second); err != nil {
		log.Fatal(err)
	}
	s, err := q.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("paused", s.Paused, "rate", s.RateLimit, "per", s.RateWindow)
	if err := admin.SetRate(ctx, 0, 0); err != nil { // no limit
		log.Fatal(err)
	}
	// Output: paused true rate 100 per 1s
}
