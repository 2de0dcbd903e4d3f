package trafikey_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/executor"
)

// newWorker builds a worker with test-friendly timers unless opts set them.
func newWorker(t *testing.T, q *trafikey.Queue, h trafikey.Handler, opts trafikey.WorkerOptions) *trafikey.Worker {
	t.Helper()
	if opts.PromoteEvery == 0 {
		opts.PromoteEvery = 20 * time.Millisecond
	}
	if opts.RecoverEvery == 0 {
		opts.RecoverEvery = 20 * time.Millisecond
	}
	w, err := trafikey.NewWorker(q, h, opts)
	require.NoError(t, err)
	return w
}

func TestWorkerProcessesEachJobOnce(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		const n = 3000
		jobs := make([]trafikey.JobSpec, n)
		for i := range jobs {
			jobs[i] = trafikey.JobSpec{Payload: []byte(strconv.Itoa(i))}
		}
		_, err := b.q.AddBatch(t.Context(), jobs)
		require.NoError(t, err)

		var mu sync.Mutex
		runs := map[string]int{}
		var done atomic.Int64
		handler := func(ctx context.Context, j *trafikey.Job) error {
			mu.Lock()
			runs[string(j.Payload)]++
			mu.Unlock()
			return nil
		}
		onDone := func(j *trafikey.Job, o trafikey.Outcome, err error) {
			if o == trafikey.OutcomeCompleted {
				done.Add(1)
			}
		}
		// Two workers on the same queue, as two processes would be.
		w1 := newWorker(t, b.q, handler, trafikey.WorkerOptions{Concurrency: 16, OnDone: onDone})
		w2 := newWorker(t, b.q, handler, trafikey.WorkerOptions{Concurrency: 7, OnDone: onDone})
		stop1, stop2 := runWorker(t, w1), runWorker(t, w2)
		require.Eventually(t, func() bool { return done.Load() == n }, eventually, tick)
		require.NoError(t, stop1())
		require.NoError(t, stop2())

		require.Len(t, runs, n)
		for p, c := range runs {
			require.Equal(t, 1, c, "job %s ran %d times", p, c)
		}
		require.Equal(t, n, w1.Info().Processed+w2.Info().Processed)
		st := stats(t, b.q)
		require.Equal(t, trafikey.Stats{TotalAdded: n, TotalCompleted: n}, st)
	})
}

func TestWorkerHeartbeatKeepsLongJob(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		id, err := b.q.Add(t.Context(), []byte("long"), nil)
		require.NoError(t, err)
		var runs atomic.Int64
		started := make(chan struct{})
		done := make(chan trafikey.Outcome, 1)
		w := newWorker(t, b.q, func(ctx context.Context, j *trafikey.Job) error {
			runs.Add(1)
			close(started)
			// Three leases long; another worker recovers expired leases
			// every 20 ms, so only the heartbeat keeps this claim.
			select {
			case <-time.After(1200 * time.Millisecond):
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}, trafikey.WorkerOptions{
			Lease: 400 * time.Millisecond, HeartbeatEvery: 100 * time.Millisecond,
			OnDone: func(_ *trafikey.Job, o trafikey.Outcome, _ error) { done <- o },
		})
		runWorker(t, w)
		<-started
		thief := newWorker(t, b.q, func(context.Context, *trafikey.Job) error {
			runs.Add(1)
			return nil
		}, trafikey.WorkerOptions{})
		runWorker(t, thief)

		select {
		case o := <-done:
			require.Equal(t, trafikey.OutcomeCompleted, o)
		case <-time.After(eventually):
			t.Fatal("the long job did not finish")
		}
		require.Equal(t, int64(1), runs.Load(), "nobody else ran the job")
		st := stats(t, b.q)
		require.Zero(t, st.TotalRecovered)
		require.Equal(t, 1, st.TotalCompleted)
		_, err = b.q.Inspect(t.Context(), id)
		require.ErrorIs(t, err, trafikey.ErrNotFound)
	})
}

