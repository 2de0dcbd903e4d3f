package emq_test

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"trafikey/emq"
	"trafikey/internal/valkeyserver"
	"trafikey/internal/valkeytest"
	"trafikey/protocol"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)

	t.Run("auto picks lua without the module", func(t *testing.T) {
		q, err := emq.Open(t.Context(), c, "auto")
		require.NoError(t, err)
		require.Equal(t, "lua", q.Executor())
		require.Equal(t, "auto", q.Name())
		require.Equal(t, protocol.WireString, valkeytest.Do(t, s, "GET", protocol.KeysOf("auto").Version))
	})
	t.Run("bad names", func(t *testing.T) {
		for _, name := range []string{"", "a{b", "a}b", string(bytes.Repeat([]byte("x"), protocol.MaxQueueName+1))} {
			_, err := emq.Open(t.Context(), c, name)
			require.ErrorIs(t, err, protocol.ErrQueueName, "name %q", name)
		}
	})
	t.Run("without install writes nothing", func(t *testing.T) {
		q, err := emq.Open(t.Context(), c, "ro", emq.WithoutInstall())
		require.NoError(t, err)
		require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", protocol.KeysOf("ro").Version))
		_, err = q.Stats(t.Context())
		require.ErrorIs(t, err, emq.ErrWire)
	})
}

func TestAddClaimComplete(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		// Payloads are bytes: NUL and invalid UTF-8 round-trip untouched.
		payloads := [][]byte{[]byte("plain"), {0, 1, 2, 0}, {0xff, 0xfe, 'x'}, {}}
		var ids []string
		for _, p := range payloads {
			id, err := b.q.Add(ctx, p)
			require.NoError(t, err)
			ids = append(ids, id)
		}
		require.Equal(t, []string{"1", "2", "3", "4"}, ids)
		require.Equal(t, int64(4), stats(t, b.q).Pending)

		jobs, err := b.q.Claim(ctx, time.Minute, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 4)
		for i, j := range jobs {
			require.Equal(t, ids[i], j.ID)
			require.Equal(t, payloads[i], j.Payload)
			require.Equal(t, int64(1), j.Attempt)
			require.Same(t, b.q, j.Queue())
		}
		st := stats(t, b.q)
		require.Equal(t, int64(0), st.Pending)
		require.Equal(t, int64(4), st.Active)

		for _, j := range jobs {
			require.NoError(t, j.Complete(ctx))
		}
		st = stats(t, b.q)
		require.Equal(t, emq.Stats{TotalAdded: 4, TotalCompleted: 4}, st)

		// Nothing left: an empty claim is not an error.
		jobs, err = b.q.Claim(ctx, time.Minute, 10)
		require.NoError(t, err)
		require.Empty(t, jobs)
	})
}

func TestAddOptions(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		low, err := b.q.Add(ctx, []byte("low"))
		require.NoError(t, err)
		high, err := b.q.Add(ctx, []byte("high"), emq.Priority(900), emq.MaxAttempts(7),
			emq.Backoff(emq.BackoffFixed, 1500*time.Millisecond), emq.Unique("u-1", time.Hour))
		require.NoError(t, err)
		later, err := b.q.Add(ctx, []byte("later"), emq.Delay(time.Hour))
		require.NoError(t, err)

		info, err := b.q.Inspect(ctx, high)
		require.NoError(t, err)
		require.Equal(t, emq.StatePending, info.State)
		require.Equal(t, []byte("high"), info.Payload)
		require.Equal(t, int64(0), info.Attempts)
		require.Equal(t, int64(7), info.MaxAttempts)
		require.Equal(t, 900, info.Priority)
		require.Equal(t, emq.BackoffFixed, info.Backoff)
		require.Equal(t, 1500*time.Millisecond, info.BackoffBase)
		require.Equal(t, "u-1", info.UniqueKey)
		require.WithinDuration(t, time.Now(), info.AddedAt, time.Minute)

		info, err = b.q.Inspect(ctx, low)
		require.NoError(t, err)
		require.Equal(t, int64(emq.DefaultMaxAttempts), info.MaxAttempts)
		require.Equal(t, emq.BackoffExponential, info.Backoff)
		require.Equal(t, emq.DefaultBackoffBase, info.BackoffBase)

		info, err = b.q.Inspect(ctx, later)
		require.NoError(t, err)
		require.Equal(t, emq.StateDelayed, info.State)

		// Higher priority first; the delayed job is not claimable.
		jobs, err := b.q.Claim(ctx, time.Minute, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		require.Equal(t, high, jobs[0].ID)
		require.Equal(t, low, jobs[1].ID)
		n, err := b.q.Promote(ctx, 10)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Equal(t, int64(1), stats(t, b.q).Delayed)
	})
}

