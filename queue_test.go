package trafikey_test

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)

	t.Run("auto picks lua without the module", func(t *testing.T) {
		q, err := trafikey.Open(t.Context(), c, "auto", nil)
		require.NoError(t, err)
		require.Equal(t, trafikey.ExecutorLua, q.Executor())
		require.Equal(t, "auto", q.Name())
		require.Equal(t, protocol.WireString, valkeytest.Do(t, s, "GET", protocol.KeysOf("auto").Version))
	})
	t.Run("bad names", func(t *testing.T) {
		for _, name := range []string{"", "a{b", "a}b", string(bytes.Repeat([]byte("x"), protocol.MaxQueueName+1))} {
			_, err := trafikey.Open(t.Context(), c, name, nil)
			require.ErrorIs(t, err, trafikey.ErrInvalid, "name %q", name)
		}
	})
	t.Run("without install writes nothing", func(t *testing.T) {
		q, err := trafikey.Open(t.Context(), c, "ro", &trafikey.QueueOptions{NoInstall: true})
		require.NoError(t, err)
		require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", protocol.KeysOf("ro").Version))
		_, err = q.Stats(t.Context())
		require.ErrorIs(t, err, trafikey.ErrWire)
	})
}

func TestAddClaimComplete(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		// Payloads are bytes: NUL and invalid UTF-8 round-trip untouched.
		payloads := [][]byte{[]byte("plain"), {0, 1, 2, 0}, {0xff, 0xfe, 'x'}, {}}
		var ids []string
		for _, p := range payloads {
			id, err := b.q.Add(ctx, p, nil)
			require.NoError(t, err)
			ids = append(ids, id)
		}
		require.Equal(t, []string{"1", "2", "3", "4"}, ids)
		require.Equal(t, 4, stats(t, b.q).Pending)

		jobs, err := b.q.Claim(ctx, time.Minute, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 4)
		for i, j := range jobs {
			require.Equal(t, ids[i], j.ID)
			require.Equal(t, payloads[i], j.Payload)
			require.Equal(t, 1, j.Attempt)
			require.Same(t, b.q, j.Queue())
		}
		st := stats(t, b.q)
		require.Equal(t, 0, st.Pending)
		require.Equal(t, 4, st.Active)

		for _, j := range jobs {
			require.NoError(t, j.Complete(ctx))
		}
		st = stats(t, b.q)
		require.Equal(t, trafikey.Stats{TotalAdded: 4, TotalCompleted: 4}, st)

		// Nothing left: an empty claim is not an error.
		jobs, err = b.q.Claim(ctx, time.Minute, 10)
		require.NoError(t, err)
		require.Empty(t, jobs)
	})
}

func TestAddOptions(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		low, err := b.q.Add(ctx, []byte("low"), nil)
		require.NoError(t, err)
		high, err := b.q.Add(ctx, []byte("high"), &trafikey.JobOptions{Priority: 900, MaxAttempts: 7, Backoff: trafikey.BackoffFixed, BackoffBase: 1500 * time.Millisecond, UniqueKey: "u-1", UniqueTTL: time.Hour})
		require.NoError(t, err)
		later, err := b.q.Add(ctx, []byte("later"), &trafikey.JobOptions{Delay: time.Hour})
		require.NoError(t, err)

		info, err := b.q.Inspect(ctx, high)
		require.NoError(t, err)
		require.Equal(t, trafikey.StatePending, info.State)
		require.Equal(t, []byte("high"), info.Payload)
		require.Equal(t, 0, info.Attempts)
		require.Equal(t, 7, info.MaxAttempts)
		require.Equal(t, 900, info.Priority)
		require.Equal(t, trafikey.BackoffFixed, info.Backoff)
		require.Equal(t, 1500*time.Millisecond, info.BackoffBase)
		require.Equal(t, "u-1", info.UniqueKey)
		require.WithinDuration(t, time.Now(), info.AddedAt, time.Minute)

		info, err = b.q.Inspect(ctx, low)
		require.NoError(t, err)
		require.Equal(t, trafikey.StatePending, info.State)
		require.Equal(t, 3, info.MaxAttempts)
		require.Equal(t, 0, info.Priority)
		require.Equal(t, trafikey.BackoffExponential, info.Backoff)
		require.Equal(t, time.Second, info.BackoffBase)
		// the client's defaults are the row's: a job added without options
		// stores none of state, max, prio and bo
		k := protocol.KeysOf(b.q.Name())
		require.Equal(t, []any{protocol.FieldData, protocol.FieldAttempts, protocol.FieldAdded}, b.do(t, "HKEYS", k.Job(low)))
		require.Equal(t, []any{protocol.FieldData, protocol.FieldAttempts, protocol.FieldMax, protocol.FieldPriority,
			protocol.FieldBackoff, protocol.FieldAdded, protocol.FieldUnique}, b.do(t, "HKEYS", k.Job(high)))

		info, err = b.q.Inspect(ctx, later)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDelayed, info.State)

		// Higher priority first; the delayed job is not claimable.
		jobs, err := b.q.Claim(ctx, time.Minute, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		require.Equal(t, high, jobs[0].ID)
		require.Equal(t, low, jobs[1].ID)
		mt, err := b.q.Admin().Maintain(ctx, 10)
		n := mt.Promoted
		require.NoError(t, err)
		require.Zero(t, n)
		require.Equal(t, 1, stats(t, b.q).Delayed)
	})
}