func TestWorkerCrashRecovery(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		_, err := b.q.Add(ctx, []byte("crash"), nil)
		require.NoError(t, err)

		// The first worker's process "dies" mid-job: its Run context ends,
		// it does not wait for the handler, so no heartbeat, no report.
		held := make(chan *trafikey.Job, 1)
		release := make(chan struct{})
		defer close(release)
		var firstOutcome atomic.Value
		crashed := newWorker(t, b.q, func(ctx context.Context, j *trafikey.Job) error {
			held <- j
			<-release
			return nil
		}, trafikey.WorkerOptions{
			Lease: 300 * time.Millisecond, ShutdownTimeout: -1, RecoverEvery: -1,
			OnDone: func(_ *trafikey.Job, o trafikey.Outcome, _ error) { firstOutcome.Store(o) },
		})
		stopCrashed := runWorker(t, crashed)
		first := <-held
		require.ErrorIs(t, stopCrashed(), trafikey.ErrShutdownTimeout)

		// The lease expires; another worker recovers and claims the job.
		second := make(chan *trafikey.Job, 1)
		finish := make(chan struct{})
		rescuer := newWorker(t, b.q, func(ctx context.Context, j *trafikey.Job) error {
			second <- j
			<-finish
			return nil
		}, trafikey.WorkerOptions{Lease: time.Minute})
		runWorker(t, rescuer)
		var j2 *trafikey.Job
		select {
		case j2 = <-second:
		case <-time.After(eventually):
			t.Fatal("the job was not recovered")
		}
		require.Equal(t, first.ID, j2.ID)
		require.Equal(t, first.Attempt+1, j2.Attempt)

		// The first worker comes back to report: refused, the job is the
		// rescuer's now.
		require.ErrorIs(t, first.Complete(ctx), trafikey.ErrLeaseLost)
		close(finish)
		require.Eventually(t, func() bool { return stats(t, b.q).TotalCompleted == 1 }, eventually, tick)
		require.Equal(t, 1, stats(t, b.q).TotalRecovered)
		require.Nil(t, firstOutcome.Load(), "the abandoned handler has not reported")
	})
}

func TestWorkerRetriesWithBackoff(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		id, err := b.q.Add(t.Context(), []byte("flaky"), &trafikey.JobOptions{MaxAttempts: 5, Backoff: trafikey.BackoffExponential, BackoffBase: 10 * time.Millisecond})
		require.NoError(t, err)
		var mu sync.Mutex
		var attempts []int
		completed := make(chan struct{})
		w := newWorker(t, b.q, func(ctx context.Context, j *trafikey.Job) error {
			mu.Lock()
			attempts = append(attempts, j.Attempt)
			mu.Unlock()
			if j.Attempt < 3 {
				return fmt.Errorf("attempt %d failed", j.Attempt)
			}
			return nil
		}, trafikey.WorkerOptions{OnDone: func(_ *trafikey.Job, o trafikey.Outcome, _ error) {
			if o == trafikey.OutcomeCompleted {
				close(completed)
			}
		}})
		runWorker(t, w)
		select {
		case <-completed:
		case <-time.After(eventually):
			t.Fatal("the job did not complete")
		}
		mu.Lock()
		require.Equal(t, []int{1, 2, 3}, attempts)
		mu.Unlock()
		require.Equal(t, trafikey.WorkerInfo{Processed: 1, Failed: 2, Retried: 2}, counters(w.Info()))
		st := stats(t, b.q)
		require.Equal(t, 2, st.TotalFailed)
		require.Equal(t, 2, st.TotalRetried)
		require.Equal(t, 1, st.TotalCompleted)
		_, err = b.q.Inspect(t.Context(), id)
		require.ErrorIs(t, err, trafikey.ErrNotFound)
	})
}