func TestAddInvalidOptions(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		bad := map[string][]emq.AddOption{
			"priority":     {emq.Priority(protocol.MaxPriority + 1)},
			"negative":     {emq.Priority(-1)},
			"delay":        {emq.Delay(-time.Second)},
			"attempts":     {emq.MaxAttempts(0)},
			"backoff kind": {emq.Backoff("linear", time.Second)},
			"backoff base": {emq.Backoff(emq.BackoffFixed, 25*time.Hour)},
			"unique ttl":   {emq.Unique("k", 0)},
			"unique key":   {emq.Unique(string(bytes.Repeat([]byte("k"), protocol.MaxUniqueKey+1)), time.Hour)},
		}
		for name, opts := range bad {
			_, err := b.q.AddBatch(t.Context(), []emq.NewJob{{Payload: []byte("ok")}, {Payload: []byte("bad"), Options: opts}})
			require.ErrorIs(t, err, emq.ErrInvalid, name)
		}
		// A bad option anywhere in a batch adds nothing at all.
		require.Equal(t, int64(0), stats(t, b.q).TotalAdded)
	})
}

func TestAddBatch(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		const n = 2*emq.MaxBatch + 17
		jobs := make([]emq.NewJob, n)
		for i := range jobs {
			jobs[i] = emq.NewJob{Payload: []byte(strconv.Itoa(i))}
		}
		ids, err := b.q.AddBatch(ctx, jobs)
		require.NoError(t, err)
		require.Len(t, ids, n)
		for i, id := range ids {
			require.Equal(t, strconv.Itoa(i+1), id)
		}
		require.Equal(t, int64(n), stats(t, b.q).Pending)

		claimed, err := b.q.Claim(ctx, time.Minute, 1000)
		require.NoError(t, err)
		require.Len(t, claimed, 1000)
		for i, j := range claimed {
			require.Equal(t, []byte(strconv.Itoa(i)), j.Payload)
		}
	})
}

func TestUnique(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		first, err := b.q.Add(ctx, []byte("a"), emq.Unique("order-7", time.Hour))
		require.NoError(t, err)

		_, err = b.q.Add(ctx, []byte("b"), emq.Unique("order-7", time.Hour))
		require.ErrorIs(t, err, emq.ErrDuplicate)
		var dup *emq.DuplicateError
		require.ErrorAs(t, err, &dup)
		require.Equal(t, first, dup.ID)
		var se *emq.ServerError
		require.ErrorAs(t, err, &se)
		require.Equal(t, protocol.ErrAddDuplicate(first), se.Text)
		require.Equal(t, "add", se.Verb)

		// A batch is all or none: the fresh job is not added either.
		_, err = b.q.AddBatch(ctx, []emq.NewJob{
			{Payload: []byte("fresh"), Options: []emq.AddOption{emq.Unique("order-8", time.Hour)}},
			{Payload: []byte("dup"), Options: []emq.AddOption{emq.Unique("order-7", time.Hour)}},
		})
		require.ErrorAs(t, err, &dup)
		require.Equal(t, first, dup.ID)
		_, err = b.q.AddBatch(ctx, []emq.NewJob{
			{Payload: []byte("x"), Options: []emq.AddOption{emq.Unique("same", time.Hour)}},
			{Payload: []byte("y"), Options: []emq.AddOption{emq.Unique("same", time.Hour)}},
		})
		require.ErrorAs(t, err, &dup)
		require.Empty(t, dup.ID)
		require.Equal(t, int64(1), stats(t, b.q).TotalAdded)

		// Completing the holder releases the key.
		require.NoError(t, claimOne(t, b.q, time.Minute).Complete(ctx))
		_, err = b.q.Add(ctx, []byte("c"), emq.Unique("order-7", time.Hour))
		require.NoError(t, err)
	})
}

