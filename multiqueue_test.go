package trafikey_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// doneCounter counts the completed jobs of a worker by queue, in order.
type doneCounter struct {
	mu    sync.Mutex
	order []string
	by    map[string]int
}

func (d *doneCounter) onDone(j *trafikey.Job, o trafikey.Outcome, _ error) {
	if o != trafikey.OutcomeCompleted {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.by == nil {
		d.by = map[string]int{}
	}
	d.order = append(d.order, j.Queue().Name())
	d.by[j.Queue().Name()]++
}

func (d *doneCounter) total() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.order)
}

// TestWorkerWeights: while both queues have jobs, a worker over them with
// weights 3 and 1 claims three in four from the first (within 10%).
func TestWorkerWeights(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		heavy, light := b.open(t, "heavy"), b.open(t, "light")
		addN(t, heavy, 800)
		addN(t, light, 800)
		var d doneCounter
		w, err := trafikey.NewWorkerForQueues([]trafikey.QueueWeight{{Queue: heavy, Weight: 3}, {Queue: light, Weight: 1}},
			func(context.Context, *trafikey.Job) error { return nil },
			trafikey.WorkerOptions{Concurrency: 1, OnDone: d.onDone})
		require.NoError(t, err)
		stop := runWorker(t, w)
		require.Eventually(t, func() bool { return d.total() >= 400 }, eventually, tick)
		require.NoError(t, stop())
		d.mu.Lock()
		defer d.mu.Unlock()
		share := float64(d.by["heavy"]) / float64(len(d.order))
		require.InDelta(t, 0.75, share, 0.075, "heavy's share of %d jobs: %d", len(d.order), d.by["heavy"])
	})
}

// TestWorkerStrictPriority: with StrictPriority, a later queue runs only
// while the earlier ones are empty; an empty drawn queue never idles the
// worker while another has jobs; and an idle worker wakes for a job on any
// of its queues.
func TestWorkerStrictPriority(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		first, second := b.open(t, "first"), b.open(t, "second")
		addN(t, second, 10)
		addN(t, first, 10)
		var d doneCounter
		w, err := trafikey.NewWorkerForQueues([]trafikey.QueueWeight{{Queue: first}, {Queue: second}},
			func(context.Context, *trafikey.Job) error { return nil },
			trafikey.WorkerOptions{Concurrency: 1, StrictPriority: true, PollInterval: time.Hour, OnDone: d.onDone})
		require.NoError(t, err)
		stop := runWorker(t, w)
		require.Eventually(t, func() bool { return d.total() == 20 }, eventually, tick)
		d.mu.Lock()
		for i, q := range d.order {
			want := "first"
			if i >= 10 {
				want = "second"
			}
			require.Equal(t, want, q, "job %d of %v", i, d.order)
		}
		d.mu.Unlock()

		// Idle now, on a BLPOP over both signal lists (the poll interval is
		// an hour): a job on the second queue wakes it.
		require.Eventually(t, func() bool { return blockedClients(t, b) >= 1 }, eventually, tick)
		_, err = second.Add(t.Context(), []byte("late"), nil)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return d.total() == 21 }, eventually, tick)
		require.NoError(t, stop())
	})
}

// TestWorkerForQueuesOptions refuses what cannot be meant.
func TestWorkerForQueuesOptions(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		h := func(context.Context, *trafikey.Job) error { return nil }
		other := b.open(t, "other")
		for name, qs := range map[string][]trafikey.QueueWeight{
			"none":       nil,
			"nil queue":  {{Queue: nil, Weight: 1}},
			"twice":      {{Queue: b.q, Weight: 1}, {Queue: b.q, Weight: 2}},
			"weight 0":   {{Queue: b.q, Weight: 1}, {Queue: other, Weight: 0}},
			"weight big": {{Queue: b.q, Weight: 1001}},
		} {
			_, err := trafikey.NewWorkerForQueues(qs, h, trafikey.WorkerOptions{})
			require.ErrorIs(t, err, trafikey.ErrInvalid, name)
		}
		_, err := trafikey.NewWorkerForQueues([]trafikey.QueueWeight{{Queue: b.q}, {Queue: other}}, h, trafikey.WorkerOptions{StrictPriority: true})
		require.NoError(t, err, "weights are not needed with StrictPriority")
	})
}

// TestWorkerForQueuesOnTwoServers: a worker over queues on two servers,
// each opened with its own client, waits on both servers' signal lists at
// once when idle (the poll interval is an hour), so a job added to either
// wakes it.
func TestWorkerForQueuesOnTwoServers(t *testing.T) {
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			var qws []trafikey.QueueWeight
			var bundles []*testBundle
			for i := range 2 {
				s, c, exec := e.start(t, valkeyserver.Options{})
				q, err := trafikey.Open(t.Context(), c, "q"+strconv.Itoa(i), trafikey.WithRunner(exec, nil))
				require.NoError(t, err)
				qws = append(qws, trafikey.QueueWeight{Queue: q, Weight: 1})
				bundles = append(bundles, &testBundle{server: s, client: c, exec: exec, q: q})
			}
			var d doneCounter
			w, err := trafikey.NewWorkerForQueues(qws, func(context.Context, *trafikey.Job) error { return nil },
				trafikey.WorkerOptions{Concurrency: 2, PollInterval: time.Hour, OnDone: d.onDone})
			require.NoError(t, err)
			stop := runWorker(t, w)
			for i, b := range append(bundles, bundles...) {
				require.Eventually(t, func() bool { return blockedClients(t, bundles[0]) >= 1 && blockedClients(t, bundles[1]) >= 1 },
					eventually, tick, "idle on both servers")
				_, err := b.q.Add(t.Context(), []byte("wake"), nil)
				require.NoError(t, err)
				require.Eventually(t, func() bool { return d.total() == i+1 }, eventually, tick, "the job on server %d is processed", i%2)
			}
			require.NoError(t, stop())
		})
	}
}
