package trafikey_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
)

// addDead adds n jobs of one attempt and fails each to dead with error
// "boom <id>"; it returns their ids in order.
func addDead(t *testing.T, q *trafikey.Queue, n int, opts trafikey.JobOptions) []string {
	t.Helper()
	opts.MaxAttempts = 1
	ids := make([]string, n)
	for i := range ids {
		id, err := q.Add(t.Context(), []byte("d"+strconv.Itoa(i)), &opts)
		require.NoError(t, err)
		ids[i] = id
	}
	for range n {
		j := claimOne(t, q, time.Minute)
		retrying, err := j.Fail(t.Context(), errors.New("boom "+j.ID), false)
		require.NoError(t, err)
		require.False(t, retrying)
	}
	return ids
}

// collectRows reads every page of the jobs in state, following Next.
func collectRows(t *testing.T, q *trafikey.Queue, state trafikey.JobState, opts trafikey.JobsOptions) []string {
	t.Helper()
	var ids []string
	for {
		p, err := q.Jobs(t.Context(), state, opts)
		require.NoError(t, err)
		for _, r := range p.Rows {
			ids = append(ids, r.ID)
		}
		if p.Next == "" {
			return ids
		}
		opts.After = p.Next
	}
}

func TestJobs(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		var want []string
		for i := range 25 {
			id, err := q.Add(ctx, []byte(strings.Repeat("p", i)), &trafikey.JobOptions{Priority: i % 3})
			require.NoError(t, err)
			want = append(want, id)
		}
		// claim order: priority (i%3 for id i+1) first, then id
		prio := func(id string) int { n, _ := strconv.Atoi(id); return (n - 1) % 3 }
		slices.SortStableFunc(want, func(a, b string) int { return prio(b) - prio(a) })
		got := collectRows(t, q, trafikey.StatePending, trafikey.JobsOptions{Limit: 4})
		require.Equal(t, want, got)
		rev := collectRows(t, q, trafikey.StatePending, trafikey.JobsOptions{Limit: 7, Newest: true})
		slices.Reverse(rev)
		require.Equal(t, want, rev)

		p, err := q.Jobs(ctx, trafikey.StatePending, trafikey.JobsOptions{Limit: 10, Clip: 3})
		require.NoError(t, err)
		require.Equal(t, 25, p.Total)
		require.Len(t, p.Rows, 10)
		require.NotEmpty(t, p.Next)
		r := p.Rows[0]
		require.True(t, r.Exists)
		require.Equal(t, trafikey.StatePending, r.State)
		require.Equal(t, 2, r.Priority)
		n, _ := strconv.Atoi(r.ID)
		require.Equal(t, n-1, r.PayloadSize)
		require.Equal(t, []byte(strings.Repeat("p", min(n-1, 3))), r.Preview)
		require.True(t, r.At.IsZero(), "a pending row's score is no time")
		require.WithinDuration(t, time.Now(), r.AddedAt, time.Hour)

		next, err := q.Jobs(ctx, trafikey.StatePending, trafikey.JobsOptions{Limit: 100, After: p.Next})
		require.NoError(t, err)
		require.Len(t, next.Rows, 15)
		require.Empty(t, next.Next)

		// dead rows carry their error and time of death
		dq := b.open(t, "dead")
		addDead(t, dq, 3, trafikey.JobOptions{Lane: "x", Kind: "email.send"})
		dp, err := dq.Jobs(ctx, trafikey.StateDead, trafikey.JobsOptions{Newest: true})
		require.NoError(t, err)
		require.Equal(t, []string{"3", "2", "1"}, []string{dp.Rows[0].ID, dp.Rows[1].ID, dp.Rows[2].ID})
		require.Equal(t, "email.send", dp.Rows[0].Kind)
		require.Empty(t, r.Kind, "a job added without a kind")
		require.Equal(t, "boom 3", dp.Rows[0].LastError)
		require.Equal(t, 6, dp.Rows[0].ErrorSize)
		require.Equal(t, "x", dp.Rows[0].Lane)
		require.Equal(t, 1, dp.Rows[0].Attempts)
		require.False(t, dp.Rows[0].At.IsZero())
		none, err := dq.Jobs(ctx, trafikey.StateDead, trafikey.JobsOptions{Clip: -1})
		require.NoError(t, err)
		require.Empty(t, none.Rows[0].LastError)
		require.Nil(t, none.Rows[0].Preview)
		lane, err := q.Jobs(ctx, trafikey.StatePending, trafikey.JobsOptions{Lane: "x"})
		require.NoError(t, err)
		require.Empty(t, lane.Rows)
	})
}

