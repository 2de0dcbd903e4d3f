package trafikeyotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/trafikeyotel"
	"github.com/trafikey/trafikey/trafikeytest"
)

// recorded returns a Tracing on a provider whose ended spans the recorder
// keeps.
func recorded(t *testing.T) (*trafikeyotel.Tracing, *tracetest.SpanRecorder, trace.Tracer) {
	t.Helper()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return trafikeyotel.New(trafikeyotel.WithTracerProvider(tp)), sr, tp.Tracer("test")
}

// spanNamed is the one ended span of that name.
func spanNamed(t *testing.T, sr *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range sr.Ended() {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "spans named %s", name)
	return found[0]
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

// runOne runs a worker with the tracing middleware on q until one job is
// done, and returns its outcome.
func runOne(t *testing.T, q *trafikey.Queue, tr *trafikeyotel.Tracing, h trafikey.Handler) trafikey.Outcome {
	t.Helper()
	done := make(chan trafikey.Outcome, 1)
	w, err := trafikey.NewWorker(q, h, trafikey.WorkerOptions{
		Middleware: []trafikey.Middleware{tr.Middleware()},
		OnDone:     func(_ *trafikey.Job, o trafikey.Outcome, _ error) { done <- o },
	})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- w.Run(ctx) }()
	defer func() {
		stop()
		require.NoError(t, <-errc)
	}()
	select {
	case o := <-done:
		return o
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not run")
		return ""
	}
}

// TestTraceTravelsWithTheJob: the handler's span is a child of the producer
// span of Add, in the same trace, and the handler's own spans are children
// of it; the job's attributes are on the consumer span.
func TestTraceTravelsWithTheJob(t *testing.T) {
	t.Parallel()
	srv := trafikeytest.NewServer(t)
	q, err := trafikey.Open(t.Context(), srv.Client(), "mail", nil)
	require.NoError(t, err)
	tr, sr, tracer := recorded(t)

	ctx, request := tracer.Start(t.Context(), "request")
	id, err := tr.Add(ctx, q, []byte("hello"), &trafikey.JobOptions{Kind: "welcome"})
	require.NoError(t, err)
	request.End()

	outcome := runOne(t, q, tr, func(ctx context.Context, j *trafikey.Job) error {
		_, inner := tracer.Start(ctx, "render")
		inner.End()
		return nil
	})
	require.Equal(t, trafikey.OutcomeCompleted, outcome)

	req := spanNamed(t, sr, "request")
	send := spanNamed(t, sr, "send mail")
	process := spanNamed(t, sr, "process mail")
	render := spanNamed(t, sr, "render")
	require.Equal(t, req.SpanContext().SpanID(), send.Parent().SpanID())
	require.Equal(t, trace.SpanKindProducer, send.SpanKind())
	require.Equal(t, id, attrs(send)["messaging.message.id"].AsString())

	require.Equal(t, req.SpanContext().TraceID(), process.SpanContext().TraceID(), "one trace from request to handler")
	require.Equal(t, send.SpanContext().SpanID(), process.Parent().SpanID())
	require.True(t, process.Parent().IsRemote(), "the parent came with the job")
	require.Equal(t, trace.SpanKindConsumer, process.SpanKind())
	a := attrs(process)
	require.Equal(t, "trafikey", a["messaging.system"].AsString())
	require.Equal(t, "mail", a["messaging.destination.name"].AsString())
	require.Equal(t, id, a["messaging.message.id"].AsString())
	require.Equal(t, "welcome", a[trafikeyotel.AttrKind].AsString())
	require.Equal(t, int64(1), a[trafikeyotel.AttrAttempt].AsInt64())
	require.Equal(t, codes.Unset, process.Status().Code)
	require.Equal(t, process.SpanContext().SpanID(), render.Parent().SpanID())
}

// TestInjectAndFailure: Inject carries the caller's span to a job added by
// plain Add; a failing handler's span has the error.
func TestInjectAndFailure(t *testing.T) {
	t.Parallel()
	srv := trafikeytest.NewServer(t)
	q, err := trafikey.Open(t.Context(), srv.Client(), "jobs", nil)
	require.NoError(t, err)
	tr, sr, tracer := recorded(t)

	ctx, parent := tracer.Start(t.Context(), "batch")
	opts := trafikey.JobOptions{MaxAttempts: 1}
	tr.Inject(ctx, &opts)
	_, err = q.Add(ctx, []byte("x"), &opts)
	require.NoError(t, err)
	parent.End()

	outcome := runOne(t, q, tr, func(context.Context, *trafikey.Job) error { return errors.New("boom") })
	require.Equal(t, trafikey.OutcomeDead, outcome)
	batch := spanNamed(t, sr, "batch")
	process := spanNamed(t, sr, "process jobs")
	require.Equal(t, batch.SpanContext().SpanID(), process.Parent().SpanID())
	require.Equal(t, codes.Error, process.Status().Code)
	require.Equal(t, "boom", process.Status().Description)
	require.Len(t, process.Events(), 1, "the error is recorded")
}

// TestNoTraceContext: a job added without trace context runs in a span of a
// new trace.
func TestNoTraceContext(t *testing.T) {
	t.Parallel()
	srv := trafikeytest.NewServer(t)
	q, err := trafikey.Open(t.Context(), srv.Client(), "plain", nil)
	require.NoError(t, err)
	tr, sr, _ := recorded(t)
	_, err = q.Add(t.Context(), []byte("x"), nil)
	require.NoError(t, err)
	require.Equal(t, trafikey.OutcomeCompleted, runOne(t, q, tr, func(context.Context, *trafikey.Job) error { return nil }))
	process := spanNamed(t, sr, "process plain")
	require.False(t, process.Parent().IsValid())
	require.True(t, process.SpanContext().IsValid())
}
