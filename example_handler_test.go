package trafikey_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/trafikeytest"
)

// Welcome is the payload of the JobType example.
type Welcome struct {
	User string `json:"user"`
}

// Route jobs by kind: a JobType ties kind "welcome" to its payload type, a
// plain handler takes kind "cleanup".
func ExampleMux() {
	q, done := exampleQueue("app", nil)
	defer done()
	ctx := context.Background()

	welcome := trafikey.NewJobType[Welcome]("welcome")
	mux := trafikey.NewMux()
	welcome.Handle(mux, func(_ context.Context, job *trafikey.Job, w Welcome) error {
		fmt.Println(job.Kind, "for", w.User)
		return nil
	})
	mux.Handle("cleanup", func(_ context.Context, job *trafikey.Job) error {
		fmt.Println(job.Kind, string(job.Payload))
		return nil
	})

	// In a program: welcome.Add(ctx, q, Welcome{User: "ada"}) and a Worker
	// running mux.Dispatch. Here each job runs once, as a Worker would run it.
	job, err := welcome.Job(Welcome{User: "ada"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := trafikeytest.Work(ctx, q, mux.Dispatch, job.Payload, &job.Options); err != nil {
		log.Fatal(err)
	}
	res, err := trafikeytest.Work(ctx, q, mux.Dispatch, []byte("tmp/"), &trafikey.JobOptions{Kind: "cleanup"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Outcome)
	res, err = trafikeytest.Work(ctx, q, mux.Dispatch, []byte("?"), &trafikey.JobOptions{Kind: "fax"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Outcome, res.Err)
	// Output:
	// welcome for ada
	// cleanup tmp/
	// completed
	// dead trafikey: no handler for kind "fax"
}

// Run a job at an absolute time, move it, and cancel another.
func ExampleAdmin_Reschedule() {
	q, done := exampleQueue("reports", nil)
	defer done()
	ctx := context.Background()

	id, err := q.Add(ctx, []byte("monthly"), &trafikey.JobOptions{Delay: time.Until(time.Now().Add(24 * time.Hour))})
	if err != nil {
		log.Fatal(err)
	}
	state, err := q.Admin().Reschedule(ctx, id, time.Hour)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(state)
	state, err = q.Admin().Reschedule(ctx, id, 0) // run it now
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(state)

	if err := q.Cancel(ctx, id); err != nil {
		log.Fatal(err)
	}
	info, err := q.Inspect(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.State, info.LastError, info.Cancelled)
	// Output:
	// delayed
	// pending
	// dead cancelled true
}

// Resize and Thumb are the payload and result of the HandleResult example.
type (
	Resize struct {
		Width int `json:"width"`
	}
	Thumb struct {
		URL string `json:"url"`
	}
)

// A handler that returns a typed result, and a producer that waits for it.
func ExampleHandleResult() {
	q, done := exampleQueue("images", nil)
	defer done()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	resize := trafikey.NewJobType[Resize]("resize")
	mux := trafikey.NewMux()
	trafikey.HandleResult(mux, resize, func(_ context.Context, _ *trafikey.Job, r Resize) (Thumb, error) {
		return Thumb{URL: fmt.Sprintf("/thumbs/%d.png", r.Width)}, nil
	})
	w, err := trafikey.NewWorker(q, mux.Dispatch, trafikey.WorkerOptions{})
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = w.Run(ctx) }()

	thumb, err := trafikey.AddAndWaitResult[Thumb](ctx, q, resize, Resize{Width: 128}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(thumb.URL)
	// Output: /thumbs/128.png
}

// See the worker processes running on a queue, as each registers itself.
func ExampleAdmin_Workers() {
	q, done := exampleQueue("emails", nil)
	defer done()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	w, err := trafikey.NewWorker(q, func(context.Context, *trafikey.Job) error { return nil },
		trafikey.WorkerOptions{Concurrency: 20})
	if err != nil {
		log.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	for {
		workers, err := q.Admin().Workers(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if len(workers) > 0 {
			fmt.Println(len(workers), "worker on", workers[0].Queues, "running up to", workers[0].Concurrency, "jobs")
			break
		}
		time.Sleep(10 * time.Millisecond) // it registers as Run starts
	}
	stop()
	if err := <-ran; err != nil {
		log.Fatal(err)
	}
	workers, err := q.Admin().Workers(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(workers), "once it stopped")
	// Output:
	// 1 worker on [emails] running up to 20 jobs
	// 0 once it stopped
}

// Delete a queue and everything it holds.
func ExampleAdmin_DeleteQueue() {
	q, done := exampleQueue("scratch", nil)
	defer done()
	ctx := context.Background()

	if _, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{Delay: time.Hour}); err != nil {
		log.Fatal(err)
	}
	if _, err := q.Admin().DeleteQueue(ctx); err != nil {
		log.Fatal(err)
	}
	_, err := q.Add(ctx, []byte("y"), nil)
	fmt.Println(errors.Is(err, trafikey.ErrWire)) // the handle's verbs are refused: Open the name again for a new queue
	// Output: true
}

// Run the upkeep workers run on their timers, from a loop of your own.
func ExampleAdmin_Maintain() {
	q, done := exampleQueue("reports", nil)
	defer done()
	ctx := context.Background()

	if _, err := q.Add(ctx, []byte("monthly"), &trafikey.JobOptions{Delay: time.Millisecond}); err != nil {
		log.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // its delay passes
	m, err := q.Admin().Maintain(ctx, 1000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("promoted", m.Promoted)
	// Output: promoted 1
}
