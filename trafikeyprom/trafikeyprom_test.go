package trafikeyprom_test

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/trafikeyprom"
	"github.com/trafikey/trafikey/trafikeytest"
)

func TestObserverAndQueueCollector(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := trafikeytest.NewServer(t)
	reg := prometheus.NewPedanticRegistry()
	obs, err := trafikeyprom.NewObserver(reg)
	if err != nil {
		t.Fatal(err)
	}
	q, err := trafikey.Open(ctx, srv.Client(), "mail", &trafikey.QueueOptions{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	other, err := trafikey.Open(ctx, srv.Client(), "other", &trafikey.QueueOptions{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(trafikeyprom.NewQueueCollector(q, other))

	if _, err := q.AddBatch(ctx, []trafikey.JobSpec{
		{Payload: []byte("ok"), Options: trafikey.JobOptions{Kind: "email.send"}},
		{Payload: []byte("fail"), Options: trafikey.JobOptions{MaxAttempts: 1}},
		{Payload: []byte("retry"), Options: trafikey.JobOptions{MaxAttempts: 2, Backoff: trafikey.BackoffFixed, BackoffBase: time.Hour}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Add(ctx, []byte("later"), &trafikey.JobOptions{Delay: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := other.Admin().Pause(ctx); err != nil {
		t.Fatal(err)
	}

	runCtx, stop := context.WithCancel(ctx)
	var done atomic.Int64
	w, err := trafikey.NewWorker(q, func(_ context.Context, j *trafikey.Job) error {
		if string(j.Payload) != "ok" {
			return errors.New("no")
		}
		return nil
	}, trafikey.WorkerOptions{OnDone: func(*trafikey.Job, trafikey.Outcome, error) {
		if done.Add(1) == 3 {
			stop()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(runCtx); err != nil {
		t.Fatal(err)
	}

	want := `
# HELP trafikey_jobs_added_total Jobs added through this process.
# TYPE trafikey_jobs_added_total counter
trafikey_jobs_added_total{kind="email.send",queue="mail"} 1
trafikey_jobs_added_total{kind="none",queue="mail"} 2
trafikey_jobs_added_total{kind="none",queue="other"} 1
# HELP trafikey_jobs_claimed_total Jobs claimed by this process.
# TYPE trafikey_jobs_claimed_total counter
trafikey_jobs_claimed_total{kind="email.send",queue="mail"} 1
trafikey_jobs_claimed_total{kind="none",queue="mail"} 2
# HELP trafikey_jobs_completed_total Jobs completed by this process's workers.
# TYPE trafikey_jobs_completed_total counter
trafikey_jobs_completed_total{kind="email.send",queue="mail"} 1
# HELP trafikey_jobs_dead_total Jobs dead-lettered by this process's workers.
# TYPE trafikey_jobs_dead_total counter
trafikey_jobs_dead_total{kind="none",queue="mail"} 1
# HELP trafikey_jobs_failed_total Failed attempts reported by this process's workers.
# TYPE trafikey_jobs_failed_total counter
trafikey_jobs_failed_total{kind="none",queue="mail"} 2
# HELP trafikey_jobs_retried_total Failed attempts scheduled to run again.
# TYPE trafikey_jobs_retried_total counter
trafikey_jobs_retried_total{kind="none",queue="mail"} 1
# HELP trafikey_jobs_running Handlers running now in this process's workers.
# TYPE trafikey_jobs_running gauge
trafikey_jobs_running{kind="email.send",queue="mail"} 0
trafikey_jobs_running{kind="none",queue="mail"} 0
# HELP trafikey_queue_jobs Jobs in the queue by state, as the server counts them.
# TYPE trafikey_queue_jobs gauge
trafikey_queue_jobs{queue="mail",state="active"} 0
trafikey_queue_jobs{queue="mail",state="completed"} 0
trafikey_queue_jobs{queue="mail",state="dead"} 1
trafikey_queue_jobs{queue="mail",state="delayed"} 1
trafikey_queue_jobs{queue="mail",state="pending"} 0
trafikey_queue_jobs{queue="mail",state="waiting"} 0
trafikey_queue_jobs{queue="other",state="active"} 0
trafikey_queue_jobs{queue="other",state="completed"} 0
trafikey_queue_jobs{queue="other",state="dead"} 0
trafikey_queue_jobs{queue="other",state="delayed"} 1
trafikey_queue_jobs{queue="other",state="pending"} 0
trafikey_queue_jobs{queue="other",state="waiting"} 0
# HELP trafikey_queue_paused 1 when the queue is paused.
# TYPE trafikey_queue_paused gauge
trafikey_queue_paused{queue="mail"} 0
trafikey_queue_paused{queue="other"} 1
# HELP trafikey_queue_added_total Jobs ever added to the queue, by any client.
# TYPE trafikey_queue_added_total counter
trafikey_queue_added_total{queue="mail"} 3
trafikey_queue_added_total{queue="other"} 1
# HELP trafikey_queue_completed_total Jobs ever completed in the queue, by any worker.
# TYPE trafikey_queue_completed_total counter
trafikey_queue_completed_total{queue="mail"} 1
trafikey_queue_completed_total{queue="other"} 0
# HELP trafikey_queue_scrape_errors_total Reads of a scrape that failed: listing the queues, or a queue's STATS or LANES.
# TYPE trafikey_queue_scrape_errors_total counter
trafikey_queue_scrape_errors_total 0
`
	names := []string{
		"trafikey_jobs_added_total", "trafikey_jobs_claimed_total", "trafikey_jobs_completed_total",
		"trafikey_jobs_dead_total", "trafikey_jobs_failed_total", "trafikey_jobs_retried_total",
		"trafikey_jobs_running", "trafikey_queue_jobs", "trafikey_queue_paused",
		"trafikey_queue_added_total", "trafikey_queue_completed_total", "trafikey_queue_scrape_errors_total",
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg, "trafikey_job_duration_seconds"); err != nil || n != 2 {
		t.Fatalf("duration histogram series: %d, %v", n, err)
	}
	// each job's first claim, all three added to run at once
	waits := map[string]uint64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "trafikey_job_wait_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" {
					waits[l.GetValue()] += m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	if want := map[string]uint64{"email.send": 1, "none": 2}; !maps.Equal(waits, want) {
		t.Fatalf("wait histogram's counts by kind %v, want %v", waits, want)
	}

	// A scrape while the server is down leaves the queues out and counts
	// the failures.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg, "trafikey_queue_jobs"); err != nil || n != 0 {
		t.Fatalf("queue series with the server down: %d, %v", n, err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP trafikey_queue_scrape_errors_total Reads of a scrape that failed: listing the queues, or a queue's STATS or LANES.
# TYPE trafikey_queue_scrape_errors_total counter
trafikey_queue_scrape_errors_total 4
`), "trafikey_queue_scrape_errors_total"); err != nil {
		t.Fatal(err)
	}
}

func TestQueueSourceCollector(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := trafikeytest.NewServer(t)
	q, err := trafikey.Open(ctx, srv.Client(), "media", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, lane := range []string{"tenant-a", "tenant-a", "tenant-b", "tenant-c"} {
		if _, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{Lane: lane}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Add(ctx, []byte("plain"), &trafikey.JobOptions{MaxAttempts: 1}); err != nil {
		t.Fatal(err)
	}
	if err := q.Lane("tenant-a").SetCap(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := q.Lane("tenant-b").Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Admin().SetRate(ctx, 100, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	listed := []*trafikey.Queue{}
	listErr := error(nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(trafikeyprom.NewQueueSourceCollector(func(context.Context) ([]*trafikey.Queue, error) {
		return listed, listErr
	}, trafikeyprom.CollectorOptions{MaxLanes: 2}))

	// No queue listed yet: no queue series.
	if n, err := testutil.GatherAndCount(reg, "trafikey_queue_jobs"); err != nil || n != 0 {
		t.Fatalf("series before any queue is listed: %d, %v", n, err)
	}
	listed = []*trafikey.Queue{q}
	want := `
# HELP trafikey_lane_cap Most jobs of a lane active at once; 0 for no cap.
# TYPE trafikey_lane_cap gauge
trafikey_lane_cap{lane="tenant-a",queue="media"} 3
trafikey_lane_cap{lane="tenant-b",queue="media"} 0
# HELP trafikey_lane_jobs Jobs of a lane by state: waiting (pending in the lane) or active.
# TYPE trafikey_lane_jobs gauge
trafikey_lane_jobs{lane="tenant-a",queue="media",state="active"} 0
trafikey_lane_jobs{lane="tenant-a",queue="media",state="waiting"} 2
trafikey_lane_jobs{lane="tenant-b",queue="media",state="active"} 0
trafikey_lane_jobs{lane="tenant-b",queue="media",state="waiting"} 1
# HELP trafikey_lane_paused 1 when the lane is paused.
# TYPE trafikey_lane_paused gauge
trafikey_lane_paused{lane="tenant-a",queue="media"} 0
trafikey_lane_paused{lane="tenant-b",queue="media"} 1
# HELP trafikey_queue_added_total Jobs ever added to the queue, by any client.
# TYPE trafikey_queue_added_total counter
trafikey_queue_added_total{queue="media"} 5
# HELP trafikey_queue_jobs Jobs in the queue by state, as the server counts them.
# TYPE trafikey_queue_jobs gauge
trafikey_queue_jobs{queue="media",state="active"} 0
trafikey_queue_jobs{queue="media",state="completed"} 0
trafikey_queue_jobs{queue="media",state="dead"} 0
trafikey_queue_jobs{queue="media",state="delayed"} 0
trafikey_queue_jobs{queue="media",state="pending"} 5
trafikey_queue_jobs{queue="media",state="waiting"} 0
# HELP trafikey_queue_lane_waiting_jobs Pending jobs of the queue that wait in a lane (part of the pending state).
# TYPE trafikey_queue_lane_waiting_jobs gauge
trafikey_queue_lane_waiting_jobs{queue="media"} 4
# HELP trafikey_queue_lanes Lanes of the queue with waiting or active jobs.
# TYPE trafikey_queue_lanes gauge
trafikey_queue_lanes{queue="media"} 3
# HELP trafikey_queue_rate_limit Most jobs claimed per rate window; 0 when the queue has no rate limit.
# TYPE trafikey_queue_rate_limit gauge
trafikey_queue_rate_limit{queue="media"} 100
# HELP trafikey_queue_rate_window_seconds The queue's rate window; 0 when it has no rate limit.
# TYPE trafikey_queue_rate_window_seconds gauge
trafikey_queue_rate_window_seconds{queue="media"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"trafikey_lane_cap", "trafikey_lane_jobs", "trafikey_lane_paused", "trafikey_queue_added_total",
		"trafikey_queue_jobs", "trafikey_queue_lane_waiting_jobs", "trafikey_queue_lanes",
		"trafikey_queue_rate_limit", "trafikey_queue_rate_window_seconds"); err != nil {
		t.Fatal(err)
	}

	// The latency: the next job of the queue (without a lane) and of each
	// lane has waited since it was added; none waiting reads 0. No worker
	// runs yet.
	time.Sleep(20 * time.Millisecond) // the jobs' age grows past a millisecond
	for name, lanes := range map[string]int{"trafikey_queue_latency_seconds": 1, "trafikey_lane_latency_seconds": 2} {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.GetMetric() {
				seen++
				if v := m.GetGauge().GetValue(); v < 0.001 || v > 60 {
					t.Errorf("%s %v = %v, want the jobs' age", name, m.GetLabel(), v)
				}
			}
		}
		if seen != lanes {
			t.Errorf("%s: %d series, want %d", name, seen, lanes)
		}
	}
	if v := testutil.ToFloat64(gaugeOf(t, reg, "trafikey_queue_workers")); v != 0 {
		t.Fatalf("workers %v before any runs", v)
	}

	// Run the plain job to its death: the counters follow.
	jobs, err := q.Claim(ctx, time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if string(j.Payload) == "plain" {
			if _, err := j.Fail(ctx, errors.New("no"), true); err != nil {
				t.Fatal(err)
			}
		} else if err := j.Complete(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]float64{
		"trafikey_queue_completed_total": float64(len(jobs) - 1),
		"trafikey_queue_failed_total":    1,
		"trafikey_queue_dead_total":      1,
		"trafikey_queue_retried_total":   0,
		"trafikey_queue_recovered_total": 0,
		"trafikey_queue_removed_total":   0,
		"trafikey_queue_requeued_total":  0,
		"trafikey_queue_cancelled_total": 0,
	} {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := -1.0
		for _, mf := range mfs {
			if mf.GetName() == name {
				got = mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}

	// A worker running a job: the registry's gauges count it.
	if _, err := q.Add(ctx, []byte("slow"), nil); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	w, err := trafikey.NewWorker(q, func(context.Context, *trafikey.Job) error { <-release; return nil }, trafikey.WorkerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stopWorker := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(wctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(gaugeOf(t, reg, "trafikey_queue_worker_jobs_running")) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the worker's job is not counted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v := testutil.ToFloat64(gaugeOf(t, reg, "trafikey_queue_workers")); v != 1 {
		t.Fatalf("workers %v, want 1", v)
	}
	close(release)
	stopWorker()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}

	// A source that fails reports no queue and counts the failure.
	listErr = errors.New("server gone")
	listed = nil
	if n, err := testutil.GatherAndCount(reg, "trafikey_queue_jobs"); err != nil || n != 0 {
		t.Fatalf("series with a failing source: %d, %v", n, err)
	}
	if v := testutil.ToFloat64(counterOf(t, reg, "trafikey_queue_scrape_errors_total")); v < 1 {
		t.Fatalf("scrape errors %v, want at least 1", v)
	}
}

// gaugeOf gathers reg and returns the single gauge value of name as a
// collector testutil.ToFloat64 reads.
func gaugeOf(t *testing.T, reg *prometheus.Registry, name string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "copy"})
			g.Set(mf.GetMetric()[0].GetGauge().GetValue())
			return g
		}
	}
	t.Fatalf("no series %s", name)
	return nil
}

// counterOf gathers reg and returns the single counter value of name as a
// collector testutil.ToFloat64 reads.
func counterOf(t *testing.T, reg *prometheus.Registry, name string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: "copy"})
			c.Add(mf.GetMetric()[0].GetCounter().GetValue())
			return c
		}
	}
	t.Fatalf("no series %s", name)
	return nil
}

// TestObserverKinds: the kind label takes the first 100 kinds an observer
// sees, then "other", and shows bytes that are not UTF-8 as U+FFFD.
func TestObserverKinds(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	obs, err := trafikeyprom.NewObserver(reg)
	if err != nil {
		t.Fatal(err)
	}
	obs.JobsAdded("q", "", 2)
	obs.JobsAdded("q", "bad\xff", 1)
	for i := range 99 {
		obs.JobsAdded("q", "k"+strconv.Itoa(i), 1)
	}
	obs.JobsAdded("q", "late", 3) // the 101st kind
	obs.JobsAdded("q", "later", 4)
	obs.JobsAdded("q", "k0", 1) // seen before the cap: its own still
	if n, err := testutil.GatherAndCount(reg, "trafikey_jobs_added_total"); err != nil || n != 102 {
		t.Fatalf("added series: %d, %v; want none, 100 kinds and other", n, err)
	}
	got, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	for _, f := range got {
		for _, m := range f.GetMetric() {
			counts[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	for kind, want := range map[string]float64{"none": 2, "bad\uFFFD": 1, "k0": 2, "k98": 1, "other": 7} {
		if counts[kind] != want {
			t.Errorf("kind %q: %v, want %v", kind, counts[kind], want)
		}
	}
	if _, ok := counts["late"]; ok {
		t.Error("the 101st kind has a series of its own")
	}
}

func TestNewObserverTwiceOnOneRegistry(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	if _, err := trafikeyprom.NewObserver(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := trafikeyprom.NewObserver(reg); err == nil {
		t.Fatal("a second observer on one registry must be refused: share the first")
	}
}