func TestAddInvalidOptions(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		bad := map[string]trafikey.JobOptions{
			"priority":     {Priority: protocol.MaxPriority + 1},
			"negative":     {Priority: -1},
			"delay":        {Delay: -time.Second},
			"attempts":     {MaxAttempts: -1},
			"backoff kind": {Backoff: "linear", BackoffBase: time.Second},
			"backoff base": {Backoff: trafikey.BackoffFixed, BackoffBase: 25 * time.Hour},
			"unique ttl":   {UniqueKey: "k", UniqueTTL: 0},
			"unique key":   {UniqueKey: string(bytes.Repeat([]byte("k"), protocol.MaxUniqueKey+1)), UniqueTTL: time.Hour},
		}
		for name, opts := range bad {
			_, err := b.q.AddBatch(t.Context(), []trafikey.JobSpec{{Payload: []byte("ok")}, {Payload: []byte("bad"), Options: opts}})
			require.ErrorIs(t, err, trafikey.ErrInvalid, name)
		}
		// A bad option anywhere in a batch adds nothing at all.
		require.Equal(t, 0, stats(t, b.q).TotalAdded)
	})
}

func TestAddBatch(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		const n = 2*trafikey.MaxBatch + 17
		jobs := make([]trafikey.JobSpec, n)
		for i := range jobs {
			jobs[i] = trafikey.JobSpec{Payload: []byte(strconv.Itoa(i))}
		}
		ids, err := b.q.AddBatch(ctx, jobs)
		require.NoError(t, err)
		require.Len(t, ids, n)
		for i, id := range ids {
			require.Equal(t, strconv.Itoa(i+1), id)
		}
		require.Equal(t, n, stats(t, b.q).Pending)

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
		first, err := b.q.Add(ctx, []byte("a"), &trafikey.JobOptions{UniqueKey: "order-7", UniqueTTL: time.Hour})
		require.NoError(t, err)

		_, err = b.q.Add(ctx, []byte("b"), &trafikey.JobOptions{UniqueKey: "order-7", UniqueTTL: time.Hour})
		require.ErrorIs(t, err, trafikey.ErrDuplicate)
		var se *trafikey.Error
		require.ErrorAs(t, err, &se)
		require.Equal(t, first, se.JobID)
		require.Equal(t, protocol.ErrAddDuplicate(first), se.Text)
		require.Equal(t, "add", se.Verb)

		// A batch is all or none: the fresh job is not added either.
		_, err = b.q.AddBatch(ctx, []trafikey.JobSpec{
			{Payload: []byte("fresh"), Options: trafikey.JobOptions{UniqueKey: "order-8", UniqueTTL: time.Hour}},
			{Payload: []byte("dup"), Options: trafikey.JobOptions{UniqueKey: "order-7", UniqueTTL: time.Hour}},
		})
		require.ErrorAs(t, err, &se)
		require.Equal(t, first, se.JobID)
		_, err = b.q.AddBatch(ctx, []trafikey.JobSpec{
			{Payload: []byte("x"), Options: trafikey.JobOptions{UniqueKey: "same", UniqueTTL: time.Hour}},
			{Payload: []byte("y"), Options: trafikey.JobOptions{UniqueKey: "same", UniqueTTL: time.Hour}},
		})
		require.ErrorAs(t, err, &se)
		require.Empty(t, se.JobID)
		require.Equal(t, 1, stats(t, b.q).TotalAdded)

		// Completing the holder releases the key.
		require.NoError(t, claimOne(t, b.q, time.Minute).Complete(ctx))
		_, err = b.q.Add(ctx, []byte("c"), &trafikey.JobOptions{UniqueKey: "order-7", UniqueTTL: time.Hour})
		require.NoError(t, err)
	})
}