func TestWorkerPanicAndSkipRetry(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		panicky, err := b.q.Add(ctx, []byte("panic"), &trafikey.JobOptions{MaxAttempts: 1})
		require.NoError(t, err)
		final, err := b.q.Add(ctx, []byte("skip"), &trafikey.JobOptions{MaxAttempts: 5})
		require.NoError(t, err)
		var dead atomic.Int64
		var panicErr atomic.Value
		w := newWorker(t, b.q, func(ctx context.Context, j *trafikey.Job) error {
			if string(j.Payload) == "panic" {
				panic("boom")
			}
			return trafikey.SkipRetry(errors.New("bad input"))
		}, trafikey.WorkerOptions{OnDone: func(j *trafikey.Job, o trafikey.Outcome, err error) {
			if string(j.Payload) == "panic" {
				panicErr.Store(err)
			}
			if o == trafikey.OutcomeDead {
				dead.Add(1)
			}
		}})
		runWorker(t, w)
		require.Eventually(t, func() bool { return dead.Load() == 2 }, eventually, tick)

		var pe *trafikey.PanicError
		require.ErrorAs(t, panicErr.Load().(error), &pe)
		require.Equal(t, "boom", pe.Value)
		info, err := b.q.Inspect(ctx, panicky)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDead, info.State)
		require.Contains(t, info.LastError, "panic: boom")
		require.Contains(t, info.LastError, "goroutine ", "the stack is in the text")

		info, err = b.q.Inspect(ctx, final)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDead, info.State)
		require.Equal(t, "bad input", info.LastError)
		require.Equal(t, 1, info.Attempts, "SkipRetry used one attempt of five")
		require.Equal(t, trafikey.WorkerInfo{Failed: 2, Dead: 2}, counters(w.Info()))
	})
}

func TestWorkerGracefulShutdown(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		for i := range 5 {
			_, err := b.q.Add(ctx, []byte(strconv.Itoa(i)), nil)
			require.NoError(t, err)
		}
		started := make(chan struct{}, 5)
		release := make(chan struct{})
		var calls atomic.Int64
		w := newWorker(t, b.q, func(ctx context.Context, j *trafikey.Job) error {
			calls.Add(1)
			started <- struct{}{}
			<-release
			return nil
		}, trafikey.WorkerOptions{Concurrency: 2, ShutdownTimeout: time.Minute})
		stop := runWorker(t, w)
		<-started
		<-started

		stopped := make(chan error, 1)
		go func() { stopped <- stop() }()
		select {
		case err := <-stopped:
			t.Fatalf("Run returned with handlers running: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		close(release)
		require.NoError(t, <-stopped)

		require.Equal(t, int64(2), calls.Load(), "nothing claimed after shutdown began")
		st := stats(t, b.q)
		require.Equal(t, 2, st.TotalCompleted)
		require.Equal(t, 3, st.Pending)
		require.Zero(t, st.Active)
		require.Zero(t, st.TotalFailed)
	})
}

func TestWorkerShutdownTimeoutLeavesJobsToRecovery(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		id, err := b.q.Add(ctx, []byte("stuck"), nil)
		require.NoError(t, err)
		started := make(chan struct{})
		outcome := make(chan trafikey.Outcome, 1)
		w := newWorker(t, b.q, func(ctx context.Context, j *trafikey.Job) error {
			close(started)
			<-ctx.Done() // only the shutdown timeout ends it
			return ctx.Err()
		}, trafikey.WorkerOptions{
			ShutdownTimeout: 50 * time.Millisecond,
			OnDone:          func(_ *trafikey.Job, o trafikey.Outcome, _ error) { outcome <- o },
		})
		stop := runWorker(t, w)
		<-started
		require.ErrorIs(t, stop(), trafikey.ErrShutdownTimeout)
		require.Equal(t, trafikey.OutcomeAbandoned, <-outcome)

		info, err := b.q.Inspect(ctx, id)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateActive, info.State, "not failed: left to lease recovery")
		require.Zero(t, stats(t, b.q).TotalFailed)
	})
}

