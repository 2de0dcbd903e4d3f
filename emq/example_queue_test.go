package emq_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/valkey-io/valkey-go"

	"trafikey/emq"
)

// Open a queue on a Valkey server. The executor is the native module when
// the server has it loaded, else the Lua scripts.
func ExampleOpen() {
	ctx := context.Background()
	client, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	q, err := emq.Open(ctx, client, "emails")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("queue", q.Name(), "runs on the", q.Executor(), "executor")
}

// Force the Lua executor, e.g. to compare it with the module.
func ExampleWithExecutor() {
	ctx := context.Background()
	client, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	q, err := emq.Open(ctx, client, "emails", emq.WithExecutor(emq.NewLua(client)))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(q.Executor()) // lua
}

// Read a queue's counts and lifetime counters.
func ExampleQueue_Stats() {
	ctx := context.Background()
	var q *emq.Queue // from emq.Open

	s, err := q.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("pending %d, active %d, dead %d, completed %d\n", s.Pending, s.Active, s.Dead, s.TotalCompleted)
}

// A job's Complete after its lease was lost and the job claimed again is
// refused: the error wraps ErrStale and keeps the server's text.
func ExampleServerError() {
	ctx := context.Background()
	var job *emq.Job // from q.Claim

	err := job.Complete(ctx)
	var se *emq.ServerError
	switch {
	case errors.Is(err, emq.ErrStale):
		fmt.Println("another worker holds the job now")
	case errors.As(err, &se):
		fmt.Println("refused:", se.Text)
	}
}
