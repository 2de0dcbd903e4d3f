package trafikey_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
)

// keysOf lists the keys of queue name on the bundle's server.
func (b *testBundle) keysOf(t *testing.T, name string) []string {
	t.Helper()
	var keys []string
	cursor := "0"
	for {
		// every key, filtered here: the name may hold a glob's characters
		reply := b.do(t, "SCAN", cursor, "COUNT", "1000").([]any)
		for _, k := range reply[1].([]any) {
			if strings.HasPrefix(k.(string), protocol.Base(name)) {
				keys = append(keys, k.(string))
			}
		}
		if cursor = reply[0].(string); cursor == "0" {
			slices.Sort(keys)
			return keys
		}
	}
}

// TestDeleteQueue: a queue with jobs in every state, lanes, a flow, a
// schedule, events, retained jobs, a breaker and a Once set is deleted key
// by key, a queue whose name it prefixes is not touched, a worker still on
// it is refused with ErrWire, and Open makes the name a new empty queue.
func TestDeleteQueue(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.open(t, "doomed*[q]")
		keep := b.open(t, "doomed")
		admin := q.Admin()
		require.NoError(t, admin.SetEvents(ctx, 1000))
		require.NoError(t, admin.SetRetention(ctx, trafikey.RetentionPolicy{KeepCompleted: time.Hour}))
		require.NoError(t, admin.SetRate(ctx, 1000, time.Second))
		require.NoError(t, q.Lane("tenant").SetCap(ctx, 2))
		_, err := q.Schedules().Set(ctx, trafikey.Schedule{ID: "nightly", Cron: "0 3 * * *"})
		require.NoError(t, err)
		_, err = q.AddFlow(ctx, trafikey.JobSpec{Payload: []byte("parent"), Children: []trafikey.JobSpec{{Payload: []byte("child")}}})
		require.NoError(t, err)
		for i, o := range []*trafikey.JobOptions{
			nil, {Lane: "tenant"}, {Delay: time.Hour}, {UniqueKey: "u", UniqueTTL: time.Hour}, {MaxAttempts: 1}, nil, nil,
		} {
			_, err := q.Add(ctx, []byte{byte('a' + i)}, o)
			require.NoError(t, err)
		}
		jobs, err := q.Claim(ctx, time.Minute, 3)
		require.NoError(t, err)
		require.Len(t, jobs, 3)
		jobs[0].SetResult([]byte("kept"))
		require.NoError(t, jobs[0].Complete(ctx))
		_, err = jobs[1].Fail(ctx, errors.New("dead"), false)
		require.NoError(t, err)
		require.NoError(t, jobs[2].Log(ctx, "still running"))
		br, err := q.Breaker("smtp", 3, time.Minute)
		require.NoError(t, err)
		_, _, err = br.Failure(ctx)
		require.NoError(t, err)
		once, err := q.Once("seen")
		require.NoError(t, err)
		_, err = once.Mark(ctx, "7")
		require.NoError(t, err)
		_, err = keep.Add(ctx, []byte("kept"), nil)
		require.NoError(t, err)
		keepKeys := b.keysOf(t, "doomed")

		before := b.keysOf(t, q.Name())
		require.Greater(t, len(before), 15, "the queue holds many keys: %v", before)
		n, err := admin.DeleteQueue(ctx)
		require.NoError(t, err)
		require.Equal(t, len(before), n, "every key deleted once")
		require.Empty(t, b.keysOf(t, q.Name()))
		require.Equal(t, keepKeys, b.keysOf(t, "doomed"), "a queue whose name is a prefix is untouched")

		// the handle's verbs are refused: nothing is written
		_, err = q.Add(ctx, []byte("late"), nil)
		require.ErrorIs(t, err, trafikey.ErrWire)
		require.ErrorIs(t, jobs[2].Complete(ctx), trafikey.ErrWire)
		require.Empty(t, b.keysOf(t, q.Name()))
		n, err = admin.DeleteQueue(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "nothing left to delete")

		again := b.open(t, q.Name())
		s := stats(t, again)
		require.Zero(t, s.Pending+s.Delayed+s.Active+s.Dead+s.Waiting+s.Retained+s.TotalAdded)
		_, err = again.Add(ctx, []byte("fresh"), nil)
		require.NoError(t, err)
	})
}

// TestDeleteQueueStopsWorkers: a worker running on a deleted queue is refused
// with ErrWire on every claim and writes nothing while it runs.
func TestDeleteQueueStopsWorkers(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.open(t, "busy")
		started := make(chan struct{}, 1)
		w := newWorker(t, q, func(ctx context.Context, j *trafikey.Job) error {
			select {
			case started <- struct{}{}:
			default:
			}
			return nil
		}, trafikey.WorkerOptions{PollInterval: 5 * time.Millisecond})
		stop := runWorker(t, w)
		_, err := q.Add(ctx, []byte("x"), nil)
		require.NoError(t, err)
		<-started
		_, err = q.Admin().DeleteQueue(ctx)
		require.NoError(t, err)
		_, err = q.Add(ctx, []byte("y"), nil)
		require.ErrorIs(t, err, trafikey.ErrWire)
		// Looked at in the test's goroutine: a check still running after
		// the test ended (as require.Never's can) would meet the server
		// stopped by the cleanup.
		for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			require.Empty(t, b.keysOf(t, "busy"), "the worker's claims and maintenance write nothing")
		}
		require.NoError(t, stop())
	})
}
