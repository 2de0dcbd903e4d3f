package trafikey_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// soakJobs is how many jobs TestSoak runs: 20,000 in CI, more with
// TRAFIKEY_SOAK_JOBS (e.g. 1000000).
func soakJobs(t *testing.T) int {
	if s := os.Getenv("TRAFIKEY_SOAK_JOBS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "TRAFIKEY_SOAK_JOBS")
		return n
	}
	return 20_000
}

// soakRounds is how many times the soak fills and drains the queue; memory
// is sampled after each drain.
const soakRounds = 5

// memorySample is the server's memory after a round drained.
type memorySample struct {
	used, rss, goHeap int64 // goHeap: the module's, natively
}

// TestSoak runs mixed work in rounds: jobs added one at a time and in
// batches, some delayed, some failing once and retried, some removed before
// they run, and workers that crash mid-job (their jobs come back through
// lease recovery). After each round the queue is drained and checked, and
// the server's memory is sampled: it must come back to where it was, so
// nothing piles up per job.
func TestSoak(t *testing.T) {
	skipInShort(t, "a soak of seconds on each executor")
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			n := soakJobs(t)
			o := valkeyserver.Options{}
			if e.name == "native" {
				o.ModuleArgs = []string{"debug-commands", "yes"}
			}
			s, c, exec := e.start(t, o)
			q, err := trafikey.Open(t.Context(), c, "soak", trafikey.WithRunner(exec, nil))
			require.NoError(t, err)
			sample := func() memorySample {
				info := valkeytest.Do(t, s, "INFO", "memory").(string)
				m := memorySample{used: infoInt(t, info, "used_memory"), rss: infoInt(t, info, "used_memory_rss")}
				if e.name == "native" {
					rt := valkeytest.Do(t, s, "EMQ.DEBUG.RUNTIME").([]any)
					m.goHeap = rt[5].(int64)
				}
				return m
			}

			var failedOnce sync.Map // ids that failed their first attempt
			var handled, crashed atomic.Int64
			handler := func(ctx context.Context, j *trafikey.Job) error {
				handled.Add(1)
				if strings.HasPrefix(string(j.Payload), "flaky") {
					if _, again := failedOnce.LoadOrStore(j.ID, true); !again {
						return errors.New("flaky: first attempt fails")
					}
				}
				return nil
			}
			perRound := n / soakRounds
			var samples []memorySample
			base := sample()
			for round := range soakRounds {
				ctx, cancel := context.WithCancel(t.Context())
				var wg sync.WaitGroup
				// Two steady workers, and a crashing one: it runs a while,
				// then stops with its jobs still held.
				for range 2 {
					w := newWorker(t, q, handler, trafikey.WorkerOptions{Concurrency: 50, Lease: 2 * time.Second, RecoverEvery: 200 * time.Millisecond, PromoteEvery: 20 * time.Millisecond})
					wg.Go(func() { _ = w.Run(ctx) })
				}
				wg.Go(func() {
					for ctx.Err() == nil {
						crashCtx, crash := context.WithCancel(ctx)
						w := newWorker(t, q, func(ctx context.Context, j *trafikey.Job) error {
							if rand.IntN(50) == 0 {
								crash() // the process dies with this job running
								<-ctx.Done()
								crashed.Add(1)
								return ctx.Err()
							}
							return handler(ctx, j)
						}, trafikey.WorkerOptions{Concurrency: 10, Lease: 2 * time.Second, ShutdownTimeout: -1, RecoverEvery: -1, PromoteEvery: -1})
						_ = w.Run(crashCtx)
						crash()
					}
				})

				// Producers: single adds, batches, delays, flaky jobs.
				var removed atomic.Int64
				var pw sync.WaitGroup
				for p := range 4 {
					pw.Go(func() {
						rng := rand.New(rand.NewPCG(uint64(round), uint64(p)))
						for added := 0; added < perRound/4; {
							payload := fmt.Appendf(nil, "job %d/%d", round, added)
							opts := trafikey.JobOptions{MaxAttempts: 100}
							switch r := rng.IntN(100); {
							case r < 10:
								opts.Delay = time.Duration(rng.IntN(50)) * time.Millisecond
							case r < 30:
								payload = append([]byte("flaky "), payload...)
								opts.Backoff, opts.BackoffBase = trafikey.BackoffFixed, 5*time.Millisecond
							}
							if rng.IntN(10) == 0 { // a batch
								jobs := make([]trafikey.JobSpec, 50)
								for i := range jobs {
									jobs[i] = trafikey.JobSpec{Payload: payload, Options: opts}
								}
								_, err := q.AddBatch(ctx, jobs)
								require.NoError(t, err)
								added += len(jobs)
								continue
							}
							id, err := q.Add(ctx, payload, &opts)
							require.NoError(t, err)
							added++
							if rng.IntN(20) == 0 { // removed before it runs, if it has not
								if err := q.Admin().Remove(ctx, id); err == nil {
									removed.Add(1)
								} else if !errors.Is(err, trafikey.ErrState) && !errors.Is(err, trafikey.ErrNotFound) {
									require.NoError(t, err)
								}
							}
						}
					})
				}
				pw.Wait()
				require.Eventually(t, func() bool {
					st, err := q.Stats(t.Context())
					return err == nil && st.Pending+st.Delayed+st.Active == 0
				}, 2*time.Minute, 20*time.Millisecond, "round %d drains", round)
				cancel()
				wg.Wait()
				valkeytest.RequireConsistentQueue(t, s, "soak")
				st, err := q.Stats(t.Context())
				require.NoError(t, err)
				require.Zero(t, st.Dead, "no job exhausts its attempts")
				samples = append(samples, sample())
			}

			st, err := q.Stats(t.Context())
			require.NoError(t, err)
			require.Equal(t, st.TotalAdded, st.TotalCompleted+st.TotalRemoved)
			t.Logf("%s: %d jobs added, %d completed, %d removed, %d retried, %d recovered, %d handler runs, %d crashes",
				e.name, st.TotalAdded, st.TotalCompleted, st.TotalRemoved, st.TotalRetried, st.TotalRecovered, handled.Load(), crashed.Load())
			t.Logf("%s: memory before: used %d B, rss %d B, module Go heap %d B", e.name, base.used, base.rss, base.goHeap)
			for i, m := range samples {
				t.Logf("%s: after round %d: used %d B, rss %d B, module Go heap %d B", e.name, i+1, m.used, m.rss, m.goHeap)
			}
			// Drained, the dataset is the queue's few fixed keys again: no
			// memory per job stays behind, round after round.
			last := samples[len(samples)-1]
			require.Less(t, last.used, samples[0].used+1<<20, "used_memory grew from round 1 to the last")
			if e.name == "native" {
				require.Less(t, last.goHeap, samples[0].goHeap+1<<20, "the module's Go heap grew from round 1 to the last")
			}
		})
	}
}

func infoInt(t *testing.T, info, field string) int64 {
	t.Helper()
	_, rest, ok := strings.Cut(info, "\n"+field+":")
	require.True(t, ok, "no %s in INFO", field)
	v, _, _ := strings.Cut(rest, "\r\n")
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	require.NoError(t, err)
	return n
}
