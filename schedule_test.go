package trafikey_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

func TestScheduleValidatesBeforeIO(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		ok := trafikey.Schedule{ID: "s", Cron: "* * * * * *"}
		for name, s := range map[string]trafikey.Schedule{
			"no id":             {Cron: "* * * * * *"},
			"id with a space":   {ID: "a b", Cron: "* * * * * *"},
			"neither":           {ID: "s"},
			"both":              {ID: "s", Cron: "* * * * * *", Every: time.Second},
			"bad cron":          {ID: "s", Cron: "* * *"},
			"seven fields":      {ID: "s", Cron: "* * * * * * *"},
			"@every":            {ID: "s", Cron: "@every 1s"},
			"unknown zone":      {ID: "s", Cron: "* * * * * *", TimeZone: "Mars/Olympus"},
			"zone of every":     {ID: "s", Every: time.Second, TimeZone: "UTC"},
			"negative every":    {ID: "s", Every: -time.Second},
			"jitter over 24h":   {ID: "s", Every: time.Second, Jitter: 25 * time.Hour},
			"end before start":  {ID: "s", Every: time.Second, Start: time.UnixMilli(2000), End: time.UnixMilli(1000)},
			"negative limit":    {ID: "s", Every: time.Second, Limit: -1},
			"catch-up 1001":     {ID: "s", Every: time.Second, CatchUp: 1001},
			"grace over 24h":    {ID: "s", Every: time.Second, Grace: 25 * time.Hour},
			"a delay":           {ID: "s", Every: time.Second, Options: trafikey.JobOptions{Delay: time.Second}},
			"a bad priority":    {ID: "s", Every: time.Second, Options: trafikey.JobOptions{Priority: 1001}},
			"a ttl without key": {ID: "s", Every: time.Second, Options: trafikey.JobOptions{UniqueTTL: time.Hour}},
		} {
			_, err := b.q.Schedules().Set(ctx, s)
			require.ErrorIs(t, err, trafikey.ErrInvalid, name)
		}
		for _, err := range []error{
			b.q.Schedules().Pause(ctx, ""), b.q.Schedules().Resume(ctx, "{x}"), b.q.Schedules().Remove(ctx, "a b"),
		} {
			require.ErrorIs(t, err, trafikey.ErrInvalid)
		}
		_, err := b.q.Schedules().Get(ctx, "")
		require.ErrorIs(t, err, trafikey.ErrInvalid)
		require.Equal(t, int64(0), b.do(t, "EXISTS", "emq:{test}:schedules", "emq:{test}:scheddue", "emq:{test}:schedids"),
			"nothing was written")
		_, err = b.q.Schedules().Set(ctx, ok)
		require.NoError(t, err)
	})
}

