package trafikey_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// refusalRecorder runs every call on the real executor it wraps and counts
// the error replies per verb and class (the reply's first word), so a test
// can tell which refusals reached the client before it retried them.
type refusalRecorder struct {
	executor.Executor
	mu      sync.Mutex
	refused map[string]int // "verb CLASS"
}

func newRefusalRecorder(e executor.Executor) *refusalRecorder {
	return &refusalRecorder{Executor: e, refused: map[string]int{}}
}

func (r *refusalRecorder) note(v *protocol.Verb, res valkey.ValkeyResult) valkey.ValkeyResult {
	if ve, ok := valkey.IsValkeyErr(res.Error()); ok {
		class, _, _ := strings.Cut(ve.Error(), " ")
		r.mu.Lock()
		r.refused[v.Name+" "+class]++
		r.mu.Unlock()
	}
	return res
}

func (r *refusalRecorder) Exec(ctx context.Context, v *protocol.Verb, keys, args []string) valkey.ValkeyResult {
	return r.note(v, r.Executor.Exec(ctx, v, keys, args))
}

func (r *refusalRecorder) ExecThen(ctx context.Context, v *protocol.Verb, keys, args []string, then executor.Then) (valkey.ValkeyResult, []valkey.ValkeyResult) {
	res, rest := r.Executor.ExecThen(ctx, v, keys, args, then)
	return r.note(v, res), rest
}

// count is how many replies of class the recorder saw, for the verbs given
// (every verb when none is).
func (r *refusalRecorder) count(class string, verbs ...*protocol.Verb) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for k, c := range r.refused {
		name, cl, _ := strings.Cut(k, " ")
		if cl != class {
			continue
		}
		if len(verbs) == 0 {
			n += c
		}
		for _, v := range verbs {
			if v.Name == name {
				n += c
			}
		}
	}
	return n
}

func (r *refusalRecorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for k, c := range r.refused {
		b.WriteString(k + "=" + strconv.Itoa(c) + " ")
	}
	return b.String()
}

// TestLoadingRunsNoJobTwice restarts a standalone server on a dataset that
// takes seconds to load while a worker holds a job, and lets the handler
// return while the server answers LOADING. The completion is refused with
// LOADING, tried again, and lands once the data is loaded: the job runs
// once and completes, as do a producer's Add and an Open made during the
// load (Open picks the executor the server really has, not Lua for a
// LOADING reply to EMQ.VERSION), and an events subscriber reads on.
func TestLoadingRunsNoJobTwice(t *testing.T) {
	skipInShort(t, "a server loading a large dataset")
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			// Each key loads 20 µs late, and the server answers its
			// clients every KB it loads: 25,000 keys keep it loading for
			// seconds, answering LOADING meanwhile.
			s, c, exec := e.start(t, valkeyserver.Options{Debug: true, Config: []string{
				"key-load-delay", "20", "loading-process-events-interval-bytes", "1024",
			}})
			rec := newRefusalRecorder(exec)
			q, err := trafikey.Open(ctx, c, "loading", trafikey.WithRunner(rec, nil))
			require.NoError(t, err)
			require.NoError(t, q.Admin().SetEvents(ctx, 1000))
			first, err := q.Add(ctx, []byte("held"), nil)
			require.NoError(t, err)
			// A subscriber reads the events through the restart, until it
			// has seen two completions.
			subscribed := make(chan error, 1)
			go func() {
				completed := 0
				for ev, err := range q.Events(ctx, "0") {
					if err != nil {
						subscribed <- err
						return
					}
					if ev.Name == "completed" {
						if completed++; completed == 2 {
							break
						}
					}
				}
				subscribed <- ctx.Err()
			}()

			tally, release, stop := runHeld(t, q)

			// The held job is active in the saved dataset, with its lease.
			_, err = s.Do(ctx, "DEBUG", "POPULATE", "25000", "filler", "10")
			require.NoError(t, err)
			_, err = s.Do(ctx, "SAVE")
			require.NoError(t, err)
			restarted := make(chan error, 1)
			go func() { restarted <- s.RestartAfter(context.WithoutCancel(ctx), 0) }()
			require.Eventually(t, func() bool {
				info, err := s.Info(ctx, "persistence")
				return err == nil && valkeyserver.InfoField(info, "loading") == "1"
			}, eventually, time.Millisecond, "the server loads its data")

			// Opened while the server loads: its EMQ.VERSION meets LOADING.
			type opened struct {
				q   *trafikey.Queue
				err error
			}
			late := make(chan opened, 1)
			go func() {
				q, err := trafikey.Open(ctx, c, "loading", nil)
				late <- opened{q, err}
			}()
			close(release)
			second, err := q.Add(ctx, []byte("added while loading"), nil)
			require.NoError(t, err)
			o := <-late
			require.NoError(t, o.err)
			require.Equal(t, trafikey.Executor(e.name), o.q.Executor())
			require.NoError(t, <-restarted)

			require.Eventually(t, func() bool { return tally.reported() == 2 }, eventually, tick)
			require.NoError(t, stop())
			require.NoError(t, <-subscribed, "the events subscriber goes on through the load")
			require.Positive(t, rec.count("LOADING", protocol.Add), "the Add met LOADING: %s", rec)
			require.Positive(t, rec.count("LOADING", protocol.Complete, protocol.CompleteMany), "the completion met LOADING: %s", rec)
			tally.requireCompletedOnce(t, first, second)
			st := stats(t, q)
			require.EqualValues(t, 2, st.TotalCompleted)
			t.Logf("refusals seen and retried: %s", rec)
			require.Zero(t, st.TotalRecovered+st.Pending+st.Active+st.Dead)
		})
	}
}

