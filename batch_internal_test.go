package trafikey

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

func TestTakeDistinct(t *testing.T) {
	t.Parallel()
	id := func(s string) string { return s }
	batch, rest := takeDistinct([]string{"1", "2", "1", "3", "2", "1"}, id)
	require.Equal(t, []string{"1", "2", "3"}, batch)
	require.Equal(t, []string{"1", "2", "1"}, rest)

	many := make([]string, MaxBatch+10)
	for i := range many {
		many[i] = strconv.Itoa(i)
	}
	batch, rest = takeDistinct(many, id)
	require.Equal(t, many[:MaxBatch], batch)
	require.Equal(t, many[MaxBatch:], rest)
}

// TestAddTakenOutBeforeSent holds two coalesced ADD calls in flight (the
// server's writes are paused), queues a third job behind them and cancels
// its caller: the caller gets ctx.Err() and the job is never added, while
// the two sent jobs are.
func TestAddTakenOutBeforeSent(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	q, err := Open(t.Context(), c, "cancel", &QueueOptions{Executor: ExecutorLua})
	require.NoError(t, err)
	adderState := q.adder.State

	valkeytest.Do(t, s, "CLIENT", "PAUSE", "60000", "WRITE")
	unpaused := false
	unpause := func() {
		if !unpaused {
			unpaused = true
			valkeytest.Do(t, s, "CLIENT", "UNPAUSE")
		}
	}
	t.Cleanup(unpause)
	var wg sync.WaitGroup
	ids := make([]string, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { ids[i], errs[i] = q.Add(context.Background(), []byte("sent"), nil) })
		// Each is taken by a sender of its own before the next comes.
		require.Eventually(t, func() bool {
			queued, senders := adderState()
			return queued == 0 && senders == i+1
		}, 10*time.Second, time.Millisecond)
	}

	ctx, cancel := context.WithCancel(context.Background())
	late := make(chan error, 1)
	go func() {
		_, err := q.Add(ctx, []byte("never sent"), nil)
		late <- err
	}()
	require.Eventually(t, func() bool {
		queued, _ := adderState()
		return queued == 1
	}, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-late, context.Canceled)

	unpause()
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.NotEqual(t, ids[0], ids[1])
	st, err := q.Stats(t.Context())
	require.NoError(t, err)
	require.Equal(t, 2, st.TotalAdded, "the cancelled job was not sent")
	require.Eventually(t, q.adder.Idle, 10*time.Second, time.Millisecond, "the senders exit")
}

// TestTakeCompletionsDropsExpired: a completion whose report time ran out
// while it waited is answered with DeadlineExceeded and left out of the
// batch, so its deadline cannot fail the call of the others.
func TestTakeCompletionsDropsExpired(t *testing.T) {
	t.Parallel()
	mk := func(deadline time.Time, id string) *completion {
		return &completion{job: &Job{ID: id}, deadline: deadline, done: make(chan error, 1)}
	}
	old := mk(time.Now().Add(-time.Millisecond), "1")
	a, b := mk(time.Now().Add(time.Hour), "2"), mk(time.Time{}, "3")
	batch, rest := takeCompletions([]*completion{old, a, b})
	require.Equal(t, []*completion{a, b}, batch)
	require.Empty(t, rest)
	require.ErrorIs(t, <-old.done, context.DeadlineExceeded)
	require.Empty(t, a.done)
}
