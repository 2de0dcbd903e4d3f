package trafikey_test

import (
	"bytes"
	"context"
	"log/slog"
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

// outageFor is how long TestOutageRunsNoJobTwice keeps the server down: 6 s
// in CI, longer with TRAFIKEY_OUTAGE_SECONDS (e.g. 30).
func outageFor(t *testing.T) time.Duration {
	if s := os.Getenv("TRAFIKEY_OUTAGE_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "TRAFIKEY_OUTAGE_SECONDS")
		return time.Duration(n) * time.Second
	}
	return 6 * time.Second
}

// syncBuffer is a log sink shared by the worker's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOutageRunsNoJobTwice stops the server (SIGTERM, AOF on) for longer
// than the lease while a worker runs jobs, then starts it again. Handlers
// return well within their lease, so every job runs exactly once: the
// reports that fail during the outage are retried, the worker renews its
// own leases before its first RECOVER, and nothing is lost.
func TestOutageRunsNoJobTwice(t *testing.T) {
	skipInShort(t, "a server outage and restart")
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			outage := outageFor(t)
			recovered, logs := runThroughFault(t, e, valkeyserver.Options{AOF: true}, 5*time.Second, func(s *valkeyserver.Server) {
				require.NoError(t, s.RestartAfter(t.Context(), outage))
			})
			t.Logf("outage %v: %d jobs, each run once; %d recovered from claims the outage cut off; %d log lines", outage, faultJobs, recovered, strings.Count(logs, "\n"))
		})
	}
}

// TestReloadRunsNoJobTwice reloads the server's dataset (DEBUG RELOAD,
// slowed per key) while a worker runs jobs with a lease shorter than the
// load: until it is loaded, the server answers every call LOADING, the
// completions of the jobs in flight and the worker's RECOVER included. The
// completions are sent again until the server takes them, and the RECOVER
// waits for the next round, after the worker renewed its leases, so no job
// of the worker's is taken back and run twice.
func TestReloadRunsNoJobTwice(t *testing.T) {
	skipInShort(t, "server reloads (DEBUG RELOAD) under workers")
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			o := valkeyserver.Options{Debug: true, Config: []string{
				// Loading 20,000 keys takes a second or more, answering
				// other clients every KiB of the file.
				"key-load-delay", "50", "loading-process-events-interval-bytes", "1024",
			}}
			runThroughFault(t, e, o, 2*time.Second, func(s *valkeyserver.Server) {
				_, err := s.Do(t.Context(), "DEBUG", "POPULATE", "20000", "filler")
				require.NoError(t, err)
				_, err = s.Do(t.Context(), "DEBUG", "RELOAD")
				require.NoError(t, err)
				info, err := s.Info(t.Context(), "errorstats")
				require.NoError(t, err)
				require.NotEmpty(t, valkeyserver.InfoField(info, "errorstat_LOADING"), "the worker's calls met the reload")
			})
		})
	}
}

// faultJobs is how many jobs runThroughFault runs.
const faultJobs = 3000

// runThroughFault runs faultJobs jobs of 2 ms on one worker (concurrency 20,
// lease) on a server started with o, calls fault once a third of them are
// done, and requires that every job ran exactly once and completed, nothing
// lost, failed or dead, and the queue consistent. It returns the jobs
// recovered (from claims whose reply the fault cut off) and the worker's
// log.
func runThroughFault(t *testing.T, e executorCase, o valkeyserver.Options, lease time.Duration, fault func(s *valkeyserver.Server)) (recovered int, logs string) {
	t.Helper()
	const n = faultJobs
	s, c, exec := e.start(t, o)
	q, err := trafikey.Open(t.Context(), c, "outage", trafikey.WithRunner(exec, nil))
	require.NoError(t, err)
	addN(t, q, n)

	var mu sync.Mutex
	runs := map[string]int{}
	var done atomic.Int64
	log := &syncBuffer{}
	w := newWorker(t, q, func(ctx context.Context, j *trafikey.Job) error {
		mu.Lock()
		runs[j.ID]++
		mu.Unlock()
		time.Sleep(2 * time.Millisecond) // a job's work, far within the lease
		return nil
	}, trafikey.WorkerOptions{
		Concurrency: 20, Lease: lease,
		Logger: slog.New(slog.NewTextHandler(log, nil)),
		OnDone: func(_ *trafikey.Job, o trafikey.Outcome, _ error) {
			if o == trafikey.OutcomeCompleted {
				done.Add(1)
			}
		},
	})
	stop := runWorker(t, w)

	require.Eventually(t, func() bool { return done.Load() >= n/3 }, time.Minute, tick)
	fault(s)
	// Every job completes in the end: the bound is generous, a fault's
	// backoffs included.
	require.Eventually(t, func() bool {
		st, err := q.Stats(t.Context())
		return err == nil && st.TotalCompleted == n
	}, 2*time.Minute+outageFor(t), 50*time.Millisecond)
	require.NoError(t, stop())

	st, err := q.Stats(t.Context())
	require.NoError(t, err)
	// A claim whose reply the fault cut off leaves its jobs active with no
	// worker: they are recovered and run once, later.
	recovered = st.TotalRecovered
	st.TotalRecovered = 0
	require.Equal(t, trafikey.Stats{TotalAdded: n, TotalCompleted: n}, st, "nothing lost, pending, failed or dead")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, runs, n, "every job ran")
	var twice []string
	for id, k := range runs {
		if k > 1 {
			twice = append(twice, id)
		}
	}
	require.Empty(t, twice, "jobs run more than once")
	valkeytest.RequireConsistentQueue(t, s, "outage")
	return recovered, log.String()
}

// TestOpenWaitsForTheServer opens a queue while its server is down: Open
// tries again until the server is back, and picks the executor the server
// really has.
func TestOpenWaitsForTheServer(t *testing.T) {
	skipInShort(t, "a server started late")
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			s, c, _ := e.start(t, valkeyserver.Options{AOF: true})
			restarted := make(chan error, 1)
			go func() { restarted <- s.RestartAfter(context.WithoutCancel(t.Context()), 2*time.Second) }()
			require.Eventually(t, func() bool { return c.Do(t.Context(), c.B().Ping().Build()).Error() != nil }, eventually, tick, "the server went down")
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			q, err := trafikey.Open(ctx, c, "late", nil)
			require.NoError(t, err)
			require.Equal(t, trafikey.Executor(e.name), q.Executor())
			require.NoError(t, <-restarted)

			// Without a server for the whole of ctx, Open gives up with
			// ctx's error.
			go func() { restarted <- s.RestartAfter(context.WithoutCancel(t.Context()), 3*time.Second) }()
			require.Eventually(t, func() bool { return c.Do(t.Context(), c.B().Ping().Build()).Error() != nil }, eventually, tick)
			short, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			_, err = trafikey.Open(short, c, "late", nil)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.NoError(t, <-restarted)
		})
	}
}