func TestWorkerLostLeaseCancelsHandler(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		_, err := b.q.Add(ctx, []byte("x"), nil)
		require.NoError(t, err)
		started := make(chan struct{})
		cause := make(chan error, 1)
		outcome := make(chan trafikey.Outcome, 1)
		w := newWorker(t, b.q, func(ctx context.Context, j *trafikey.Job) error {
			if j.Attempt > 1 {
				return nil // the recovered job, claimed again
			}
			close(started)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return ctx.Err()
		}, trafikey.WorkerOptions{
			Lease: 200 * time.Millisecond, HeartbeatEvery: 20 * time.Millisecond, RecoverEvery: -1,
			OnDone: func(j *trafikey.Job, o trafikey.Outcome, _ error) {
				if j.Attempt == 1 {
					outcome <- o
				}
			},
		})
		runWorker(t, w)
		<-started
		// The lease runs out behind the worker's back (a long GC pause, a
		// network partition) and the job is recovered. A heartbeat landing
		// between the two steps renews the lease, so repeat until they
		// take effect.
		require.Eventually(t, func() bool {
			expireLeases(t, b, b.q)
			mt, err := b.q.Admin().Maintain(ctx, 10)
			requeued := mt.Recovered
			require.NoError(t, err)
			return requeued == 1
		}, eventually, tick)

		select {
		case err := <-cause:
			require.ErrorIs(t, err, trafikey.ErrLeaseLost)
		case <-time.After(eventually):
			t.Fatal("the handler was not cancelled")
		}
		require.Equal(t, trafikey.OutcomeLeaseLost, <-outcome)
		require.Equal(t, 1, w.Info().Lost)
	})
}

func TestWorkerIdleWakeUpWithoutPolling(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ran := make(chan struct{}, 1)
		w := newWorker(t, b.q, func(context.Context, *trafikey.Job) error {
			ran <- struct{}{}
			return nil
		}, trafikey.WorkerOptions{
			// Without the signal the worker would not look again for an
			// hour, and no timer promotes or recovers into pending.
			PollInterval: time.Hour, PromoteEvery: -1, RecoverEvery: -1,
		})
		runWorker(t, w)
		require.Eventually(t, func() bool { return blockedClients(t, b) == 1 }, eventually, tick,
			"the idle worker blocks on the signal")

		for range 3 {
			_, err := b.q.Add(t.Context(), []byte("wake"), nil)
			require.NoError(t, err)
			select {
			case <-ran:
			case <-time.After(eventually):
				t.Fatal("the idle worker did not wake for the new job")
			}
			require.Eventually(t, func() bool { return blockedClients(t, b) == 1 }, eventually, tick)
		}
	})
}

// An idle worker on the native executor waits in a CLAIM with a block time,
// answered by the ADD itself: it never waits on the signal list. On Lua it
// waits in BLPOP on the signal list.
func TestWorkerIdleWaitsInClaim(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		native := b.exec.Name() == "native"
		ran := make(chan string, 1)
		w := newWorker(t, b.q, func(_ context.Context, j *trafikey.Job) error {
			ran <- string(j.Payload)
			return nil
		}, trafikey.WorkerOptions{PollInterval: time.Hour, PromoteEvery: -1, RecoverEvery: -1})
		stop := runWorker(t, w)
		for i := range 3 {
			require.Eventually(t, func() bool {
				if native {
					return blockedIn(t, b, "emq.claim") == 1
				}
				return blockedIn(t, b, "blpop") == 1
			}, eventually, tick, "the idle worker blocks")
			payload := strconv.Itoa(i)
			_, err := b.q.Add(t.Context(), []byte(payload), nil)
			require.NoError(t, err)
			select {
			case got := <-ran:
				require.Equal(t, payload, got)
			case <-time.After(eventually):
				t.Fatal("the idle worker did not take the new job")
			}
		}
		require.Eventually(t, func() bool { return stats(t, b.q).TotalCompleted == 3 }, eventually, tick)
		info := b.do(t, "INFO", "commandstats").(string)
		if native {
			// the signal list is never waited on: no BLPOP at all
			require.NotContains(t, info, "cmdstat_blpop:")
			require.Equal(t, 0, blockedIn(t, b, "blpop"))
		} else {
			require.Contains(t, info, "cmdstat_blpop:")
		}
		// Closing the worker while it waits releases the wait at once (an
		// hour's poll interval otherwise) and claims nothing.
		require.Eventually(t, func() bool { return blockedClients(t, b) == 1 }, eventually, tick)
		require.NoError(t, stop())
		require.Eventually(t, func() bool { return blockedClients(t, b) == 0 }, eventually, tick)
		_, err := b.q.Add(t.Context(), []byte("after"), nil)
		require.NoError(t, err)
		st := stats(t, b.q)
		require.Equal(t, 1, st.Pending)
		require.Equal(t, 0, st.Active)
	})
}

