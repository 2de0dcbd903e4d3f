package trafikey_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// TestClosedClient: a closed client is an error, not an outage to wait
// out: Open returns at once without a deadline, a call fails without
// retrying, and a running Worker's Run ends with the error.
func TestClosedClient(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		exec := trafikey.ExecutorLua
		if b.q.Executor() == trafikey.ExecutorNative {
			exec = trafikey.ExecutorNative
		}
		c := valkeytest.Client(t, b.server)
		q, err := trafikey.Open(t.Context(), c, "closing", &trafikey.QueueOptions{Executor: exec})
		require.NoError(t, err)
		started := make(chan struct{}, 1)
		w, err := trafikey.NewWorker(q, func(ctx context.Context, j *trafikey.Job) error {
			started <- struct{}{}
			return nil
		}, trafikey.WorkerOptions{PollInterval: 10 * time.Millisecond})
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- w.Run(context.Background()) }()
		_, err = q.Add(t.Context(), []byte("x"), nil)
		require.NoError(t, err)
		<-started

		c.Close()
		select {
		case err := <-done:
			require.ErrorIs(t, err, valkey.ErrClosing)
			require.ErrorContains(t, err, "client is closed")
		case <-time.After(eventually):
			t.Fatal("Run went on with a closed client")
		}
		// A client closed while idle: calls and Open fail at once. (One
		// closed under calls in flight can serve a call caught in the close:
		// valkey-go's, not a state of ours.)
		idle := valkeytest.Client(t, b.server)
		q2, err := trafikey.Open(t.Context(), idle, "closing", &trafikey.QueueOptions{Executor: exec})
		require.NoError(t, err)
		idle.Close()
		_, err = q2.Add(context.Background(), []byte("y"), nil)
		require.ErrorIs(t, err, valkey.ErrClosing, "no retry under a context without a deadline")
		_, err = trafikey.Open(context.Background(), idle, "closing", &trafikey.QueueOptions{Executor: exec})
		require.ErrorIs(t, err, valkey.ErrClosing)
	})
}
