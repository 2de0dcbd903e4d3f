package trafikeytest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/trafikeytest"
)

func TestServer(t *testing.T) {
	t.Parallel()
	s := trafikeytest.NewServer(t, trafikeytest.WithConfig("maxmemory", "64mb"))
	c := s.Client()
	got, err := c.Do(t.Context(), c.B().ConfigGet().Parameter("maxmemory").Build()).AsStrMap()
	require.NoError(t, err)
	require.Equal(t, "67108864", got["maxmemory"])
	require.True(t, strings.HasPrefix(s.Addr(), "127.0.0.1:"))

	// Close stops the process it started.
	s2, err := trafikeytest.Start(t.Context())
	require.NoError(t, err)
	pid, err := s2.Client().Do(t.Context(), s2.Client().B().Info().Section("server").Build()).ToString()
	require.NoError(t, err)
	require.Contains(t, pid, "process_id:")
	require.NoError(t, s2.Close())
	require.Error(t, s2.Client().Do(context.Background(), s2.Client().B().Ping().Build()).Error())
}

// workCases runs Work's cases on a queue of server s.
func workCases(t *testing.T, s *trafikeytest.Server, want trafikey.Executor) {
	ctx := t.Context()
	q, err := trafikey.Open(ctx, s.Client(), "work", nil)
	require.NoError(t, err)
	require.Equal(t, want, q.Executor())

	t.Run("completed", func(t *testing.T) {
		var seen string
		r, err := trafikeytest.Work(ctx, q, func(_ context.Context, j *trafikey.Job) error {
			seen = string(j.Payload)
			return nil
		}, []byte("hello"), nil)
		require.NoError(t, err)
		require.Equal(t, trafikey.OutcomeCompleted, r.Outcome)
		require.NoError(t, r.Err)
		require.Nil(t, r.Info, "a completed job is gone")
		require.Equal(t, "hello", seen)
	})
	t.Run("retrying", func(t *testing.T) {
		r, err := trafikeytest.Work(ctx, q, func(context.Context, *trafikey.Job) error {
			return errors.New("smtp 451")
		}, []byte("x"), &trafikey.JobOptions{MaxAttempts: 2})
		require.NoError(t, err)
		require.Equal(t, trafikey.OutcomeRetrying, r.Outcome)
		require.EqualError(t, r.Err, "smtp 451")
		require.Equal(t, trafikey.StateDelayed, r.Info.State)
		require.Equal(t, "smtp 451", r.Info.LastError)
		require.Equal(t, 1, r.Info.Attempts)
		require.NoError(t, q.Admin().Remove(ctx, r.ID))
	})
	t.Run("skip retry", func(t *testing.T) {
		r, err := trafikeytest.Work(ctx, q, func(context.Context, *trafikey.Job) error {
			return trafikey.SkipRetry(errors.New("bad address"))
		}, []byte("x"), &trafikey.JobOptions{MaxAttempts: 5})
		require.NoError(t, err)
		require.Equal(t, trafikey.OutcomeDead, r.Outcome)
		require.ErrorIs(t, r.Err, trafikey.ErrSkipRetry)
		require.Equal(t, trafikey.StateDead, r.Info.State)
	})
	t.Run("panic", func(t *testing.T) {
		r, err := trafikeytest.Work(ctx, q, func(context.Context, *trafikey.Job) error {
			panic("nil map")
		}, []byte("x"), &trafikey.JobOptions{MaxAttempts: 1})
		require.NoError(t, err)
		require.Equal(t, trafikey.OutcomeDead, r.Outcome)
		var pe *trafikey.PanicError
		require.ErrorAs(t, r.Err, &pe)
		require.Equal(t, "nil map", pe.Value)
		require.Contains(t, r.Info.LastError, "panic: nil map")
	})
	t.Run("refusals", func(t *testing.T) {
		_, err := trafikeytest.Work(ctx, q, nil, []byte("x"), nil)
		require.ErrorIs(t, err, trafikey.ErrInvalid)
		_, err = trafikeytest.Work(ctx, q, func(context.Context, *trafikey.Job) error { return nil }, []byte("x"), &trafikey.JobOptions{Delay: 30 * 1e9})
		require.ErrorIs(t, err, trafikey.ErrInvalid, "a delayed job is not claimable")
		_, err = q.Add(ctx, []byte("someone else's"), nil)
		require.NoError(t, err)
		_, err = trafikeytest.Work(ctx, q, func(context.Context, *trafikey.Job) error { return nil }, []byte("x"), nil)
		require.ErrorIs(t, err, trafikeytest.ErrQueueBusy)
	})
}

func TestWorkLua(t *testing.T) {
	t.Parallel()
	workCases(t, trafikeytest.NewServer(t), trafikey.ExecutorLua)
}

func TestWorkNative(t *testing.T) {
	t.Parallel()
	module, err := trafikeytest.BuildModule(t.Context())
	require.NoError(t, err)
	workCases(t, trafikeytest.NewServer(t, trafikeytest.WithModule(module)), trafikey.ExecutorNative)
}

func TestStartFails(t *testing.T) {
	t.Parallel()
	_, err := trafikeytest.Start(t.Context(), trafikeytest.WithConfig("no-such-directive", "1"))
	require.Error(t, err)
}

// Test a handler as a worker would run it.
func ExampleWork() {
	ctx := context.Background()
	srv, err := trafikeytest.Start(ctx) // in a test: trafikeytest.NewServer(t)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	q, err := trafikey.Open(ctx, srv.Client(), "emails", nil)
	if err != nil {
		log.Fatal(err)
	}

	r, err := trafikeytest.Work(ctx, q, func(ctx context.Context, job *trafikey.Job) error {
		return fmt.Errorf("mailbox of %s is full", job.Payload)
	}, []byte("ada"), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Outcome, r.Info.State, r.Info.LastError)
	// Output: retrying delayed mailbox of ada is full
}
