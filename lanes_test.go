package trafikey_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

func addLaned(t *testing.T, q *trafikey.Queue, lane string, n int) []string {
	t.Helper()
	jobs := make([]trafikey.JobSpec, n)
	for i := range jobs {
		jobs[i] = trafikey.JobSpec{Payload: []byte(lane + "/" + strconv.Itoa(i)), Options: trafikey.JobOptions{Lane: lane}}
	}
	ids, err := q.AddBatch(t.Context(), jobs)
	require.NoError(t, err)
	return ids
}

// laneOf is the lane a claimed job's payload names ("" for none).
func laneOf(j *trafikey.Job) string {
	p := string(j.Payload)
	for i := range len(p) {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return p
}

// One lane's backlog does not hold up the others: every participant (the
// lanes and the jobs without one) gets one job per pass.
func TestLanesRoundRobin(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q := b.q
		addLaned(t, q, "big", 200)
		for _, l := range []string{"s1", "s2", "s3"} {
			addLaned(t, q, l, 3)
		}
		addLaned(t, q, "", 3)
		s := stats(t, q)
		require.Equal(t, 212, s.Pending, "pending counts the lanes' jobs")
		require.Equal(t, 209, s.LaneWaiting)
		require.Equal(t, 4, s.Lanes)

		seen := map[string]int{}
		var order []string
		for len(order) < 15 {
			jobs, err := q.Claim(t.Context(), time.Minute, 5)
			require.NoError(t, err)
			require.NotEmpty(t, jobs)
			for _, j := range jobs {
				order = append(order, laneOf(j))
				seen[laneOf(j)]++
			}
		}
		// 5 participants, 3 passes: the small lanes and the jobs without a
		// lane are drained while big got only 3 turns
		require.Equal(t, map[string]int{"big": 3, "s1": 3, "s2": 3, "s3": 3, "": 3}, seen, "turn order %q", order)
		for pass := range 3 {
			got := map[string]bool{}
			for _, l := range order[5*pass : 5*pass+5] {
				got[l] = true
			}
			require.Len(t, got, 5, "pass %d gives each participant one turn: %q", pass, order)
		}
		info, err := q.Lane("big").Info(t.Context())
		require.NoError(t, err)
		require.Equal(t, trafikey.LaneInfo{Name: "big", Waiting: 197, Active: 3}, info)
		jobs, err := q.Claim(t.Context(), time.Minute, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 10, "then big alone")
	})
}

// A capped lane never has more jobs active than its cap, across workers,
// and is taken again as its jobs finish.
func TestLaneCapWithWorkers(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q := b.q
		require.NoError(t, q.Lane("capped").SetCap(t.Context(), 2))
		addLaned(t, q, "capped", 20)
		addLaned(t, q, "free", 20)
		var mu sync.Mutex
		active, peak := map[string]int{}, map[string]int{}
		var done atomic.Int64
		handler := func(_ context.Context, j *trafikey.Job) error {
			l := laneOf(j)
			mu.Lock()
			active[l]++
			peak[l] = max(peak[l], active[l])
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			active[l]--
			mu.Unlock()
			done.Add(1)
			return nil
		}
		for range 2 {
			w, err := trafikey.NewWorker(q, handler, trafikey.WorkerOptions{Concurrency: 8})
			require.NoError(t, err)
			runWorker(t, w)
		}
		require.Eventually(t, func() bool { return done.Load() == 40 }, 30*time.Second, 5*time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		require.LessOrEqual(t, peak["capped"], 2, "the cap holds across workers")
		require.Greater(t, peak["free"], 2, "the other lane is not capped")
		info, err := q.Lane("capped").Info(t.Context())
		require.NoError(t, err)
		require.Equal(t, trafikey.LaneInfo{Name: "capped", Cap: 2}, info, "no slot leaked")
	})
}

// A paused lane is passed over; the rest of the queue runs.
func TestPauseLane(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q := b.q
		require.NoError(t, q.Lane("a").Pause(t.Context()))
		addLaned(t, q, "a", 2)
		addLaned(t, q, "b", 2)
		jobs, err := q.Claim(t.Context(), time.Minute, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		for _, j := range jobs {
			require.Equal(t, "b", laneOf(j))
		}
		info, err := q.Lane("a").Info(t.Context())
		require.NoError(t, err)
		require.Equal(t, trafikey.LaneInfo{Name: "a", Waiting: 2, Paused: true}, info)
		require.NoError(t, q.Lane("a").Resume(t.Context()))
		jobs, err = q.Claim(t.Context(), time.Minute, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		require.Equal(t, "a", laneOf(jobs[0]))
	})
}

// Lanes pages through every lane with jobs, in name order.
func TestLanesListing(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q := b.q
		var jobs []trafikey.JobSpec
		for i := range 250 {
			jobs = append(jobs, trafikey.JobSpec{Payload: []byte("x"), Options: trafikey.JobOptions{Lane: "l" + strconv.Itoa(1000+i)}})
		}
		_, err := q.AddBatch(t.Context(), jobs)
		require.NoError(t, err)
		n := 0
		for l, err := range q.Lanes(t.Context()) {
			require.NoError(t, err)
			require.Equal(t, "l"+strconv.Itoa(1000+n), l.Name)
			require.Equal(t, 1, l.Waiting)
			n++
		}
		require.Equal(t, 250, n)
		id := addLaned(t, q, "\x00lane", 1)[0]
		info, err := q.Inspect(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, "\x00lane", info.Lane)
	})
}

