package latency_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/latency"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/trafikeytest"
)

// TestOldest: the oldest waiting job, not the next to be claimed: a lower
// priority's job waits behind younger ones of higher priorities. In lanes,
// on a partitioned queue, and at most MaxPriorities priorities read.
func TestOldest(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := trafikeytest.NewServer(t)
	for _, parts := range []int{1, 3} {
		q, err := trafikey.Open(ctx, srv.Client(), "q"+string(rune('0'+parts)), &trafikey.QueueOptions{Partitions: parts})
		require.NoError(t, err)
		for _, lane := range []string{"", "acme"} {
			none, err := latency.Oldest(ctx, q, lane)
			require.NoError(t, err)
			require.True(t, none.IsZero(), "none waits")

			// added oldest first, each of a higher priority than the last,
			// each in a millisecond of its own
			var added []time.Time
			for prio := range latency.MaxPriorities + 1 {
				id, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{Priority: prio, Lane: lane})
				require.NoError(t, err)
				info, err := q.Inspect(ctx, id)
				require.NoError(t, err)
				added = append(added, info.AddedAt)
				time.Sleep(2 * time.Millisecond)
			}
			require.True(t, added[1].Before(added[len(added)-1]), "the adds are ms apart")

			// 17 priorities: the oldest of the 16 highest, priority 1's
			oldest, err := latency.Oldest(ctx, q, lane)
			require.NoError(t, err)
			require.Equal(t, added[1], oldest, "lane %q, %d partitions", lane, parts)

			// one job claimed (the first of a partition: never priority
			// 0's, behind others in each): 16 priorities left, all read
			_, err = q.Claim(ctx, time.Minute, 1)
			require.NoError(t, err)
			oldest, err = latency.Oldest(ctx, q, lane)
			require.NoError(t, err)
			require.Equal(t, added[0], oldest, "lane %q, %d partitions", lane, parts)

			n, err := q.Admin().DeleteQueue(ctx)
			require.NoError(t, err)
			require.Positive(t, n)
			q, err = trafikey.Open(ctx, srv.Client(), q.Name(), &trafikey.QueueOptions{Partitions: parts})
			require.NoError(t, err)
		}
	}
}

// TestOldestPassesOverAGoneRow: a pending member whose row is gone (a
// dataset changed behind the verbs' back) has no add time; the oldest is
// the oldest of the others, and the walk goes on past its priority.
func TestOldestPassesOverAGoneRow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := trafikeytest.NewServer(t)
	q, err := trafikey.Open(ctx, srv.Client(), "gone", nil)
	require.NoError(t, err)
	id, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{Priority: 5})
	require.NoError(t, err)
	info, err := q.Inspect(ctx, id)
	require.NoError(t, err)
	// members without a row: of priority 1000, first in claim order, and
	// of priority 0, the last
	k := protocol.KeysOf("gone")
	c := srv.Client()
	require.NoError(t, c.Do(ctx, c.B().Zadd().Key(k.Pending).ScoreMember().
		ScoreMember(float64(protocol.PendingScore(protocol.MaxPriority, 998)), "998").
		ScoreMember(float64(protocol.PendingScore(0, 999)), "999").Build()).Error())
	oldest, err := latency.Oldest(ctx, q, "")
	require.NoError(t, err)
	require.Equal(t, info.AddedAt, oldest)
}

func TestSince(t *testing.T) {
	t.Parallel()
	now := time.Now()
	require.Equal(t, 1500*time.Millisecond, latency.Since(now.Add(-1500*time.Millisecond), now))
	require.Zero(t, latency.Since(time.Time{}, now), "none waits")
	require.Zero(t, latency.Since(now.Add(time.Second), now), "added ahead of this clock")
}
