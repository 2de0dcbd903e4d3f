package trafikeyprom_test

import (
	"context"
	"errors"
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
	q, err := trafikey.Open(ctx, srv.Client(), "mail", trafikey.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	other, err := trafikey.Open(ctx, srv.Client(), "other", trafikey.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(trafikeyprom.NewQueueCollector(q, other))

	if _, err := q.AddBatch(ctx, []trafikey.NewJob{
		{Payload: []byte("ok")},
		{Payload: []byte("fail"), Options: []trafikey.AddOption{trafikey.MaxAttempts(1)}},
		{Payload: []byte("retry"), Options: []trafikey.AddOption{trafikey.MaxAttempts(2), trafikey.Backoff(trafikey.BackoffFixed, time.Hour)}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Add(ctx, []byte("later"), trafikey.Delay(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := other.Pause(ctx); err != nil {
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
trafikey_jobs_added_total{queue="mail"} 3
trafikey_jobs_added_total{queue="other"} 1
# HELP trafikey_jobs_claimed_total Jobs claimed by this process.
# TYPE trafikey_jobs_claimed_total counter
trafikey_jobs_claimed_total{queue="mail"} 3
# HELP trafikey_jobs_completed_total Jobs completed by this process's workers.
# TYPE trafikey_jobs_completed_total counter
trafikey_jobs_completed_total{queue="mail"} 1
# HELP trafikey_jobs_dead_total Jobs dead-lettered by this process's workers.
# TYPE trafikey_jobs_dead_total counter
trafikey_jobs_dead_total{queue="mail"} 1
# HELP trafikey_jobs_failed_total Failed attempts reported by this process's workers.
# TYPE trafikey_jobs_failed_total counter
trafikey_jobs_failed_total{queue="mail"} 2
# HELP trafikey_jobs_retried_total Failed attempts scheduled to run again.
# TYPE trafikey_jobs_retried_total counter
trafikey_jobs_retried_total{queue="mail"} 1
# HELP trafikey_jobs_running Handlers running now in this process's workers.
# TYPE trafikey_jobs_running gauge
trafikey_jobs_running{queue="mail"} 0
# HELP trafikey_queue_jobs Jobs in the queue by state, as the server counts them.
# TYPE trafikey_queue_jobs gauge
trafikey_queue_jobs{queue="mail",state="active"} 0
trafikey_queue_jobs{queue="mail",state="dead"} 1
trafikey_queue_jobs{queue="mail",state="delayed"} 1
trafikey_queue_jobs{queue="mail",state="pending"} 0
trafikey_queue_jobs{queue="other",state="active"} 0
trafikey_queue_jobs{queue="other",state="dead"} 0
trafikey_queue_jobs{queue="other",state="delayed"} 1
trafikey_queue_jobs{queue="other",state="pending"} 0
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
# HELP trafikey_queue_scrape_errors_total STATS calls of a scrape that failed.
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
	if n, err := testutil.GatherAndCount(reg, "trafikey_job_duration_seconds"); err != nil || n != 1 {
		t.Fatalf("duration histogram series: %d, %v", n, err)
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
# HELP trafikey_queue_scrape_errors_total STATS calls of a scrape that failed.
# TYPE trafikey_queue_scrape_errors_total counter
trafikey_queue_scrape_errors_total 4
`), "trafikey_queue_scrape_errors_total"); err != nil {
		t.Fatal(err)
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