func TestScheduleLifecycle(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		start := time.UnixMilli(time.Now().Add(time.Hour).UnixMilli())
		rev, err := b.q.Schedules().Set(ctx, trafikey.Schedule{
			ID: "report", Cron: "0 30 2 * * *", TimeZone: "Europe/Paris", Jitter: time.Minute, Start: start,
			Limit: 10, Grace: time.Hour, CatchUp: 3, Payload: []byte("daily"),
			Options: trafikey.JobOptions{Priority: 5, MaxAttempts: 2, Lane: "tenant", UniqueKey: "report", UniqueTTL: time.Hour, KeepOutcome: time.Minute},
		})
		require.NoError(t, err)
		require.Equal(t, 1, rev)
		_, err = b.q.Schedules().Set(ctx, trafikey.Schedule{ID: "beat", Every: 90 * time.Second})
		require.NoError(t, err)

		s, err := b.q.Schedules().Get(ctx, "report")
		require.NoError(t, err)
		require.Equal(t, "0 30 2 * * *", s.Cron)
		require.Equal(t, "Europe/Paris", s.TimeZone)
		require.Equal(t, time.Minute, s.Jitter)
		require.True(t, s.Start.Equal(start))
		require.Equal(t, 10, s.Limit)
		require.Equal(t, [2]any{time.Hour, 3}, [2]any{s.Grace, s.CatchUp})
		require.Equal(t, []byte("daily"), s.Payload)
		require.Equal(t, trafikey.JobOptions{Priority: 5, MaxAttempts: 2, Backoff: trafikey.BackoffExponential, BackoffBase: time.Second,
			UniqueKey: "report", UniqueTTL: time.Hour, Lane: "tenant", KeepOutcome: time.Minute}, s.Options, "the stored options read back")
		require.Equal(t, 1, s.Revision)
		require.False(t, s.Paused)
		require.False(t, s.Next.IsZero(), "due at once: the next step computes its occurrences")

		// listed in byte order
		var ids []string
		for s, err := range b.q.Schedules().List(ctx) {
			require.NoError(t, err)
			ids = append(ids, s.ID)
		}
		require.Equal(t, []string{"beat", "report"}, ids)

		// an update of the schedule read back keeps its job
		s.Schedule.Limit = 20
		rev, err = b.q.Schedules().Set(ctx, s.Schedule)
		require.NoError(t, err)
		require.Equal(t, 2, rev)
		s2, err := b.q.Schedules().Get(ctx, "report")
		require.NoError(t, err)
		require.Equal(t, 20, s2.Limit)
		require.Equal(t, s.Options, s2.Options)
		require.Equal(t, s.Payload, s2.Payload)
		// an edit of the options changes the job
		s2.Options.Priority = 9
		_, err = b.q.Schedules().Set(ctx, s2.Schedule)
		require.NoError(t, err)
		s2, err = b.q.Schedules().Get(ctx, "report")
		require.NoError(t, err)
		require.Equal(t, 9, s2.Options.Priority)
		require.Equal(t, 3, s2.Revision)

		require.NoError(t, b.q.Schedules().Pause(ctx, "report"))
		require.NoError(t, b.q.Schedules().Pause(ctx, "report"))
		s2, err = b.q.Schedules().Get(ctx, "report")
		require.NoError(t, err)
		require.True(t, s2.Paused)
		require.True(t, s2.Next.IsZero())
		require.Equal(t, 4, s2.Revision)
		require.NoError(t, b.q.Schedules().Resume(ctx, "report"))
		s2, err = b.q.Schedules().Get(ctx, "report")
		require.NoError(t, err)
		require.False(t, s2.Paused)
		require.Equal(t, 5, s2.Revision)

		require.NoError(t, b.q.Schedules().Remove(ctx, "report"))
		require.ErrorIs(t, b.q.Schedules().Remove(ctx, "report"), trafikey.ErrNotFound)
		_, err = b.q.Schedules().Get(ctx, "report")
		require.ErrorIs(t, err, trafikey.ErrNotFound)
	})
}

// occurrence is one job a schedule enqueued, as its row stores it.
type occurrence struct {
	id           string
	at, addedAt  int64 // ms, server clock
	schedule     string
	scheduledRaw time.Time
}

// occurrences reads every job of q (ids 1..added, retained when completed)
// that schedule id enqueued.
func occurrences(t *testing.T, q *trafikey.Queue, id string) []occurrence {
	t.Helper()
	st := stats(t, q)
	var out []occurrence
	for n := 1; n <= st.TotalAdded; n++ {
		info, err := q.Inspect(t.Context(), strconv.Itoa(n))
		require.NoError(t, err, "job %d: every job is kept", n)
		if info.Schedule != id {
			continue
		}
		out = append(out, occurrence{id: info.ID, at: info.ScheduledAt.UnixMilli(), addedAt: info.AddedAt.UnixMilli(),
			schedule: info.Schedule, scheduledRaw: info.ScheduledAt})
	}
	return out
}

// requireExactlyOnce requires each scheduled time at most once, on the grid
// of period ms from origin, and every time of the grid between the first and
// the last enqueued unless the missed-occurrence policy skipped it: the job
// that came next was added more than grace after it (the step that skipped
// it ran later still). It returns the times skipped.
func requireExactlyOnce(t *testing.T, occ []occurrence, origin, period, grace int64) int {
	t.Helper()
	byAt := map[int64]occurrence{}
	for _, o := range occ {
		prev, dup := byAt[o.at]
		require.False(t, dup, "occurrence %d enqueued twice: jobs %s and %s", o.at, prev.id, o.id)
		require.Zero(t, (o.at-origin)%period, "occurrence %d is off the grid", o.at)
		byAt[o.at] = o
	}
	times := make([]int64, 0, len(byAt))
	for at := range byAt {
		times = append(times, at)
	}
	slices.Sort(times)
	skipped := 0
	for i := 1; i < len(times); i++ {
		a, b := times[i-1], times[i]
		next := byAt[b]
		for s := a + period; s < b; s += period {
			skipped++
			require.Greater(t, next.addedAt-s, grace, "occurrence %d skipped while on time (next job added at %d)", s, next.addedAt)
		}
	}
	return skipped
}

// requireCaughtUp requires at most catchUp of the occurrences after last
// (the last one enqueued before every worker stopped) to be older than
// grace at restart, the server's time when the workers started again:
// those were missed by the first step after it, which enqueues the latest
// catchUp missed ones only.
func requireCaughtUp(t *testing.T, occ []occurrence, last, restart, grace int64, catchUp int) {
	t.Helper()
	late := 0
	for _, o := range occ {
		if o.at > last && o.at < restart-grace {
			late++
		}
	}
	require.LessOrEqual(t, late, catchUp, "missed occurrences enqueued after the downtime")
}

