package trafikey_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
)

func TestOnce(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		o, err := b.q.Once("emails")
		require.NoError(t, err)
		for _, id := range []string{"1", "8", "800000"} {
			seen, err := o.Seen(ctx, id)
			require.NoError(t, err)
			require.False(t, seen)
			first, err := o.Mark(ctx, id)
			require.NoError(t, err)
			require.True(t, first)
			first, err = o.Mark(ctx, id)
			require.NoError(t, err)
			require.False(t, first)
			seen, err = o.Seen(ctx, id)
			require.NoError(t, err)
			require.True(t, seen)
		}
		require.Equal(t, int64(800000/8+1), b.do(t, "STRLEN", "emq:{test}:once:emails"), "max id / 8 bytes")
		require.NoError(t, o.Reset(ctx))
		seen, err := o.Seen(ctx, "1")
		require.NoError(t, err)
		require.False(t, seen)

		for _, id := range []string{"0", "x", "4294967296", "01"} {
			_, err := o.Mark(ctx, id)
			require.ErrorIs(t, err, trafikey.ErrInvalid, id)
			_, err = o.Seen(ctx, id)
			require.ErrorIs(t, err, trafikey.ErrInvalid, id)
		}
		for _, name := range []string{"", "a b", "{x}"} {
			_, err := b.q.Once(name)
			require.ErrorIs(t, err, trafikey.ErrInvalid, name)
		}
	})
}

func TestOnceMiddleware(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		o, err := b.q.Once("charges")
		require.NoError(t, err)
		runs, fail := 0, true
		h := o.Middleware()(func(ctx context.Context, job *trafikey.Job) error {
			runs++
			if fail {
				return errors.New("declined")
			}
			return nil
		})
		job := &trafikey.Job{ID: "42"}
		require.Error(t, h(ctx, job))
		fail = false
		require.NoError(t, h(ctx, job), "a failed run is not marked: the retry runs")
		require.NoError(t, h(ctx, job), "a marked job completes without running")
		require.Equal(t, 2, runs)
	})
}
