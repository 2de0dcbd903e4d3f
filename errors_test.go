package trafikey_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
)

// TestServerErrors provokes each class a server can give with the job-core
// verbs, on every executor.
func TestServerErrors(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		_, err := b.q.Add(ctx, []byte("x"), nil)
		require.NoError(t, err)
		first := claimOne(t, b.q, time.Minute)

		// The lease expires and the job is recovered: the holder's token
		// still matches but the job is no longer active.
		expireLeases(t, b, b.q)
		_, err = b.q.Admin().Maintain(ctx, 10)
		require.NoError(t, err)
		err = first.Complete(ctx)
		require.ErrorIs(t, err, trafikey.ErrLeaseLost)
		require.ErrorIs(t, err, trafikey.ErrState)
		var se *trafikey.Error
		require.ErrorAs(t, err, &se)
		require.Equal(t, protocol.ErrNotActive("complete"), se.Text)
		_, err = first.Extend(ctx, time.Minute)
		require.ErrorIs(t, err, trafikey.ErrLeaseLost)

		// Claimed again: the first token is stale.
		second := claimOne(t, b.q, time.Minute)
		require.Equal(t, 2, second.Attempt)
		err = first.Complete(ctx)
		require.ErrorIs(t, err, trafikey.ErrLeaseLost)
		require.NotErrorIs(t, err, trafikey.ErrState)
		require.ErrorAs(t, err, &se)
		require.Equal(t, protocol.ErrStale("complete"), se.Text)
		_, err = first.Fail(ctx, errors.New("late"), true)
		require.ErrorIs(t, err, trafikey.ErrLeaseLost)
		require.ErrorIs(t, first.Log(ctx, "late"), trafikey.ErrLeaseLost)
		require.ErrorIs(t, first.Progress(ctx, "late"), trafikey.ErrLeaseLost)

		// A claimed job cannot be removed; only dead jobs are requeued.
		err = b.q.Admin().Remove(ctx, second.ID)
		require.ErrorIs(t, err, trafikey.ErrState)
		require.ErrorAs(t, err, &se)
		require.Equal(t, protocol.ErrRemoveActive, se.Text)
		err = b.q.Admin().Requeue(ctx, second.ID)
		require.ErrorIs(t, err, trafikey.ErrState)
		require.ErrorAs(t, err, &se)
		require.Equal(t, protocol.ErrRequeueNotDead, se.Text)

		// Completed: the row is gone, and the server answers 0.
		require.NoError(t, second.Complete(ctx))
		require.ErrorIs(t, second.Complete(ctx), trafikey.ErrNotFound)
		require.ErrorIs(t, b.q.Admin().Requeue(ctx, second.ID), trafikey.ErrNotFound)

		// Another wire version in the fence key.
		b.do(t, "SET", protocol.KeysOf("test").Version, "3")
		_, err = b.q.Add(ctx, []byte("x"), nil)
		require.ErrorIs(t, err, trafikey.ErrWire)
		require.ErrorAs(t, err, &se)
		require.Equal(t, protocol.ErrWireFound("3"), se.Text)
		_, err = trafikey.Open(ctx, b.client, "test", trafikey.WithRunner(b.exec, nil))
		require.ErrorIs(t, err, trafikey.ErrWire, "INSTALL refuses another wire")
	})
}
