package trafikey

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// lockedBuffer is a log sink written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestJobCancelledOnce: every way a worker learns that a running job was
// cancelled (its notice, again, then EXTENDs of the heartbeat and of the
// recovery timer's renewal at once) cancels the handler's context and logs
// "job cancelled" once; a notice of another attempt, another job or another
// queue, or one that is not a notice, changes nothing.
func TestJobCancelledOnce(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	q, err := Open(t.Context(), c, "once", &QueueOptions{Executor: ExecutorLua})
	require.NoError(t, err)
	other, err := Open(t.Context(), c, "other", &QueueOptions{Executor: ExecutorLua})
	require.NoError(t, err)
	logs := &lockedBuffer{}
	w, err := NewWorker(q, func(context.Context, *Job) error { return nil }, WorkerOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)

	_, err = q.Add(t.Context(), []byte("a"), nil)
	require.NoError(t, err)
	jobs, err := q.Claim(t.Context(), time.Hour, 1)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	j := jobs[0]
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	r := &runningJob{job: j, cancel: cancel}
	w.jobs[r] = struct{}{}

	for _, msg := range []string{
		protocol.CancelNotice(j.ID, "2"),     // another attempt
		protocol.CancelNotice("99", j.token), // another job
		"garbage", " 1",
	} {
		w.noticed(q, msg)
	}
	w.noticed(other, protocol.CancelNotice(j.ID, j.token)) // another queue
	require.NoError(t, ctx.Err())
	require.False(t, r.cancelled.Load())

	require.NoError(t, q.Cancel(t.Context(), j.ID))
	w.noticed(q, protocol.CancelNotice(j.ID, j.token))
	require.ErrorIs(t, context.Cause(ctx), ErrCancelled)
	w.noticed(q, protocol.CancelNotice(j.ID, j.token))
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { require.True(t, w.extend(t.Context(), r, time.Minute)) })
	}
	wg.Wait()
	require.True(t, r.cancelled.Load())
	require.True(t, r.lost.Load())
	require.Equal(t, 1, strings.Count(logs.String(), "trafikey: job cancelled"), logs.String())
}