func TestWorkerFullBatchWakesIdlePeer(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		release := make(chan struct{})
		defer close(release)
		var byWorker [2]atomic.Int64
		handler := func(i int) trafikey.Handler {
			return func(ctx context.Context, j *trafikey.Job) error {
				byWorker[i].Add(1)
				<-release
				return nil
			}
		}
		opts := trafikey.WorkerOptions{Concurrency: 2, PollInterval: time.Hour, PromoteEvery: -1, RecoverEvery: -1}
		runWorker(t, newWorker(t, b.q, handler(0), opts))
		runWorker(t, newWorker(t, b.q, handler(1), opts))
		require.Eventually(t, func() bool { return blockedClients(t, b) == 2 }, eventually, tick)

		// One ADD signals once; the worker that wakes takes a full batch
		// and passes the signal on, so the other takes the rest.
		_, err := b.q.AddBatch(t.Context(), []trafikey.JobSpec{{Payload: []byte("1")}, {Payload: []byte("2")}, {Payload: []byte("3")}, {Payload: []byte("4")}})
		require.NoError(t, err)
		require.Eventually(t, func() bool { return byWorker[0].Load() == 2 && byWorker[1].Load() == 2 }, eventually, tick)
	})
}

func TestNewWorkerOptions(t *testing.T) {
	t.Parallel()
	q, err := trafikey.Open(t.Context(), nil, "opts", trafikey.WithRunner(executor.NewNative(nil), &trafikey.QueueOptions{NoInstall: true}))
	require.NoError(t, err)
	h := func(context.Context, *trafikey.Job) error { return nil }
	for name, o := range map[string]trafikey.WorkerOptions{
		"concurrency":    {Concurrency: -1},
		"lease":          {Lease: time.Microsecond},
		"1ms lease":      {Lease: time.Millisecond},
		"99ms lease":     {Lease: 99 * time.Millisecond},
		"long lease":     {Lease: 25 * time.Hour},
		"slow heartbeat": {Lease: time.Second, HeartbeatEvery: 600 * time.Millisecond},
		"poll":           {PollInterval: time.Microsecond},
		"timeout":        {Timeout: -time.Second},
		"report timeout": {ReportTimeout: -time.Second},
		"claim loops":    trafikey.WithClaimLoops(trafikey.WorkerOptions{}, -1),
		"more loops":     trafikey.WithClaimLoops(trafikey.WorkerOptions{Concurrency: 3}, 4),
		"default loops":  trafikey.WithClaimLoops(trafikey.WorkerOptions{}, 11), // above the default concurrency
	} {
		_, err := trafikey.NewWorker(q, h, o)
		require.ErrorIs(t, err, trafikey.ErrInvalid, name)
	}
	_, err = trafikey.NewWorker(q, nil, trafikey.WorkerOptions{})
	require.ErrorIs(t, err, trafikey.ErrInvalid)
	_, err = trafikey.NewWorker(q, h, trafikey.WorkerOptions{})
	require.NoError(t, err)
}
