package trafikey_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
)

// TestWorkerTimeout: a handler that ignores its context is abandoned at
// the deadline; the attempt fails with ErrTimeout and retries, and the
// handler's late Complete is refused.
func TestWorkerTimeout(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		id, err := b.q.Add(t.Context(), []byte("hangs"), &trafikey.JobOptions{MaxAttempts: 2, Backoff: trafikey.BackoffFixed, BackoffBase: time.Hour})
		require.NoError(t, err)
		release := make(chan struct{})
		late := make(chan error, 1)
		var cause error
		done := make(chan struct{})
		var outcome trafikey.Outcome
		var doneErr error
		w := newWorker(t, b.q, func(ctx context.Context, j *trafikey.Job) error {
			<-release // ignores ctx
			cause = context.Cause(ctx)
			late <- j.Complete(context.Background())
			return nil
		}, trafikey.WorkerOptions{Timeout: 100 * time.Millisecond, OnDone: func(_ *trafikey.Job, o trafikey.Outcome, err error) {
			outcome, doneErr = o, err
			close(done)
		}})
		stop := runWorker(t, w)
		<-done
		require.Equal(t, trafikey.OutcomeRetrying, outcome)
		require.ErrorIs(t, doneErr, trafikey.ErrTimeout)
		info, err := b.q.Inspect(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDelayed, info.State)
		require.Contains(t, info.LastError, "ran past its timeout of 100ms")

		close(release)
		require.ErrorIs(t, <-late, trafikey.ErrLeaseLost, "the abandoned handler's completion is refused")
		require.ErrorIs(t, cause, trafikey.ErrTimeout)
		require.NoError(t, stop())
	})
}

// TestWorkerMiddleware: the chain runs outermost first; every middleware
// sees a handler's panic as a *PanicError; LogJobs logs each job's end.
func TestWorkerMiddleware(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		var mu sync.Mutex
		var trail []string
		note := func(s string) {
			mu.Lock()
			defer mu.Unlock()
			trail = append(trail, s)
		}
		around := func(name string) trafikey.Middleware {
			return func(next trafikey.Handler) trafikey.Handler {
				return func(ctx context.Context, j *trafikey.Job) error {
					note(name + " before " + string(j.Payload))
					err := next(ctx, j)
					var pe *trafikey.PanicError
					if errors.As(err, &pe) {
						note(name + " saw a panic")
					}
					note(name + " after " + string(j.Payload))
					return err
				}
			}
		}
		var logs bytes.Buffer
		var logMu sync.Mutex
		logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			logMu.Lock()
			defer logMu.Unlock()
			return logs.Write(p)
		}), nil))
		_, err := b.q.AddBatch(t.Context(), []trafikey.JobSpec{{Payload: []byte("ok")}, {Payload: []byte("boom"), Options: trafikey.JobOptions{MaxAttempts: 1}}})
		require.NoError(t, err)
		finished := make(chan struct{}, 2)
		w := newWorker(t, b.q, func(_ context.Context, j *trafikey.Job) error {
			note("handler " + string(j.Payload))
			if string(j.Payload) == "boom" {
				panic("boom")
			}
			return nil
		}, trafikey.WorkerOptions{
			Concurrency: 1,
			Middleware:  []trafikey.Middleware{trafikey.LogJobs(logger), around("a"), around("b")},
			OnDone:      func(*trafikey.Job, trafikey.Outcome, error) { finished <- struct{}{} },
		})
		stop := runWorker(t, w)
		<-finished
		<-finished
		require.NoError(t, stop())

		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{
			"a before ok", "b before ok", "handler ok", "b after ok", "a after ok",
			"a before boom", "b before boom", "handler boom", "b saw a panic", "b after boom", "a saw a panic", "a after boom",
		}, trail, "the panic reaches both as an error")
		logMu.Lock()
		defer logMu.Unlock()
		require.Contains(t, logs.String(), `msg="trafikey: job done" queue=test job=1 attempt=1`)
		require.Contains(t, logs.String(), `level=WARN msg="trafikey: job failed" queue=test job=2 attempt=1`)
		require.True(t, strings.Contains(logs.String(), "panic: boom"))
		require.Equal(t, 1, w.Info().Dead)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