// A claim over the rate limit is an ErrRateLimited with the server's wait,
// and a worker waits it out without claiming meanwhile.
func TestRateLimit(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q := b.q
		require.NoError(t, q.Admin().SetRate(t.Context(), 3, time.Minute))
		s := stats(t, q)
		require.Equal(t, 3, s.RateLimit)
		require.Equal(t, time.Minute, s.RateWindow)
		addLaned(t, q, "", 5)
		jobs, err := q.Claim(t.Context(), time.Minute, 5)
		require.NoError(t, err)
		require.Len(t, jobs, 3, "cut to the window's allowance")
		_, err = q.Claim(t.Context(), time.Minute, 5)
		require.ErrorIs(t, err, trafikey.ErrRateLimited)
		var rate *trafikey.Error
		require.True(t, errors.As(err, &rate))
		require.Greater(t, rate.RetryAfter, time.Duration(0))
		require.LessOrEqual(t, rate.RetryAfter, time.Minute)

		// the window slides: 2 claims, 2 more half a window later; once the
		// first 2 leave the window, only they are claimed again
		require.NoError(t, q.Admin().SetRate(t.Context(), 4, 2*time.Second))
		b.do(t, "DEL", "emq:{test}:rate")
		addLaned(t, q, "", 8)
		claim := func(n int) int {
			t.Helper()
			jobs, err := q.Claim(t.Context(), time.Minute, n)
			require.NoError(t, err)
			return len(jobs)
		}
		require.Equal(t, 2, claim(2))
		time.Sleep(time.Second)
		require.Equal(t, 2, claim(5), "the window's allowance left")
		_, err = q.Claim(t.Context(), time.Minute, 5)
		require.True(t, errors.As(err, &rate), "%v", err)
		require.LessOrEqual(t, rate.RetryAfter, time.Second, "until the first claims leave the window")
		time.Sleep(rate.RetryAfter + 10*time.Millisecond)
		require.Equal(t, 2, claim(5), "the claims of the last second still count")

		// a short window, and a worker: every job runs, with few refusals
		require.NoError(t, q.Admin().SetRate(t.Context(), 4, 50*time.Millisecond))
		b.do(t, "DEL", "emq:{test}:rate")
		addLaned(t, q, "", 10)
		var limited atomic.Int64
		q2 := b.open(t, "test", trafikey.QueueOptions{Observer: trafikey.Observer{
			ClaimRateLimited: func(string, time.Duration) { limited.Add(1) },
		}})
		var done atomic.Int64
		w, err := trafikey.NewWorker(q2, func(context.Context, *trafikey.Job) error {
			done.Add(1)
			return nil
		}, trafikey.WorkerOptions{Concurrency: 20})
		require.NoError(t, err)
		runWorker(t, w)
		require.Eventually(t, func() bool { return done.Load() == 12 }, 30*time.Second, 5*time.Millisecond)
		// 12 jobs at 4 a window: the worker is refused about once per
		// window it waits for, never in a loop
		require.GreaterOrEqual(t, limited.Load(), int64(1))
		require.Less(t, limited.Load(), int64(12))
		require.NoError(t, q.Admin().SetRate(t.Context(), 0, 0))
		require.Zero(t, stats(t, q).RateLimit)
	})
}

// A dead worker's claims of a capped lane free their slots when RECOVER
// takes their expired leases back: the lane is taken again.
func TestLaneSlotsFreedByRecovery(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q := b.q
		require.NoError(t, q.Lane("c").SetCap(t.Context(), 2))
		addLaned(t, q, "c", 5)
		jobs, err := q.Claim(t.Context(), time.Minute, 5)
		require.NoError(t, err)
		require.Len(t, jobs, 2, "the cap")
		jobs, err = q.Claim(t.Context(), time.Minute, 5)
		require.NoError(t, err)
		require.Empty(t, jobs, "the lane is full")
		// the worker holding them dies: its leases expire
		expireLeases(t, b, q)
		mt, err := q.Admin().Maintain(t.Context(), 10)
		requeued, dead := mt.Recovered, mt.Expired
		require.NoError(t, err)
		require.Equal(t, [2]int{2, 0}, [2]int{requeued, dead})
		info, err := q.Lane("c").Info(t.Context())
		require.NoError(t, err)
		require.Equal(t, trafikey.LaneInfo{Name: "c", Waiting: 5, Cap: 2}, info)
		jobs, err = q.Claim(t.Context(), time.Minute, 5)
		require.NoError(t, err)
		require.Len(t, jobs, 2, "the freed slots are taken again")
		for _, j := range jobs {
			require.NoError(t, j.Complete(t.Context()))
		}
		valkeytest.RequireConsistentQueue(t, b.server, q.Name())
	})
}

// TestJobLane: a claimed job knows the lane it was claimed from; one
// without a lane has none, and neither has a plain claim's job.
func TestJobLane(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		_, err := b.q.AddBatch(ctx, []trafikey.JobSpec{{Payload: []byte("a"), Options: trafikey.JobOptions{Lane: "tenant/7"}}, {Payload: []byte("b")}})
		require.NoError(t, err)
		jobs, err := b.q.Claim(ctx, time.Minute, 2)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		lanes := map[string]string{}
		for _, j := range jobs {
			lanes[string(j.Payload)] = j.Lane
		}
		require.Equal(t, map[string]string{"a": "tenant/7", "b": ""}, lanes)

		plain := b.open(t, "plain", trafikey.QueueOptions{PlainClaims: true})
		_, err = plain.Add(ctx, []byte("c"), &trafikey.JobOptions{Lane: "x"})
		require.NoError(t, err)
		j := claimOne(t, plain, time.Minute)
		require.Empty(t, j.Lane, "a plain claim carries no job field")
	})
}