func TestFailRetryAndDead(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		id, err := b.q.Add(ctx, []byte("flaky"), &trafikey.JobOptions{MaxAttempts: 2, Backoff: trafikey.BackoffFixed, BackoffBase: 0})
		require.NoError(t, err)

		j := claimOne(t, b.q, time.Minute)
		retrying, err := j.Fail(ctx, errors.New("first"), true)
		require.NoError(t, err)
		require.True(t, retrying)
		info, err := b.q.Inspect(ctx, id)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDelayed, info.State)
		require.Equal(t, "first", info.LastError)

		mt, err := b.q.Admin().Maintain(ctx, 10)

		n := mt.Promoted
		require.NoError(t, err)
		require.Equal(t, 1, n)
		j = claimOne(t, b.q, time.Minute)
		require.Equal(t, 2, j.Attempt)
		retrying, err = j.Fail(ctx, errors.New("second"), true)
		require.NoError(t, err)
		require.False(t, retrying, "no attempts left")

		st := stats(t, b.q)
		require.Equal(t, 1, st.Dead)
		require.Equal(t, 2, st.TotalFailed)
		require.Equal(t, 1, st.TotalRetried)
		require.Equal(t, 1, st.TotalDead)

		// Requeue gives a fresh set of attempts; the old token stays stale.
		require.NoError(t, b.q.Admin().Requeue(ctx, id))
		j3 := claimOne(t, b.q, time.Minute)
		require.Equal(t, 3, j3.Attempt)
		require.ErrorIs(t, j.Complete(ctx), trafikey.ErrLeaseLost)
		// retry=false dead-letters at once.
		retrying, err = j3.Fail(ctx, nil, false)
		require.NoError(t, err)
		require.False(t, retrying)
		require.NoError(t, b.q.Admin().Remove(ctx, id))
		require.ErrorIs(t, b.q.Admin().Remove(ctx, id), trafikey.ErrNotFound)
		require.Equal(t, 1, stats(t, b.q).TotalRemoved)
	})
}

func TestLeaseRecovery(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		again, err := b.q.Add(ctx, []byte("again"), nil)
		require.NoError(t, err)
		last, err := b.q.Add(ctx, []byte("last"), &trafikey.JobOptions{MaxAttempts: 1})
		require.NoError(t, err)
		jobs, err := b.q.Claim(ctx, time.Minute, 2)
		require.NoError(t, err)
		require.Len(t, jobs, 2)

		mt, err := b.q.Admin().Maintain(ctx, 10)

		requeued, dead := mt.Recovered, mt.Expired
		require.NoError(t, err)
		require.Zero(t, requeued+dead, "leases still valid")

		expireLeases(t, b, b.q)
		mt, err = b.q.Admin().Maintain(ctx, 10)
		requeued, dead = mt.Recovered, mt.Expired
		require.NoError(t, err)
		require.Equal(t, 1, requeued)
		require.Equal(t, 1, dead)

		info, err := b.q.Inspect(ctx, again)
		require.NoError(t, err)
		require.Equal(t, trafikey.StatePending, info.State)
		info, err = b.q.Inspect(ctx, last)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDead, info.State)
		require.Equal(t, protocol.LeaseExpired, info.LastError)
		require.Equal(t, 1, stats(t, b.q).TotalRecovered)
	})
}

func TestLogProgressExtend(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.open(t, "logs", trafikey.QueueOptions{LogCap: 2})
		id, err := q.Add(ctx, []byte("x"), nil)
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
		require.Equal(t, trafikey.StateActive, info.State)
		require.Equal(t, []string{"line 1", "line 2"}, info.Logs)
		require.Equal(t, "50%", info.Progress)
		require.Equal(t, 1, info.Attempts)

		require.NoError(t, j.Complete(ctx))
		_, err = q.Inspect(ctx, id)
		require.ErrorIs(t, err, trafikey.ErrNotFound)
		require.ErrorIs(t, j.Log(ctx, "late"), trafikey.ErrNotFound)
		require.ErrorIs(t, j.Progress(ctx, "late"), trafikey.ErrNotFound)
		_, err = j.Extend(ctx, time.Minute)
		require.ErrorIs(t, err, trafikey.ErrNotFound)
	})
}

func TestPauseResume(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		require.NoError(t, b.q.Admin().Pause(ctx))
		require.NoError(t, b.q.Admin().Pause(ctx), "pausing twice is a no-op")
		_, err := b.q.Add(ctx, []byte("x"), nil)
		require.NoError(t, err)
		require.True(t, stats(t, b.q).Paused)
		jobs, err := b.q.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		require.Empty(t, jobs)

		require.NoError(t, b.q.Admin().Resume(ctx))
		require.False(t, stats(t, b.q).Paused)
		claimOne(t, b.q, time.Minute)
	})
}
