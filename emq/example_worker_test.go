package emq_test

import (
	"context"
	"errors"
	"log"
	"os"
	"os/signal"
	"time"

	"trafikey/emq"
)

func send(ctx context.Context, payload []byte) error { return nil }

// Run a worker until the process is interrupted, then shut down gracefully:
// running jobs get up to ShutdownTimeout to finish.
func ExampleWorker_Run() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var q *emq.Queue // from emq.Open

	w, err := emq.NewWorker(q, func(ctx context.Context, job *emq.Job) error {
		if len(job.Payload) == 0 {
			// Retrying will not help: dead-letter it now.
			return emq.SkipRetry(errors.New("empty payload"))
		}
		return send(ctx, job.Payload)
	}, emq.WorkerOptions{
		Concurrency:     50,
		Lease:           time.Minute,
		ShutdownTimeout: 30 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		log.Print(err)
	}
	s := w.Stats()
	log.Printf("completed %d, failed %d", s.Processed, s.Failed)
}

// Bring your own loop: claim a batch, run it, report each outcome.
func ExampleQueue_Claim() {
	ctx := context.Background()
	var q *emq.Queue // from emq.Open

	jobs, err := q.Claim(ctx, 30*time.Second, 100)
	if err != nil {
		log.Fatal(err)
	}
	for _, job := range jobs {
		if err := send(ctx, job.Payload); err != nil {
			if _, err := job.Fail(ctx, err, true); err != nil {
				log.Print(err)
			}
			continue
		}
		if err := job.Complete(ctx); err != nil {
			log.Print(err) // e.g. ErrStale: the lease was lost meanwhile
		}
	}
}
