// Package trafikeyotel traces trafikey jobs with OpenTelemetry: the trace
// context of the code that adds a job travels with the job (in its
// trafikey.Headers, as W3C traceparent and tracestate) to the worker that
// runs it, whose handler then runs in a span that continues the trace. It
// is a module of its own, so a program that uses trafikey without
// OpenTelemetry links none of it.
//
// On the producer side, Tracing.Add adds a job inside a producer span, or
// Tracing.Inject carries the caller's current span to a job added by any
// other means (AddBatch, AddFlow, a schedule). On the worker side,
// Tracing.Middleware runs each handler in a consumer span, child of the
// span the job was added in, with the job's queue, id, kind and attempt as
// attributes, and the handler's error as the span's status.
package trafikeyotel

import (
	"context"
	"maps"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/trafikey/trafikey"
)

// ScopeName is the instrumentation scope of the spans, the tracer's name.
const ScopeName = "github.com/trafikey/trafikey/trafikeyotel"

// Attribute keys of the spans, beside OpenTelemetry's messaging ones
// (messaging.system, messaging.destination.name, messaging.message.id,
// messaging.operation.type).
const (
	AttrKind    = attribute.Key("trafikey.job.kind")
	AttrAttempt = attribute.Key("trafikey.job.attempt")
)

// Option configures New.
type Option func(*Tracing)

// WithTracerProvider sets the provider of the tracer (default: the global
// one, otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(t *Tracing) { t.provider = tp }
}

// WithPropagator sets how trace context is written to and read from a job's
// headers (default: W3C trace context and baggage, whatever the global
// propagator is, so jobs carry it even where none was set).
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(t *Tracing) { t.propagator = p }
}

// Tracing traces the jobs of producers and workers. It is safe for
// concurrent use.
type Tracing struct {
	provider   trace.TracerProvider
	propagator propagation.TextMapPropagator
	tracer     trace.Tracer
}

// New returns a Tracing with the options given.
func New(opts ...Option) *Tracing {
	t := &Tracing{
		provider:   otel.GetTracerProvider(),
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
	for _, o := range opts {
		o(t)
	}
	t.tracer = t.provider.Tracer(ScopeName)
	return t
}

// Inject adds ctx's trace context (its span and baggage) to the headers of
// opts, for a job added with them: the trace headers win over headers of
// the same names, and opts.Headers is a new map, so a map shared between
// jobs is not written. Without a span in ctx it adds nothing.
func (t *Tracing) Inject(ctx context.Context, opts *trafikey.JobOptions) {
	carrier := propagation.MapCarrier{}
	t.propagator.Inject(ctx, carrier)
	if len(carrier) == 0 {
		return
	}
	h := make(map[string]string, len(opts.Headers)+len(carrier))
	maps.Copy(h, opts.Headers)
	maps.Copy(h, carrier)
	opts.Headers = h
}

// Add adds a job to q inside a producer span named "send <queue>", whose
// context the job carries to its handler. The span records the job's id,
// or the error of the Add.
func (t *Tracing) Add(ctx context.Context, q *trafikey.Queue, payload []byte, opts *trafikey.JobOptions) (string, error) {
	ctx, span := t.tracer.Start(ctx, "send "+q.Name(), trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(
			attribute.String("messaging.system", "trafikey"),
			attribute.String("messaging.operation.type", "send"),
			attribute.String("messaging.destination.name", q.Name()),
		))
	defer span.End()
	var o trafikey.JobOptions
	if opts != nil {
		o = *opts
	}
	t.Inject(ctx, &o)
	id, err := q.Add(ctx, payload, &o)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return "", err
	}
	span.SetAttributes(attribute.String("messaging.message.id", id))
	return id, nil
}

// Middleware runs each handler in a consumer span named "process <queue>",
// child of the span the job's headers carry (none: a new trace), with the
// job's queue, id, kind and attempt. A handler error is recorded on the
// span and sets its status to Error. The handler's context holds the span,
// so the spans the handler starts are its children.
func (t *Tracing) Middleware() trafikey.Middleware {
	return func(next trafikey.Handler) trafikey.Handler {
		return func(ctx context.Context, job *trafikey.Job) error {
			ctx = t.propagator.Extract(ctx, propagation.MapCarrier(job.Headers))
			name := job.Queue().Name()
			attrs := []attribute.KeyValue{
				attribute.String("messaging.system", "trafikey"),
				attribute.String("messaging.operation.type", "process"),
				attribute.String("messaging.destination.name", name),
				attribute.String("messaging.message.id", job.ID),
				AttrAttempt.Int(job.Attempt),
			}
			if job.Kind != "" {
				attrs = append(attrs, AttrKind.String(job.Kind))
			}
			ctx, span := t.tracer.Start(ctx, "process "+name, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...))
			defer span.End()
			err := next(ctx, job)
			if err != nil {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			return err
		}
	}
}
