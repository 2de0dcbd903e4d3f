package trafikey_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/executor"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
)

// countingExecutor runs every call on the real executor it wraps and counts
// the calls per verb, so a test can tell how many calls reached the server
// on either executor (INFO commandstats names only EVALSHA for Lua).
type countingExecutor struct {
	executor.Executor
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingExecutor) Exec(ctx context.Context, v *protocol.Verb, keys, args []string) valkey.ValkeyResult {
	c.mu.Lock()
	c.calls[v.Name]++
	c.mu.Unlock()
	return c.Executor.Exec(ctx, v, keys, args)
}

func (c *countingExecutor) count(v *protocol.Verb) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[v.Name]
}

// counted opens queue name on the bundle's server through a counting
// executor.
func (b *testBundle) counted(t *testing.T, name string, opts *trafikey.QueueOptions) (*trafikey.Queue, *countingExecutor) {
	t.Helper()
	ce := &countingExecutor{Executor: b.exec, calls: map[string]int{}}
	q, err := trafikey.Open(t.Context(), b.client, name, trafikey.WithRunner(ce, opts))
	require.NoError(t, err)
	return q, ce
}

// commandCalls reads the calls of command (lower case) from INFO
// commandstats; module commands are listed with their declared case.
func commandCalls(t *testing.T, b *testBundle, command string) int {
	t.Helper()
	text, _ := b.do(t, "INFO", "commandstats").(string)
	for line := range strings.Lines(text) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || strings.ToLower(strings.TrimPrefix(name, "cmdstat_")) != command {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		n, err := strconv.Atoi(calls)
		require.NoError(t, err, line)
		return n
	}
	return 0
}

// requireFewerCompleteCalls checks that completing n jobs took fewer calls
// than jobs: by the counting executor, and for the native executor also by
// the server's own commandstats.
func requireFewerCompleteCalls(t *testing.T, b *testBundle, ce *countingExecutor, n int) {
	t.Helper()
	calls := ce.count(protocol.CompleteMany)
	require.Positive(t, calls)
	require.Less(t, calls, n, "completions were batched")
	require.Zero(t, ce.count(protocol.Complete))
	if b.exec.Name() == "native" {
		require.Equal(t, calls, commandCalls(t, b, strings.ToLower(protocol.CompleteMany.Command)))
		require.Zero(t, commandCalls(t, b, strings.ToLower(protocol.Complete.Command)))
	}
}

// makeRecovered has job id's lease expire and the job recovered to pending, so
// that its holder's token is refused.
func makeRecovered(t *testing.T, b *testBundle, q *trafikey.Queue, id string) {
	t.Helper()
	b.do(t, "ZADD", protocol.KeysOf(q.Name()).Active, "XX", "1", id)
	mt, err := q.Admin().Maintain(t.Context(), 10)
	requeued := mt.Recovered
	require.NoError(t, err)
	require.Equal(t, 1, requeued)
}

func addN(t *testing.T, q *trafikey.Queue, n int) {
	t.Helper()
	jobs := make([]trafikey.JobSpec, n)
	for i := range jobs {
		jobs[i] = trafikey.JobSpec{Payload: []byte(strconv.Itoa(i))}
	}
	_, err := q.AddBatch(t.Context(), jobs)
	require.NoError(t, err)
}

// holdJobs returns a handler that holds every job until release is closed,
// and a channel closed once n jobs have started: the worker then has n
// handlers running, none finished.
func holdJobs(n int64) (h trafikey.Handler, allStarted <-chan struct{}, release chan struct{}) {
	var started atomic.Int64
	all := make(chan struct{})
	release = make(chan struct{})
	return func(context.Context, *trafikey.Job) error {
		if started.Add(1) == n {
			close(all)
		}
		<-release
		return nil
	}, all, release
}

