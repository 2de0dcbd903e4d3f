package emq_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"trafikey/emq"
)

// Add a job with options.
func ExampleQueue_Add() {
	ctx := context.Background()
	var q *emq.Queue // from emq.Open

	id, err := q.Add(ctx, []byte(`{"to":"ada@example.com"}`),
		emq.Priority(10),
		emq.Delay(5*time.Minute),
		emq.MaxAttempts(5),
		emq.Backoff(emq.BackoffExponential, 2*time.Second),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("added job", id)
}

// A unique key refuses a second job while the first holds it.
func ExampleUnique() {
	ctx := context.Background()
	var q *emq.Queue // from emq.Open

	_, err := q.Add(ctx, []byte("charge order 7"), emq.Unique("charge:order-7", time.Hour))
	var dup *emq.DuplicateError
	if errors.As(err, &dup) {
		fmt.Println("already queued as job", dup.ID)
	}
}

// Add many jobs in few calls. Each call of up to MaxBatch jobs is all or
// none.
func ExampleQueue_AddBatch() {
	ctx := context.Background()
	var q *emq.Queue // from emq.Open

	jobs := make([]emq.NewJob, 0, 5000)
	for i := range 5000 {
		jobs = append(jobs, emq.NewJob{Payload: fmt.Appendf(nil, "thumbnail %d", i)})
	}
	ids, err := q.AddBatch(ctx, jobs)
	if err != nil {
		log.Fatalf("added %d of %d: %v", len(ids), len(jobs), err)
	}
}