// serverTime is the server's clock in ms.
func serverTime(t *testing.T, b *testBundle) int64 {
	t.Helper()
	v := b.do(t, "TIME").([]any)
	sec, err := strconv.ParseInt(v[0].(string), 10, 64)
	require.NoError(t, err)
	usec, err := strconv.ParseInt(v[1].(string), 10, 64)
	require.NoError(t, err)
	return sec*1000 + usec/1000
}

// The schedule step's exactly-once, across workers and restarts, does not
// depend on the schedule's kind: a cron and an interval differ only in the
// next occurrence after a time (schedDef.after, tested with a set clock in
// schedule_internal_test.go), and the server's clock cannot be set. So the
// worker scenario runs on an interval of 50 ms, its times scaled from a
// cron's second, and the cron runs end to end on a few of its seconds.

func TestScheduleExactlyOnceAcrossWorkersAndRestarts(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		const period = 50 * time.Millisecond
		exactlyOnceAcrossWorkers(t, b, trafikey.Schedule{ID: "tick", Every: period}, period, 3*period, 32, true)
	})
}

func TestScheduleCronExactlyOnceAcrossWorkers(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		exactlyOnceAcrossWorkers(t, b, trafikey.Schedule{ID: "tick", Cron: "* * * * * *"}, time.Second, 1500*time.Millisecond, 3, false)
	})
}

// exactlyOnceAcrossWorkers runs sched (its occurrences every period, on
// the grid of period from 0 or from the first one) on three workers until
// n jobs are added, one of them restarting after n/4. With downtime, every
// worker then stops for longer than grace and the catch-up, and three run
// again until n jobs and 12 after the downtime are added: the downtime's
// older missed occurrences are skipped, its latest one (CatchUp 1) is
// enqueued. Every occurrence must be enqueued once, and each job run once.
func exactlyOnceAcrossWorkers(t *testing.T, b *testBundle, sched trafikey.Schedule, period, grace time.Duration, n int, downtime bool) {
	ctx := t.Context()
	const catchUp = 1
	// completed jobs are kept, so every occurrence's row can be audited
	require.NoError(t, b.q.Admin().SetRetention(ctx, trafikey.RetentionPolicy{KeepCompleted: time.Hour}))
	sched.Payload = []byte("t")
	sched.Grace, sched.CatchUp = grace, catchUp
	_, err := b.q.Schedules().Set(ctx, sched)
	require.NoError(t, err)

	var mu sync.Mutex
	runs := map[string]int{}
	handler := func(ctx context.Context, j *trafikey.Job) error {
		mu.Lock()
		runs[j.ID]++
		mu.Unlock()
		return nil
	}
	opts := trafikey.WorkerOptions{Concurrency: 2, ScheduleEvery: 20 * time.Millisecond, PromoteEvery: 20 * time.Millisecond}
	start := func() func() error { return runWorker(t, newWorker(t, b.q, handler, opts)) }
	added := func() int { return stats(t, b.q).TotalAdded }
	waitAdded := func(n int) {
		t.Helper()
		require.Eventually(t, func() bool { return added() >= n }, 60*time.Second, tick)
	}

	stops := []func() error{start(), start(), start()}
	waitAdded(max(n/4, 1))
	// a worker restarts
	require.NoError(t, stops[1]())
	stops[1] = start()
	var lastBefore []occurrence
	var restart int64
	if downtime {
		waitAdded(n / 2)
		// every worker down for longer than the grace and the catch-up:
		// the occurrences meanwhile are missed
		for _, stop := range stops {
			require.NoError(t, stop())
		}
		down := added()
		lastBefore = occurrences(t, b.q, sched.ID)
		time.Sleep(grace + 3*period)
		require.Equal(t, down, added(), "no worker, no step")
		restart = serverTime(t, b)
		stops = []func() error{start(), start(), start()}
		n = max(down+12, n)
	}
	waitAdded(n)
	for _, stop := range stops {
		require.NoError(t, stop())
	}

	occ := occurrences(t, b.q, sched.ID)
	require.GreaterOrEqual(t, len(occ), n)
	origin := int64(0)
	if sched.Every > 0 {
		origin = occ[0].at
	}
	skipped := requireExactlyOnce(t, occ, origin, period.Milliseconds(), grace.Milliseconds())
	if downtime {
		require.GreaterOrEqual(t, skipped, 1, "the downtime's older missed occurrences were skipped")
		requireCaughtUp(t, occ, lastBefore[len(lastBefore)-1].at, restart, grace.Milliseconds(), catchUp)
	}
	t.Logf("%d occurrences enqueued, %d skipped", len(occ), skipped)
	s, err := b.q.Schedules().Get(ctx, sched.ID)
	require.NoError(t, err)
	require.Equal(t, len(occ), s.Count, "the schedule counts the occurrences enqueued")
	require.Equal(t, occ[len(occ)-1].at, s.Last.UnixMilli())
	mu.Lock()
	defer mu.Unlock()
	for id, n := range runs {
		require.Equal(t, 1, n, "job %s ran %d times", id, n)
	}
}