func TestRequeueDead(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		ids := addDead(t, q, 2500, trafikey.JobOptions{})
		// a lane's, and an error text
		addDead(t, q, 3, trafikey.JobOptions{Lane: "x"})
		var calls []trafikey.BulkProgress
		n, err := q.Admin().RequeueDead(ctx, trafikey.DeadFilter{Lane: "x"}, func(p trafikey.BulkProgress) { calls = append(calls, p) })
		require.NoError(t, err)
		require.Equal(t, 3, n)
		require.Len(t, calls, 26, "2503 dead jobs examined 100 at a time")
		require.Equal(t, trafikey.BulkProgress{Done: 3, Examined: 2503, Total: 2503}, calls[25])
		li, err := q.Lane("x").Info(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, li.Waiting)

		b.do(t, "HSET", protocol.KeysOf(q.Name()).Job(ids[7]), "err", "upstream said 502")
		n, err = q.Admin().RequeueDead(ctx, trafikey.DeadFilter{ErrorContains: "said 5"}, nil)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		info, err := q.Inspect(ctx, ids[7])
		require.NoError(t, err)
		require.Equal(t, trafikey.StatePending, info.State)

		n, err = q.Admin().RequeueDead(ctx, trafikey.DeadFilter{}, nil)
		require.NoError(t, err)
		require.Equal(t, 2499, n)
		s := stats(t, q)
		require.Equal(t, 0, s.Dead)
		require.Equal(t, 2503, s.TotalRequeued)
		require.Equal(t, 2503, s.Pending)

		// a window of times of death that holds nothing
		n, err = q.Admin().RequeueDead(ctx, trafikey.DeadFilter{DiedBefore: time.UnixMilli(5)}, nil)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

func TestRemoveDead(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		addDead(t, q, 4, trafikey.JobOptions{})
		key := protocol.KeysOf(q.Name()).Dead
		// two died long ago
		b.do(t, "ZADD", key, "XX", "1000", "1", "2000", "2")
		n, err := q.Admin().RemoveDead(ctx, trafikey.DeadFilter{OlderThan: time.Hour}, nil)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		_, err = q.Inspect(ctx, "1")
		require.ErrorIs(t, err, trafikey.ErrNotFound)
		n, err = q.Admin().RemoveDead(ctx, trafikey.DeadFilter{DiedAfter: time.Now().Add(-time.Hour)}, nil)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		s := stats(t, q)
		require.Equal(t, 0, s.Dead)
		require.Equal(t, 4, s.TotalRemoved)
	})
}

func TestPromoteAllAndRescheduleNow(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		for range 1500 {
			_, err := q.Add(ctx, []byte("later"), &trafikey.JobOptions{Delay: time.Hour})
			require.NoError(t, err)
		}
		var last trafikey.BulkProgress
		n, err := q.Admin().PromoteAll(ctx, func(p trafikey.BulkProgress) { last = p })
		require.NoError(t, err)
		require.Equal(t, 1500, n)
		require.Equal(t, trafikey.BulkProgress{Done: 1500, Examined: 1500, Total: 1500}, last)
		require.Equal(t, 1500, stats(t, q).Pending)

		id, err := q.Add(ctx, []byte("one"), &trafikey.JobOptions{Delay: time.Hour})
		require.NoError(t, err)
		state, err := q.Admin().Reschedule(ctx, id, 0)
		require.NoError(t, err)
		require.Equal(t, trafikey.StatePending, state)
		_, err = q.Admin().Reschedule(ctx, "99999", 0)
		require.ErrorIs(t, err, trafikey.ErrNotFound)
		info, err := q.Inspect(ctx, id)
		require.NoError(t, err)
		require.Equal(t, trafikey.StatePending, info.State)
	})
}

func TestOpsValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	io := &noIO{}
	q, err := trafikey.Open(ctx, nil, "v", trafikey.WithRunner(io, &trafikey.QueueOptions{NoInstall: true}))
	require.NoError(t, err)
	for what, opts := range map[string]trafikey.JobsOptions{
		"limit":          {Limit: protocol.MaxCount + 1},
		"negative limit": {Limit: -1},
		"clip":           {Clip: protocol.MaxClip + 1},
		"negative clip":  {Clip: -2},
		"cursor":         {After: "x:1"},
		"cursor score":   {After: "01:1"},
		"cursor 2^53":    {After: "9007199254740992:1"},
		"cursor colon":   {After: "12"},
		"lane of dead":   {Lane: "x"},
	} {
		_, err := q.Jobs(ctx, trafikey.StateDead, opts)
		requireInvalid(t, err, what)
	}
	_, err = q.Jobs(ctx, "retained", trafikey.JobsOptions{})
	requireInvalid(t, err, "state")
	_, err = q.Jobs(ctx, trafikey.StatePending, trafikey.JobsOptions{Lane: strings.Repeat("l", 129)})
	requireInvalid(t, err, "lane")
	_, err = q.Jobs(ctx, trafikey.StateDead, trafikey.JobsOptions{Limit: -1})
	requireInvalid(t, err, "limit")
	now := time.Now()
	for what, f := range map[string]trafikey.DeadFilter{
		"older than":     {OlderThan: -time.Second},
		"before ≤ after": {DiedAfter: now, DiedBefore: now},
		"lane":           {Lane: strings.Repeat("l", 129)},
		"error":          {ErrorContains: strings.Repeat("e", protocol.MaxText+1)},
	} {
		_, err := q.Admin().RequeueDead(ctx, f, nil)
		requireInvalid(t, err, "requeue dead "+what)
		_, err = q.Admin().RemoveDead(ctx, f, nil)
		requireInvalid(t, err, "remove dead "+what)
	}
	require.Zero(t, io.calls.Load())
}

// TestClusterOps runs the operations on queues spread over a cluster: each
// queue is one slot, so every call, the walks' included, runs on its node.
func TestClusterOps(t *testing.T) {
	skipInShort(t, "a cluster of three primaries")
	t.Parallel()
	for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
		t.Run(string(exec), func(t *testing.T) {
			t.Parallel()
			_, c := startCluster(t, exec)
			ctx := t.Context()
			for i := range 6 {
				q, err := trafikey.Open(ctx, c, "ops"+strconv.Itoa(i), &trafikey.QueueOptions{Executor: exec})
				require.NoError(t, err)
				addDead(t, q, 3, trafikey.JobOptions{})
				_, err = q.Add(ctx, []byte("later"), &trafikey.JobOptions{Delay: time.Hour})
				require.NoError(t, err)

				p, err := q.Jobs(ctx, trafikey.StateDead, trafikey.JobsOptions{Limit: 2, Newest: true})
				require.NoError(t, err)
				require.Len(t, p.Rows, 2)
				rest, err := q.Jobs(ctx, trafikey.StateDead, trafikey.JobsOptions{Limit: 2, Newest: true, After: p.Next})
				require.NoError(t, err)
				require.Len(t, rest.Rows, 1)
				n, err := q.Admin().RequeueDead(ctx, trafikey.DeadFilter{ErrorContains: "boom 2"}, nil)
				require.NoError(t, err)
				require.Equal(t, 1, n)
				n, err = q.Admin().RemoveDead(ctx, trafikey.DeadFilter{}, nil)
				require.NoError(t, err)
				require.Equal(t, 2, n)
				n, err = q.Admin().PromoteAll(ctx, nil)
				require.NoError(t, err)
				require.Equal(t, 1, n)
				s := stats(t, q)
				require.Equal(t, 2, s.Pending, q.Name())
				require.Zero(t, s.Dead+s.Delayed, q.Name())
			}
		})
	}
}