func TestCompleteManyOutcomes(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		addN(t, b.q, 5)
		jobs, err := b.q.Claim(ctx, time.Minute, 5)
		require.NoError(t, err)
		require.Len(t, jobs, 5)
		ok1, ok2, stale, notActive, gone := jobs[0], jobs[1], jobs[2], jobs[3], jobs[4]

		// stale and notActive are recovered; stale, the lower id, is
		// claimed again, so its first claim's token is stale and
		// notActive waits in pending.
		makeRecovered(t, b, b.q, stale.ID)
		makeRecovered(t, b, b.q, notActive.ID)
		again := claimOne(t, b.q, time.Minute)
		require.Equal(t, stale.ID, again.ID)
		require.NoError(t, gone.Complete(ctx))

		other := b.open(t, "other")
		addN(t, other, 1)
		foreign := claimOne(t, other, time.Minute)

		errs, err := b.q.CompleteMany(ctx, []*trafikey.Job{ok1, stale, notActive, gone, ok2, nil, foreign, ok1})
		require.NoError(t, err)
		require.Len(t, errs, 8)
		require.NoError(t, errs[0])
		require.ErrorIs(t, errs[1], trafikey.ErrLeaseLost)
		require.NotErrorIs(t, errs[1], trafikey.ErrState, "claimed again: stale")
		require.ErrorIs(t, errs[2], trafikey.ErrLeaseLost)
		require.ErrorIs(t, errs[2], trafikey.ErrState, "recovered: not active")
		require.ErrorIs(t, errs[3], trafikey.ErrNotFound)
		require.NoError(t, errs[4])
		require.ErrorIs(t, errs[5], trafikey.ErrInvalid)
		require.ErrorIs(t, errs[6], trafikey.ErrInvalid)
		// The repeat of ok1 went in a later call, after ok1 completed.
		require.ErrorIs(t, errs[7], trafikey.ErrNotFound)

		st := stats(t, b.q)
		require.Equal(t, 3, st.TotalCompleted, "ok1, ok2 and gone")
		require.Equal(t, 1, st.Active, "the second claim of stale")
		require.Equal(t, 1, st.Pending, "notActive")
		info, err := other.Inspect(ctx, foreign.ID)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateActive, info.State, "the other queue's job was not sent")

		// The second claim still completes.
		errs, err = b.q.CompleteMany(ctx, []*trafikey.Job{again})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		errs, err = b.q.CompleteMany(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, errs)
	})
}

func TestCompleteManySplitsLargeBatches(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q, ce := b.counted(t, "large", nil)
		const n = trafikey.MaxBatch + 500
		addN(t, q, n)
		first, err := q.Claim(ctx, time.Minute, trafikey.MaxBatch)
		require.NoError(t, err)
		rest, err := q.Claim(ctx, time.Minute, trafikey.MaxBatch)
		require.NoError(t, err)
		errs, err := q.CompleteMany(ctx, append(first, rest...))
		require.NoError(t, err)
		require.Len(t, errs, n)
		for i, e := range errs {
			require.NoError(t, e, "job %d", i)
		}
		require.Equal(t, 2, ce.count(protocol.CompleteMany))
		require.Equal(t, trafikey.Stats{TotalAdded: n, TotalCompleted: n}, stats(t, q))
	})
}

func TestCompleteManyCallError(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		addN(t, b.q, 2)
		jobs, err := b.q.Claim(ctx, time.Minute, 2)
		require.NoError(t, err)
		// Another wire version took the queue over: the fence refuses the
		// call, and every job carries the refusal.
		b.do(t, "SET", protocol.KeysOf(b.q.Name()).Version, "999")
		errs, err := b.q.CompleteMany(ctx, jobs)
		require.ErrorIs(t, err, trafikey.ErrWire)
		for _, e := range errs {
			require.ErrorIs(t, e, trafikey.ErrWire)
		}
	})
}

func TestWorkerBatchesCompletions(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q, ce := b.counted(t, "batched", nil)
		const n, concurrency = 2000, 100
		addN(t, q, n)

		// The first handlers wait for one another, so that many finish at
		// once whatever the scheduling.
		var started atomic.Int64
		gate := make(chan struct{})
		var mu sync.Mutex
		outcomes := map[string]trafikey.Outcome{}
		var reported atomic.Int64
		w := newWorker(t, q, func(ctx context.Context, j *trafikey.Job) error {
			if started.Add(1) == concurrency {
				close(gate)
			}
			<-gate
			return nil
		}, trafikey.WorkerOptions{Concurrency: concurrency, OnDone: func(j *trafikey.Job, o trafikey.Outcome, err error) {
			if err != nil {
				t.Errorf("job %s: %v", j.ID, err)
			}
			mu.Lock()
			outcomes[j.ID] = o
			mu.Unlock()
			reported.Add(1)
		}})
		stop := runWorker(t, w)
		require.Eventually(t, func() bool { return reported.Load() == n }, eventually, tick)
		require.NoError(t, stop())

		require.Len(t, outcomes, n)
		for id, o := range outcomes {
			require.Equal(t, trafikey.OutcomeCompleted, o, "job %s", id)
		}
		require.Equal(t, trafikey.WorkerInfo{Processed: n}, counters(w.Info()))
		require.Equal(t, trafikey.Stats{TotalAdded: n, TotalCompleted: n}, stats(t, q))
		requireFewerCompleteCalls(t, b, ce, n)
	})
}

