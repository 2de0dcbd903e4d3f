package trafikey_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
)

func TestBreaker(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		br, err := b.q.Breaker("smtp", 2, time.Minute)
		require.NoError(t, err)
		for want := 1; want <= 3; want++ {
			open, err := br.Open(ctx)
			require.NoError(t, err)
			require.False(t, open)
			n, tripped, err := br.Failure(ctx)
			require.NoError(t, err)
			require.Equal(t, want, n)
			require.Equal(t, want > 2, tripped)
		}
		open, err := br.Open(ctx)
		require.NoError(t, err)
		require.True(t, open)
		// another name counts apart; a short window closes by itself
		short, err := b.q.Breaker("s3", 1, 20*time.Millisecond)
		require.NoError(t, err)
		for range 2 {
			_, _, err = short.Failure(ctx)
			require.NoError(t, err)
		}
		require.Eventually(t, func() bool { o, err := short.Open(ctx); return err == nil && !o }, 5*time.Second, 10*time.Millisecond)
	})
}

func TestBreakerMiddleware(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		br, err := b.q.Breaker("api", 1, time.Minute)
		require.NoError(t, err)
		calls := 0
		boom := errors.New("boom")
		h := br.Middleware(nil)(func(ctx context.Context, job *trafikey.Job) error { calls++; return boom })
		job := &trafikey.Job{ID: "1"}
		require.ErrorIs(t, h(ctx, job), boom)
		require.ErrorIs(t, h(ctx, job), boom)
		require.ErrorIs(t, h(ctx, job), trafikey.ErrBreakerOpen, "open after two failures of threshold 1")
		require.Equal(t, 2, calls, "an open breaker spares the handler")
		n, _, err := br.Failure(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, n, "two counted before this one")

		// errors the caller does not count leave the count alone
		other, err := b.q.Breaker("other", 1, time.Minute)
		require.NoError(t, err)
		skip := other.Middleware(func(err error) bool { return false })(func(ctx context.Context, job *trafikey.Job) error { return boom })
		require.ErrorIs(t, skip(ctx, job), boom)
		open, err := other.Open(ctx)
		require.NoError(t, err)
		require.False(t, open, "nothing counted")
		n, _, err = other.Failure(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n, "nothing counted before this one")
	})
}

func TestBreakerInvalid(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		for _, tc := range []struct {
			name      string
			threshold int
			window    time.Duration
		}{
			{"", 1, time.Second},
			{"a b", 1, time.Second},
			{"{x}", 1, time.Second},
			{strings.Repeat("n", 129), 1, time.Second},
			{"ok", 0, time.Second},
			{"ok", 1<<53 + 1, time.Second},
			{"ok", 1, 0},
			{"ok", 1, -time.Second},
			{"ok", 1, 315360000001 * time.Millisecond},
		} {
			_, err := b.q.Breaker(tc.name, tc.threshold, tc.window)
			require.ErrorIs(t, err, trafikey.ErrInvalid, "%q %d %s", tc.name, tc.threshold, tc.window)
		}
		_, err := b.q.Breaker("ok", 1, time.Nanosecond)
		require.NoError(t, err, "rounded up to a millisecond")
	})
}