func TestScheduleStepRacesEnqueueEachOccurrenceOnce(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		_, err := b.q.Schedules().Set(ctx, trafikey.Schedule{ID: "fast", Every: 5 * time.Millisecond,
			Jitter: 3 * time.Millisecond, Grace: time.Hour})
		require.NoError(t, err)
		// eight steps at once, again and again, as eight workers' timers
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				for stats(t, b.q).TotalAdded < 200 {
					if _, err := b.q.Admin().Maintain(ctx, 1000); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		occ := occurrences(t, b.q, "fast")
		require.GreaterOrEqual(t, len(occ), 200)
		require.Zero(t, requireExactlyOnce(t, occ, occ[0].at, 5, time.Hour.Milliseconds()), "nothing missed with a grace of an hour")
		s, err := b.q.Schedules().Get(ctx, "fast")
		require.NoError(t, err)
		require.Equal(t, len(occ), s.Count)
		first, last := occ[0].at, occ[len(occ)-1].at
		require.Equal(t, int64(len(occ)-1), (last-first)/5, "every 5 ms of the grid, none lost")
		// the jitter delays a job, never its scheduled time
		for _, o := range occ {
			require.Equal(t, "fast", o.schedule)
		}
	})
}

func TestScheduleUniqueTemplateDoesNotPileUp(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		_, err := b.q.Schedules().Set(ctx, trafikey.Schedule{ID: "u", Every: 2 * time.Millisecond,
			Grace:   time.Hour,
			Options: trafikey.JobOptions{UniqueKey: "one", UniqueTTL: time.Hour}})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			_, err := b.q.Admin().Maintain(ctx, 1000)
			require.NoError(t, err)
			s, err := b.q.Schedules().Get(ctx, "u")
			require.NoError(t, err)
			return s.Count >= 20
		}, eventually, tick)
		require.Equal(t, 1, stats(t, b.q).TotalAdded, "one job holds the key; the other occurrences are taken without one")
		_, err = b.q.AddBatch(ctx, []trafikey.JobSpec{{Options: trafikey.JobOptions{UniqueKey: "one", UniqueTTL: time.Hour}}})
		require.True(t, errors.Is(err, trafikey.ErrDuplicate))
	})
}

func TestScheduleSkipsMissedOccurrences(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		const every, grace = 50 * time.Millisecond, 100 * time.Millisecond
		require.NoError(t, b.q.Admin().SetRetention(ctx, trafikey.RetentionPolicy{KeepCompleted: time.Hour}))
		_, err := b.q.Schedules().Set(ctx, trafikey.Schedule{ID: "skip", Every: every, Grace: grace})
		require.NoError(t, err)
		step := func() {
			t.Helper()
			_, err := b.q.Admin().Maintain(ctx, 1000)
			require.NoError(t, err)
		}
		require.Eventually(t, func() bool { step(); return stats(t, b.q).TotalAdded >= 3 }, eventually, time.Millisecond)
		// no step for far longer than the grace: every occurrence meanwhile
		// is missed, and catch-up 0 skips them all
		lastBefore := occurrences(t, b.q, "skip")
		time.Sleep(20 * every)
		restart := serverTime(t, b)
		step()
		after := stats(t, b.q).TotalAdded
		require.Eventually(t, func() bool { step(); return stats(t, b.q).TotalAdded >= after+3 }, eventually, time.Millisecond)

		occ := occurrences(t, b.q, "skip")
		skipped := requireExactlyOnce(t, occ, occ[0].at, every.Milliseconds(), grace.Milliseconds())
		require.GreaterOrEqual(t, skipped, 10)
		requireCaughtUp(t, occ, lastBefore[len(lastBefore)-1].at, restart, grace.Milliseconds(), 0)
		s, err := b.q.Schedules().Get(ctx, "skip")
		require.NoError(t, err)
		require.Equal(t, len(occ), s.Count, "a skipped occurrence is not counted")
	})
}