func TestWorkerStaleJobInBatchIsLost(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		const n = 10
		addN(t, b.q, n)
		var started atomic.Int64
		allStarted := make(chan struct{})
		release := make(chan struct{})
		type result struct {
			outcome trafikey.Outcome
			err     error
		}
		var mu sync.Mutex
		results := map[string]result{} // by id/attempt
		w := newWorker(t, b.q, func(ctx context.Context, j *trafikey.Job) error {
			if j.Attempt == 1 && started.Add(1) == n {
				close(allStarted)
			}
			<-release
			return nil
		}, trafikey.WorkerOptions{
			Concurrency: n, Lease: time.Minute, RecoverEvery: -1,
			OnDone: func(j *trafikey.Job, o trafikey.Outcome, err error) {
				mu.Lock()
				results[j.ID+"/"+strconv.Itoa(j.Attempt)] = result{o, err}
				mu.Unlock()
			},
		})
		stop := runWorker(t, w)
		<-allStarted

		// Job 3 is recovered and claimed by someone else; job 7 is
		// recovered and waits in pending (the worker claims it again once
		// a slot frees, so its first report is stale, not active, or finds
		// the row gone when the second attempt's report went first).
		makeRecovered(t, b, b.q, "3")
		thief := claimOne(t, b.q, time.Minute)
		require.Equal(t, "3", thief.ID)
		makeRecovered(t, b, b.q, "7")
		close(release)

		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			_, again := results["7/2"]
			return len(results) == n+1 && again
		}, eventually, tick)
		require.NoError(t, stop())

		mu.Lock()
		defer mu.Unlock()
		for id, r := range results {
			switch id {
			case "3/1":
				require.Equal(t, trafikey.OutcomeLeaseLost, r.outcome)
				require.ErrorIs(t, r.err, trafikey.ErrLeaseLost)
			case "7/1":
				require.Equal(t, trafikey.OutcomeLeaseLost, r.outcome)
				// lease lost (not active while it waits in pending, stale
				// once claimed again), or gone once that claim completed first
				require.True(t, errors.Is(r.err, trafikey.ErrLeaseLost) || errors.Is(r.err, trafikey.ErrNotFound), "%v", r.err)
			default:
				require.Equal(t, trafikey.OutcomeCompleted, r.outcome, id)
				require.NoError(t, r.err, id)
			}
		}
		require.Equal(t, trafikey.WorkerInfo{Processed: n - 1, Lost: 2}, counters(w.Info()))
		require.NoError(t, thief.Complete(ctx))
		require.Equal(t, trafikey.Stats{TotalAdded: n, TotalCompleted: n, TotalRecovered: 2}, stats(t, b.q))
	})
}

func TestWorkerShutdownReportsPendingCompletions(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		const n = 20
		addN(t, b.q, n)
		h, allStarted, release := holdJobs(n)
		var reported atomic.Int64
		w := newWorker(t, b.q, h, trafikey.WorkerOptions{
			Concurrency: n, Lease: time.Minute, ShutdownTimeout: time.Minute,
			OnDone: func(_ *trafikey.Job, o trafikey.Outcome, err error) {
				if o == trafikey.OutcomeCompleted && err == nil {
					reported.Add(1)
				}
			},
		})
		stop := runWorker(t, w)
		<-allStarted

		// Writes pause, so the completions queue up behind calls the
		// server holds; shutdown begins with all of them pending.
		b.do(t, "CLIENT", "PAUSE", "60000", "WRITE")
		close(release)
		stopped := make(chan error, 1)
		go func() { stopped <- stop() }()
		select {
		case err := <-stopped:
			b.do(t, "CLIENT", "UNPAUSE")
			t.Fatalf("Run returned with completions pending: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		b.do(t, "CLIENT", "UNPAUSE")
		require.NoError(t, <-stopped)
		require.Equal(t, int64(n), reported.Load(), "every completion was reported before Run returned")
		require.Equal(t, trafikey.WorkerInfo{Processed: n}, counters(w.Info()))
		require.Equal(t, trafikey.Stats{TotalAdded: n, TotalCompleted: n}, stats(t, b.q))
	})
}