// TestTryAgainIsRetried holds a queue's slot MIGRATING (nothing moved yet)
// while a worker's handler returns and a producer adds: the server refuses
// both with TRYAGAIN, as every verb names the queue's base key, which never
// exists. The client tries them again until the migration is called off
// (SETSLOT STABLE), and then they land: the job ran once and completed, the
// Add returned its id. An Add whose ctx ends first returns ctx's error and
// adds nothing.
func TestTryAgainIsRetried(t *testing.T) {
	skipInShort(t, "a slot migration in a cluster")
	t.Parallel()
	for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
		t.Run(string(exec), func(t *testing.T) {
			t.Parallel()
			cl, c := startClusterOf(t, exec, 0)
			ctx := t.Context()
			from, to := cl.Primaries()[0], cl.Primaries()[1]
			name, slot := queueOn(t, cl, "tryagain", 0)
			q, err := trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Executor: exec})
			require.NoError(t, err)
			first, err := q.Add(ctx, []byte("held"), nil)
			require.NoError(t, err)

			tally, release, stop := runHeld(t, q)

			fromID, err := valkeyserver.NodeID(ctx, from)
			require.NoError(t, err)
			toID, err := valkeyserver.NodeID(ctx, to)
			require.NoError(t, err)
			s := strconv.Itoa(slot)
			valkeytest.Do(t, to, "CLUSTER", "SETSLOT", s, "IMPORTING", fromID)
			valkeytest.Do(t, from, "CLUSTER", "SETSLOT", s, "MIGRATING", toID)

			short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			_, err = q.Add(short, []byte("given up"), nil)
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded)

			close(release)
			added := make(chan error, 1)
			var second string
			go func() {
				var err error
				second, err = q.Add(ctx, []byte("added while migrating"), nil)
				added <- err
			}()
			// Refused over and over: the completion, the Add and the rest.
			before := errorCount(t, from, "TRYAGAIN")
			require.Eventually(t, func() bool { return errorCount(t, from, "TRYAGAIN") >= before+10 }, eventually, tick)
			require.Zero(t, tally.reported(), "nothing reported while the slot migrates")

			valkeytest.Do(t, from, "CLUSTER", "SETSLOT", s, "STABLE")
			valkeytest.Do(t, to, "CLUSTER", "SETSLOT", s, "STABLE")
			require.NoError(t, <-added)
			require.Eventually(t, func() bool { return tally.reported() == 2 }, eventually, tick)
			require.NoError(t, stop())
			tally.requireCompletedOnce(t, first, second)
			st := stats(t, q)
			require.EqualValues(t, 2, st.TotalAdded, "the given-up Add wrote nothing")
			require.EqualValues(t, 2, st.TotalCompleted)
		})
	}
}

// heldTally counts the runs of each job of a runHeld worker and keeps its
// outcome.
type heldTally struct {
	mu       sync.Mutex
	runs     map[string]int
	outcomes map[string]trafikey.Outcome
}

// runHeld runs a worker of one handler slot on q whose handler holds the
// first job until release is closed, and returns once that job started.
func runHeld(t *testing.T, q *trafikey.Queue) (tally *heldTally, release chan struct{}, stop func() error) {
	tally = &heldTally{runs: map[string]int{}, outcomes: map[string]trafikey.Outcome{}}
	h, started, release := holdJobs(1)
	w := newWorker(t, q, func(ctx context.Context, j *trafikey.Job) error {
		tally.mu.Lock()
		tally.runs[j.ID]++
		tally.mu.Unlock()
		return h(ctx, j)
	}, trafikey.WorkerOptions{Concurrency: 1, Lease: time.Minute,
		OnDone: func(j *trafikey.Job, o trafikey.Outcome, _ error) {
			tally.mu.Lock()
			tally.outcomes[j.ID] = o
			tally.mu.Unlock()
		}})
	stop = runWorker(t, w)
	<-started
	return tally, release, stop
}

// reported is how many jobs have an outcome.
func (h *heldTally) reported() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.outcomes)
}

// requireCompletedOnce checks that the jobs ids, and no other, each ran
// once and completed.
func (h *heldTally) requireCompletedOnce(t *testing.T, ids ...string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	runs, outcomes := map[string]int{}, map[string]trafikey.Outcome{}
	for _, id := range ids {
		runs[id], outcomes[id] = 1, trafikey.OutcomeCompleted
	}
	require.Equal(t, runs, h.runs, "each job ran once")
	require.Equal(t, outcomes, h.outcomes)
}