// TestScheduleExactlyOnceThroughServerRestart restarts the server (SIGTERM,
// AOF on) while three workers run an interval schedule: the steps cut off
// by the outage are computed again from the state the server kept, so no
// occurrence is lost or enqueued twice, and those of the outage are caught
// up (they are within the grace).
func TestScheduleExactlyOnceThroughServerRestart(t *testing.T) {
	skipInShort(t, "a server restart under workers")
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			s, c, exec := e.start(t, valkeyserver.Options{AOF: true})
			ctx := t.Context()
			q, err := trafikey.Open(ctx, c, "restart", trafikey.WithRunner(exec, nil))
			require.NoError(t, err)
			require.NoError(t, q.Admin().SetRetention(ctx, trafikey.RetentionPolicy{KeepCompleted: time.Hour}))
			const every = 100 * time.Millisecond
			_, err = q.Schedules().Set(ctx, trafikey.Schedule{ID: "r", Every: every, Grace: time.Hour})
			require.NoError(t, err)
			opts := trafikey.WorkerOptions{Concurrency: 2, ScheduleEvery: 10 * time.Millisecond, PromoteEvery: 10 * time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			var stops []func() error
			for range 3 {
				stops = append(stops, runWorker(t, newWorker(t, q, func(context.Context, *trafikey.Job) error { return nil }, opts)))
			}
			added := func() int {
				st, err := q.Stats(ctx)
				if err != nil {
					return 0 // the server is restarting
				}
				return st.TotalAdded
			}
			require.Eventually(t, func() bool { return added() >= 10 }, time.Minute, tick)
			require.NoError(t, s.RestartAfter(ctx, time.Second))
			n := added()
			require.Eventually(t, func() bool { return added() >= n+20 }, time.Minute, tick)
			for _, stop := range stops {
				require.NoError(t, stop())
			}

			occ := occurrences(t, q, "r")
			require.Zero(t, requireExactlyOnce(t, occ, occ[0].at, every.Milliseconds(), time.Hour.Milliseconds()),
				"the outage's occurrences are caught up")
		})
	}
}

// TestScheduleJobsCarryKindTimeoutHeaders: a template's kind, timeout and
// headers are its jobs' own, so a Mux routes a schedule's jobs by kind; a
// template refuses a due time (the occurrence's time is the job's).
func TestScheduleJobsCarryKindTimeoutHeaders(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		for name, s := range map[string]trafikey.Schedule{
			"a delay": {ID: "s", Every: time.Second, Options: trafikey.JobOptions{Delay: time.Hour}},
		} {
			_, err := b.q.Schedules().Set(ctx, s)
			require.ErrorIs(t, err, trafikey.ErrInvalid, name)
		}
		_, err := b.q.Schedules().Set(ctx, trafikey.Schedule{ID: "digest", Every: 20 * time.Millisecond, Limit: 2,
			Grace: time.Hour, CatchUp: 2, Payload: []byte("d"),
			Options: trafikey.JobOptions{Kind: "digest", Timeout: 1500 * time.Millisecond, Headers: map[string]string{"traceparent": "00-1"}}})
		require.NoError(t, err)
		s, err := b.q.Schedules().Get(ctx, "digest")
		require.NoError(t, err)
		require.Equal(t, 1500*time.Millisecond, s.Options.Timeout)
		require.Equal(t, "digest", s.Options.Kind)
		require.Equal(t, map[string]string{"traceparent": "00-1"}, s.Options.Headers)

		type run struct {
			job  *trafikey.Job
			info *trafikey.JobInfo
			err  error
		}
		got := make(chan run, 2)
		mux := trafikey.NewMux()
		mux.Handle("digest", func(ctx context.Context, j *trafikey.Job) error {
			// the row while the job runs (it is not kept once completed)
			info, err := j.Queue().Inspect(ctx, j.ID)
			got <- run{j, info, err}
			return nil
		})
		runWorker(t, newWorker(t, b.q, mux.Dispatch, trafikey.WorkerOptions{ScheduleEvery: 10 * time.Millisecond}))
		for range 2 {
			select {
			case r := <-got:
				require.Equal(t, "digest", r.job.Kind)
				require.Equal(t, 1500*time.Millisecond, r.job.Timeout)
				require.Equal(t, map[string]string{"traceparent": "00-1"}, r.job.Headers)
				require.NoError(t, r.err)
				require.Equal(t, "digest", r.info.Schedule, "the job names its schedule")
				require.Equal(t, "digest", r.info.Kind)
			case <-time.After(eventually):
				t.Fatal("the schedule's jobs did not reach the kind's handler")
			}
		}
	})
}