func TestFailRetryAndDead(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		id, err := b.q.Add(ctx, []byte("flaky"), emq.MaxAttempts(2), emq.Backoff(emq.BackoffFixed, 0))
		require.NoError(t, err)

		j := claimOne(t, b.q, time.Minute)
		retrying, err := j.Fail(ctx, errors.New("first"), true)
		require.NoError(t, err)
		require.True(t, retrying)
		info, err := b.q.Inspect(ctx, id)
		require.NoError(t, err)
		require.Equal(t, emq.StateDelayed, info.State)
		require.Equal(t, "first", info.LastError)

		n, err := b.q.Promote(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		j = claimOne(t, b.q, time.Minute)
		require.Equal(t, int64(2), j.Attempt)
		retrying, err = j.Fail(ctx, errors.New("second"), true)
		require.NoError(t, err)
		require.False(t, retrying, "no attempts left")

		st := stats(t, b.q)
		require.Equal(t, int64(1), st.Dead)
		require.Equal(t, int64(2), st.TotalFailed)
		require.Equal(t, int64(1), st.TotalRetried)
		require.Equal(t, int64(1), st.TotalDead)

		// Requeue gives a fresh set of attempts; the old token stays stale.
		require.NoError(t, b.q.Requeue(ctx, id))
		j3 := claimOne(t, b.q, time.Minute)
		require.Equal(t, int64(3), j3.Attempt)
		require.ErrorIs(t, j.Complete(ctx), emq.ErrStale)
		// retry=false dead-letters at once.
		retrying, err = j3.Fail(ctx, nil, false)
		require.NoError(t, err)
		require.False(t, retrying)
		require.NoError(t, b.q.Remove(ctx, id))
		require.ErrorIs(t, b.q.Remove(ctx, id), emq.ErrNotFound)
		require.Equal(t, int64(1), stats(t, b.q).TotalRemoved)
	})
}

func TestLeaseRecovery(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		again, err := b.q.Add(ctx, []byte("again"))
		require.NoError(t, err)
		last, err := b.q.Add(ctx, []byte("last"), emq.MaxAttempts(1))
		require.NoError(t, err)
		jobs, err := b.q.Claim(ctx, time.Minute, 2)
		require.NoError(t, err)
		require.Len(t, jobs, 2)

		requeued, dead, err := b.q.Recover(ctx, 10)
		require.NoError(t, err)
		require.Zero(t, requeued+dead, "leases still valid")

		expireLeases(t, b, b.q)
		requeued, dead, err = b.q.Recover(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, requeued)
		require.Equal(t, 1, dead)

		info, err := b.q.Inspect(ctx, again)
		require.NoError(t, err)
		require.Equal(t, emq.StatePending, info.State)
		info, err = b.q.Inspect(ctx, last)
		require.NoError(t, err)
		require.Equal(t, emq.StateDead, info.State)
		require.Equal(t, protocol.LeaseExpired, info.LastError)
		require.Equal(t, int64(1), stats(t, b.q).TotalRecovered)
	})
}

func TestLogProgressExtend(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.open(t, "logs", emq.WithLogCap(2))
		id, err := q.Add(ctx, []byte("x"))
		require.NoError(t, err)
		j := claimOne(t, q, time.Second)
		for i := range 3 {
			require.NoError(t, j.Log(ctx, fmt.Sprintf("line %d", i)))
		}
		require.NoError(t, j.Progress(ctx, "50%"))
		deadline, err := j.Extend(ctx, time.Hour)
		require.NoError(t, err)
		require.WithinDuration(t, time.Now().Add(time.Hour), deadline, time.Minute)

		info, err := q.Inspect(ctx, id)
		require.NoError(t, err)
		require.Equal(t, emq.StateActive, info.State)
		require.Equal(t, []string{"line 1", "line 2"}, info.Logs)
		require.Equal(t, "50%", info.Progress)
		require.Equal(t, int64(1), info.Attempts)

		require.NoError(t, j.Complete(ctx))
		_, err = q.Inspect(ctx, id)
		require.ErrorIs(t, err, emq.ErrNotFound)
		require.ErrorIs(t, j.Log(ctx, "late"), emq.ErrNotFound)
		require.ErrorIs(t, j.Progress(ctx, "late"), emq.ErrNotFound)
		_, err = j.Extend(ctx, time.Minute)
		require.ErrorIs(t, err, emq.ErrNotFound)
	})
}

func TestPauseResume(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		require.NoError(t, b.q.Pause(ctx))
		require.NoError(t, b.q.Pause(ctx), "pausing twice is a no-op")
		_, err := b.q.Add(ctx, []byte("x"))
		require.NoError(t, err)
		require.True(t, stats(t, b.q).Paused)
		jobs, err := b.q.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		require.Empty(t, jobs)

		require.NoError(t, b.q.Resume(ctx))
		require.False(t, stats(t, b.q).Paused)
		claimOne(t, b.q, time.Minute)
	})
}
