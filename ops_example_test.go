package trafikey_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/trafikey/trafikey"
)

// List the dead jobs, the latest death first, a page at a time.
func ExampleQueue_Jobs() {
	ctx := context.Background()
	q, done := exampleQueue("emails", nil) // trafikey.Open on a throwaway server
	defer done()
	for _, to := range []string{"ada", "bob", "cy"} {
		if _, err := q.Add(ctx, []byte(to), &trafikey.JobOptions{MaxAttempts: 1}); err != nil {
			log.Fatal(err)
		}
		jobs, err := q.Claim(ctx, time.Minute, 1)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := jobs[0].Fail(ctx, errors.New("mailbox full: "+to), false); err != nil {
			log.Fatal(err)
		}
	}

	opts := trafikey.JobsOptions{Newest: true, Limit: 2}
	for {
		page, err := q.Jobs(ctx, trafikey.StateDead, opts)
		if err != nil {
			log.Fatal(err)
		}
		for _, r := range page.Rows {
			fmt.Printf("job %s (%d of %d): %s\n", r.ID, r.Attempts, r.MaxAttempts, r.LastError)
		}
		if page.Next == "" {
			break
		}
		opts.After = page.Next
	}
	// Output:
	// job 3 (1 of 1): mailbox full: cy
	// job 2 (1 of 1): mailbox full: bob
	// job 1 (1 of 1): mailbox full: ada
}

// Requeue the dead jobs whose error says the upstream failed, with a
// progress report after each call to the server.
func ExampleAdmin_RequeueDead() {
	ctx := context.Background()
	q, done := exampleQueue("payments", nil)
	defer done()
	for i, cause := range []string{"upstream 502", "card declined", "upstream timeout"} {
		if _, err := q.Add(ctx, []byte{byte(i)}, &trafikey.JobOptions{MaxAttempts: 1}); err != nil {
			log.Fatal(err)
		}
		jobs, err := q.Claim(ctx, time.Minute, 1)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := jobs[0].Fail(ctx, errors.New(cause), false); err != nil {
			log.Fatal(err)
		}
	}

	n, err := q.Admin().RequeueDead(ctx, trafikey.DeadFilter{ErrorContains: "upstream"}, func(p trafikey.BulkProgress) {
		fmt.Printf("requeued %d, examined %d of %d\n", p.Done, p.Examined, p.Total)
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("requeued", n)
	// Output:
	// requeued 2, examined 3 of 3
	// requeued 2
}

// Run every delayed job now, and one of them by its id.
func ExampleAdmin_PromoteAll() {
	ctx := context.Background()
	q, done := exampleQueue("reports", nil)
	defer done()
	for range 3 {
		if _, err := q.Add(ctx, []byte("nightly"), &trafikey.JobOptions{Delay: 12 * time.Hour}); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := q.Admin().Reschedule(ctx, "1", 0); err != nil {
		log.Fatal(err)
	}
	n, err := q.Admin().PromoteAll(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	s, err := q.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("promoted", n, "pending", s.Pending, "delayed", s.Delayed)
	// Output: promoted 2 pending 3 delayed 0
}
