package trafikeyotel_test

import (
	"context"
	"fmt"
	"log"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/trafikeyotel"
	"github.com/trafikey/trafikey/trafikeytest"
)

// Trace a job from the request that adds it to the handler that runs it.
func Example() {
	ctx := context.Background()
	srv, err := trafikeytest.Start(ctx) // a throwaway server for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	q, err := trafikey.Open(ctx, srv.Client(), "emails", nil)
	if err != nil {
		log.Fatal(err)
	}

	spans := tracetest.NewSpanRecorder() // an exporter, in a real program
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tracing := trafikeyotel.New(trafikeyotel.WithTracerProvider(tp))

	ctx, request := tp.Tracer("app").Start(ctx, "signup")
	if _, err := tracing.Add(ctx, q, []byte("welcome"), nil); err != nil {
		log.Fatal(err)
	}
	request.End()

	// A worker elsewhere: its handler runs in a span of the same trace.
	runCtx, stop := context.WithCancel(context.Background())
	w, err := trafikey.NewWorker(q, func(ctx context.Context, j *trafikey.Job) error { return nil }, trafikey.WorkerOptions{
		Middleware: []trafikey.Middleware{tracing.Middleware()},
		OnDone: func(_ *trafikey.Job, o trafikey.Outcome, _ error) {
			fmt.Println(o)
			stop()
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(runCtx); err != nil {
		log.Fatal(err)
	}
	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.SpanContext().TraceID() == request.SpanContext().TraceID())
	}
	// Output:
	// completed
	// send emails true
	// signup true
	// process emails true
}
