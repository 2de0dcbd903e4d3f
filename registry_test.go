package trafikey_test

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
)

// TestWorkerRegistry: a running worker is listed by Admin.Workers with its
// host, pid, queues, concurrency and jobs in hand; its record expires by
// itself (a TTL of three periods), and a worker that stops is gone at once.
func TestWorkerRegistry(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		none, err := q.Admin().Workers(ctx)
		require.NoError(t, err)
		require.Empty(t, none)

		release := make(chan struct{})
		started := make(chan string, 2)
		block := func(ctx context.Context, j *trafikey.Job) error {
			started <- j.ID
			<-release
			return nil
		}
		// a short period: the test sees the record written again
		w1 := newWorker(t, q, block, trafikey.WithRegisterEvery(trafikey.WorkerOptions{Concurrency: 3}, 50*time.Millisecond))
		stop1 := runWorker(t, w1)
		var ids []string
		for _, p := range []string{"a", "b"} {
			id, err := q.Add(ctx, []byte(p), nil)
			require.NoError(t, err)
			ids = append(ids, id)
		}
		<-started
		<-started
		var got []trafikey.WorkerInfo
		require.Eventually(t, func() bool {
			got, err = q.Admin().Workers(ctx)
			require.NoError(t, err)
			return len(got) == 1 && got[0].Running == 2
		}, eventually, tick, "the worker's record shows both jobs in hand")
		host, _ := os.Hostname()
		info := got[0]
		require.Equal(t, w1.Info().ID, info.ID)
		require.Equal(t, host, info.Host)
		require.Equal(t, os.Getpid(), info.PID)
		require.Equal(t, []string{q.Name()}, info.Queues)
		require.Equal(t, 3, info.Concurrency)
		require.Equal(t, ids, info.Jobs)
		require.Len(t, info.Waited, 11)
		require.Zero(t, sum(info.Waited), "no observer takes the waits: the claims read none")
		require.False(t, info.Started.IsZero())
		require.False(t, info.Beat.Before(info.Started))

		record := protocol.KeysOf(q.Name()).Base + protocol.SuffixWorker + info.ID
		ttl := b.do(t, "PTTL", record).(int64)
		require.Greater(t, ttl, int64(0), "the record expires by itself")
		require.LessOrEqual(t, ttl, int64(150), "three periods")

		// a second worker on the queue, over two queues
		other := b.open(t, "other")
		w2, err := trafikey.NewWorkerForQueues([]trafikey.QueueWeight{{Queue: q, Weight: 1}, {Queue: other, Weight: 1}},
			block, trafikey.WorkerOptions{Concurrency: 1})
		require.NoError(t, err)
		stop2 := runWorker(t, w2)
		otherID, err := other.Add(ctx, []byte("c"), nil)
		require.NoError(t, err)
		<-started
		require.Eventually(t, func() bool {
			got, err = q.Admin().Workers(ctx)
			require.NoError(t, err)
			onOther, err := other.Admin().Workers(ctx)
			require.NoError(t, err)
			return len(got) == 2 && len(onOther) == 1 && slices.Equal(onOther[0].Jobs, []string{otherID})
		}, eventually, tick, "the second worker registers on both queues, with each queue's jobs")
		ttl2 := b.do(t, "PTTL", protocol.KeysOf(q.Name()).Base+protocol.SuffixWorker+w2.Info().ID).(int64)
		require.Greater(t, ttl2, int64(10000), "the default period, 5 s: three of them")
		require.LessOrEqual(t, ttl2, int64(15000))
		for _, i := range got {
			if i.ID == w2.Info().ID {
				require.Equal(t, []string{q.Name(), "other"}, i.Queues)
				require.Empty(t, i.Jobs, "its job is the other queue's")
			}
		}

		// a worker that dies stops writing its record, which runs out by
		// itself and drops out of the listing (here: run out early, and the
		// worker, alive, writes it again on its next period; each try runs
		// it out anew just before the listing, which a busy machine may
		// otherwise only take after that period's write)
		require.Eventually(t, func() bool {
			b.do(t, "PEXPIRE", record, "1")
			time.Sleep(2 * time.Millisecond)
			got, err = q.Admin().Workers(ctx)
			require.NoError(t, err)
			return len(got) == 1 && got[0].ID == w2.Info().ID
		}, eventually, tick)
		require.Eventually(t, func() bool {
			got, err = q.Admin().Workers(ctx)
			require.NoError(t, err)
			return len(got) == 2
		}, eventually, tick, "a live worker registers again")

		// a worker that stops is gone at once
		close(release)
		require.NoError(t, stop2())
		require.NoError(t, stop1())
		got, err = q.Admin().Workers(ctx)
		require.NoError(t, err)
		require.Empty(t, got)
		require.Zero(t, b.do(t, "EXISTS", protocol.KeysOf("other").Base+protocol.SuffixWorker+w2.Info().ID))
	})
}

// TestWorkerRegistryWaits: a worker counts, in its record on each queue,
// the waits of the jobs it started of the queues whose observer takes the
// waits: the jobs added ready, by bucket.
func TestWorkerRegistryWaits(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		var observed sync.Map
		q := b.open(t, "waited", trafikey.QueueOptions{Observer: trafikey.Observer{
			JobWaited: func(j *trafikey.Job, _ time.Duration) { observed.Store(j.ID, true) },
		}})
		plain := b.open(t, "plain")
		release := make(chan struct{})
		started := make(chan string, 4)
		w, err := trafikey.NewWorkerForQueues([]trafikey.QueueWeight{{Queue: q, Weight: 1}, {Queue: plain, Weight: 1}},
			func(ctx context.Context, j *trafikey.Job) error {
				started <- j.ID
				<-release
				return nil
			}, trafikey.WorkerOptions{Concurrency: 4})
		require.NoError(t, err)
		stop := runWorker(t, w)
		for _, add := range []*trafikey.Queue{q, q, plain} {
			_, err := add.Add(ctx, []byte("x"), nil)
			require.NoError(t, err)
		}
		_, err = q.Add(ctx, []byte("later"), &trafikey.JobOptions{Delay: time.Millisecond})
		require.NoError(t, err)
		for range 4 {
			<-started
		}
		var onQ, onPlain []trafikey.WorkerInfo
		require.Eventually(t, func() bool {
			onQ, err = q.Admin().Workers(ctx)
			require.NoError(t, err)
			onPlain, err = plain.Admin().Workers(ctx)
			require.NoError(t, err)
			return len(onQ) == 1 && len(onPlain) == 1 && len(onQ[0].Jobs) == 3 && len(onPlain[0].Jobs) == 1
		}, eventually, tick, "the records show the jobs in hand")
		require.Len(t, onQ[0].Waited, 11)
		require.Equal(t, 2, sum(onQ[0].Waited), "the two jobs added ready; the delayed one's wait is not known")
		require.Zero(t, sum(onPlain[0].Waited), "no observer of waits on the plain queue")
		require.Equal(t, 2, sum(w.Info().Waited), "every queue's")
		n := 0
		observed.Range(func(any, any) bool { n++; return true })
		require.Equal(t, 2, n, "the observer was told the same waits")
		close(release)
		require.NoError(t, stop())
	})
}

func sum(counts []int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