func TestConcurrentAddsCoalesce(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q, ce := b.counted(t, "coalesced", nil)
		const producers, each = 50, 40
		const n = producers * each
		var mu sync.Mutex
		ids := map[string]string{}
		var wg sync.WaitGroup
		for p := range producers {
			wg.Go(func() {
				for i := range each {
					payload := fmt.Sprintf("%d-%d", p, i)
					id, err := q.Add(ctx, []byte(payload), nil)
					if err != nil {
						t.Errorf("add %s: %v", payload, err)
						return
					}
					mu.Lock()
					if prev, dup := ids[id]; dup {
						t.Errorf("id %s given to %s and %s", id, prev, payload)
					}
					ids[id] = payload
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Len(t, ids, n)
		calls := ce.count(protocol.Add)
		require.Less(t, calls, n, "adds were coalesced")
		if b.exec.Name() == "native" {
			require.Equal(t, calls, commandCalls(t, b, strings.ToLower(protocol.Add.Command)))
		}
		require.Equal(t, n, stats(t, q).Pending)

		// Every job landed under the id its caller got.
		for _, id := range []string{"1", strconv.Itoa(n / 2), strconv.Itoa(n)} {
			info, err := q.Inspect(ctx, id)
			require.NoError(t, err)
			require.Equal(t, ids[id], string(info.Payload))
		}
	})
}

func TestAddCoalescingOff(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q, ce := b.counted(t, "separate", &trafikey.QueueOptions{SeparateAdds: true})
		const n = 200
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				_, err := q.Add(t.Context(), []byte("x"), nil)
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		require.Equal(t, n, ce.count(protocol.Add))
		require.Equal(t, n, stats(t, q).Pending)
	})
}

func TestCoalescedAddsRefusedTogether(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		// The fence refuses every ADD: each caller gets the refusal.
		b.do(t, "SET", protocol.KeysOf(b.q.Name()).Version, "999")
		const n = 100
		var wg sync.WaitGroup
		var refused atomic.Int64
		for range n {
			wg.Go(func() {
				_, err := b.q.Add(t.Context(), []byte("x"), nil)
				if errors.Is(err, trafikey.ErrWire) {
					refused.Add(1)
				} else {
					t.Errorf("add: %v, want ErrWire", err)
				}
			})
		}
		wg.Wait()
		require.Equal(t, int64(n), refused.Load())
	})
}

func TestCoalescedAddsKeepTheirOwnRefusals(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		held, err := b.q.Add(ctx, []byte("holder"), &trafikey.JobOptions{UniqueKey: "k", UniqueTTL: time.Hour})
		require.NoError(t, err)
		// A bad option or a held unique key refuses its own job only, while
		// the jobs around it are added.
		const n = 300
		var wg sync.WaitGroup
		var good, invalid, dup atomic.Int64
		for i := range n {
			wg.Go(func() {
				var opts trafikey.JobOptions
				switch i % 3 {
				case 1:
					opts = trafikey.JobOptions{Priority: -1}
				case 2:
					opts = trafikey.JobOptions{UniqueKey: "k", UniqueTTL: time.Hour}
				}
				_, err := b.q.Add(ctx, []byte(strconv.Itoa(i)), &opts)
				var de *trafikey.Error
				switch {
				case err == nil && i%3 == 0:
					good.Add(1)
				case errors.Is(err, trafikey.ErrInvalid) && i%3 == 1:
					invalid.Add(1)
				case errors.Is(err, trafikey.ErrDuplicate) && errors.As(err, &de) && de.JobID == held && i%3 == 2:
					dup.Add(1)
				default:
					t.Errorf("job %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		require.Equal(t, [3]int64{n / 3, n / 3, n / 3}, [3]int64{good.Load(), invalid.Load(), dup.Load()})
		require.Equal(t, n/3+1, stats(t, b.q).Pending)
	})
}

func TestAddCancelled(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := b.q.Add(ctx, []byte("x"), nil)
		require.ErrorIs(t, err, context.Canceled)

		// Writes pause, so calls stay in flight; callers whose deadline
		// passes meanwhile are answered with it.
		b.do(t, "CLIENT", "PAUSE", "60000", "WRITE")
		var wg sync.WaitGroup
		const n = 20
		var expired atomic.Int64
		for range n {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
				defer cancel()
				_, err := b.q.Add(ctx, []byte("late"), nil)
				if errors.Is(err, context.DeadlineExceeded) {
					expired.Add(1)
				} else {
					t.Errorf("add: %v, want the deadline", err)
				}
			})
		}
		wg.Wait()
		b.do(t, "CLIENT", "UNPAUSE")
		require.Equal(t, int64(n), expired.Load())

		// The queue works on. (Which of those jobs were added depends on
		// whether they were sent; batch_internal_test.go pins that down.)
		_, err = b.q.Add(t.Context(), []byte("after"), nil)
		require.NoError(t, err)
	})
}
