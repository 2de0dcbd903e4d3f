package trafikey_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
)

// TestWorkerClaimLoopsKeepConcurrency runs two workers with several claim
// loops each over the same queue. Every job runs once; no worker ever runs
// more handlers at once than its concurrency, and the server never holds
// more claimed jobs than the two concurrencies together (sampled from the
// active set while they run): the loops never claim beyond the free slots.
func TestWorkerClaimLoopsKeepConcurrency(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		const n = 3000
		addN(t, b.q, n)
		concurrency := [2]int{7, 5}
		loops := [2]int{3, 5}

		var mu sync.Mutex
		runs := map[string]int{}
		var inFlight, most [2]atomic.Int64
		var done atomic.Int64
		handler := func(i int) trafikey.Handler {
			return func(ctx context.Context, j *trafikey.Job) error {
				now := inFlight[i].Add(1)
				for m := most[i].Load(); now > m && !most[i].CompareAndSwap(m, now); m = most[i].Load() {
				}
				mu.Lock()
				runs[string(j.Payload)]++
				mu.Unlock()
				if k, _ := strconv.Atoi(string(j.Payload)); k%3 == 0 {
					time.Sleep(time.Millisecond) // some jobs take a while, so slots free unevenly
				}
				inFlight[i].Add(-1)
				return nil
			}
		}
		onDone := func(_ *trafikey.Job, o trafikey.Outcome, err error) {
			if o == trafikey.OutcomeCompleted {
				done.Add(1)
			} else {
				t.Errorf("outcome %v: %v", o, err)
			}
		}
		var workers [2]*trafikey.Worker
		var stops [2]func() error
		for i := range workers {
			workers[i] = newWorker(t, b.q, handler(i), trafikey.WithClaimLoops(trafikey.WorkerOptions{
				Concurrency: concurrency[i], OnDone: onDone,
			}, loops[i]))
			stops[i] = runWorker(t, workers[i])
		}

		active := protocol.KeysOf(b.q.Name()).Active
		var mostActive int64
		for done.Load() < n {
			a, _ := b.do(t, "ZCARD", active).(int64)
			mostActive = max(mostActive, a)
			time.Sleep(100 * time.Microsecond)
		}
		for _, stop := range stops {
			require.NoError(t, stop())
		}
		for i := range workers {
			require.LessOrEqual(t, most[i].Load(), int64(concurrency[i]), "handlers of worker %d at once", i)
		}
		require.LessOrEqual(t, mostActive, int64(concurrency[0]+concurrency[1]), "jobs claimed at once")
		require.Len(t, runs, n)
		for p, c := range runs {
			require.Equal(t, 1, c, "job %s ran %d times", p, c)
		}
		require.Equal(t, n, workers[0].Info().Processed+workers[1].Info().Processed)
		require.Equal(t, trafikey.Stats{TotalAdded: n, TotalCompleted: n}, stats(t, b.q))
	})
}

// TestWorkerShutdownRunsClaimsInFlight stops a worker while its CLAIM is
// held by the server (writes paused): Run waits for the claim's reply and
// runs the jobs it brings before returning, so none is left claimed with
// no worker, and the rest stay pending for the next worker.
func TestWorkerShutdownRunsClaimsInFlight(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		const n = 100
		addN(t, b.q, n)
		var ran atomic.Int64
		w := newWorker(t, b.q, func(context.Context, *trafikey.Job) error {
			ran.Add(1)
			return nil
		}, trafikey.WithClaimLoops(trafikey.WorkerOptions{
			Concurrency: 10,
			// Only claims write, so the paused client shows a CLAIM.
			PromoteEvery: -1, RecoverEvery: -1, ScheduleEvery: -1,
		}, 3))

		b.do(t, "CLIENT", "PAUSE", "60000", "WRITE")
		unpaused := false
		unpause := func() {
			if !unpaused {
				unpaused = true
				b.do(t, "CLIENT", "UNPAUSE")
			}
		}
		t.Cleanup(unpause)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ran1 := make(chan error, 1)
		go func() { ran1 <- w.Run(ctx) }()
		require.Eventually(t, func() bool { return heldClaims(t, b) >= 1 }, eventually, tick, "a CLAIM waits in the server")
		cancel()
		unpause()
		require.NoError(t, <-ran1)

		claimed := int(ran.Load())
		require.Positive(t, claimed, "the claim in flight brought jobs, which ran")
		require.Equal(t, trafikey.WorkerInfo{Processed: claimed}, counters(w.Info()))
		st := stats(t, b.q)
		require.Equal(t, trafikey.Stats{TotalAdded: n, TotalCompleted: claimed, Pending: n - claimed}, st,
			"nothing left claimed: every claimed job was completed")

		// The next worker runs the rest, each job once.
		var done atomic.Int64
		w2 := newWorker(t, b.q, func(context.Context, *trafikey.Job) error { return nil }, trafikey.WorkerOptions{
			Concurrency: 10,
			OnDone: func(*trafikey.Job, trafikey.Outcome, error) {
				done.Add(1)
			},
		})
		stop := runWorker(t, w2)
		require.Eventually(t, func() bool { return int(done.Load()) == n-claimed }, eventually, tick)
		require.NoError(t, stop())
		require.Equal(t, trafikey.Stats{TotalAdded: n, TotalCompleted: n}, stats(t, b.q))
	})
}

// heldClaims counts the server's clients held with a CLAIM (EMQ.CLAIM, or
// EVALSHA on the Lua executor) by a pause.
func heldClaims(t *testing.T, b *testBundle) int {
	t.Helper()
	list, _ := b.do(t, "CLIENT", "LIST").(string)
	return countBlocked(list, "emq.claim") + countBlocked(list, "evalsha")
}
