package trafikey

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// ErrUnknownKind is the failure of a job whose kind no handler of a Mux is
// registered for. It is not retried: the job is dead-lettered at once, with
// an error text naming the kind, since running it again cannot find a
// handler that was not there.
var ErrUnknownKind = errors.New("trafikey: no handler for the job's kind")

// unknownKindError is an ErrUnknownKind naming the kind, and one that is
// not retried (ErrSkipRetry).
type unknownKindError struct {
	kind string
}

func (e *unknownKindError) Error() string {
	return fmt.Sprintf("trafikey: no handler for kind %q", e.kind)
}

func (e *unknownKindError) Unwrap() []error { return []error{ErrUnknownKind, ErrSkipRetry} }

// Mux routes jobs to handlers by their kind (Kind at Add, Job.Kind). Its
// Dispatch method is itself a Handler, so a Worker runs a Mux as it runs
// any handler:
//
//	mux := trafikey.NewMux()
//	mux.Handle("email", sendEmail)
//	w, err := trafikey.NewWorker(q, mux.Dispatch, opts)
//
// A job of a kind without a handler fails with an ErrUnknownKind and is
// dead-lettered without retries. Routes can be added while a worker runs.
type Mux struct {
	mu       sync.RWMutex
	handlers map[string]Handler
	fallback Handler
}

// NewMux returns a Mux without routes.
func NewMux() *Mux { return &Mux{handlers: map[string]Handler{}} }

// Handle routes the jobs of kind to h. The kind "" is the jobs added
// without one. Registering a kind twice, or a nil handler, panics: it is a
// programming error, found at start-up.
func (m *Mux) Handle(kind string, h Handler) {
	if h == nil {
		panic(fmt.Sprintf("trafikey: Mux.Handle of kind %q with a nil handler", kind))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.handlers[kind]; dup {
		panic(fmt.Sprintf("trafikey: Mux.Handle: kind %q registered twice", kind))
	}
	m.handlers[kind] = h
}

// Fallback runs h for the jobs of kinds without a route, in place of
// dead-lettering them.
func (m *Mux) Fallback(h Handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fallback = h
}

// Dispatch runs the handler of job's kind, or the fallback: the Mux as a
// Handler.
func (m *Mux) Dispatch(ctx context.Context, job *Job) error {
	m.mu.RLock()
	h, ok := m.handlers[job.Kind]
	if !ok {
		h = m.fallback
	}
	m.mu.RUnlock()
	if h == nil {
		return &unknownKindError{kind: job.Kind}
	}
	return h(ctx, job)
}

// JobType ties a job kind to the Go type of its payload, carried as JSON:
// its Add encodes a T and adds it with the kind, its Handle registers a
// handler that receives the T decoded. Declare it once and use it on both
// sides, so producer and worker agree on kind and type:
//
//	var SendEmail = trafikey.NewJobType[Email]("email")
//	id, err := SendEmail.Add(ctx, q, Email{To: "a@example.com"})
//	SendEmail.Handle(mux, func(ctx context.Context, job *trafikey.Job, e Email) error { ... })
//
// A kind whose handler returns a result registers it with HandleResult, and
// a producer that waits for it reads it typed with AddAndWaitResult.
type JobType[T any] struct {
	kind string
}

// NewJobType returns the JobType of kind (1..128 bytes) for payloads of
// type T.
func NewJobType[T any](kind string) JobType[T] { return JobType[T]{kind: kind} }

// Kind returns the job kind.
func (t JobType[T]) Kind() string { return t.kind }

// Add adds a job of t's kind whose payload is v's JSON encoding, with the
// options given (nil: the defaults; their Kind is overridden). A v that
// does not encode is ErrInvalid, before any I/O.
func (t JobType[T]) Add(ctx context.Context, q *Queue, v T, opts *JobOptions) (string, error) {
	j, err := t.Job(v, opts)
	if err != nil {
		return "", err
	}
	return q.Add(ctx, j.Payload, &j.Options)
}

// Job returns a JobSpec of t's kind with v's JSON encoding as its payload,
// for AddBatch and AddFlow; opts may be nil, and their Kind is overridden.
func (t JobType[T]) Job(v T, opts *JobOptions) (JobSpec, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return JobSpec{}, invalid("add", "payload of kind %q does not encode as JSON: %v", t.kind, err)
	}
	j := JobSpec{Payload: payload}
	if opts != nil {
		j.Options = *opts
	}
	j.Options.Kind = t.kind
	return j, nil
}

// Handle registers h on m for t's kind. The payload is decoded into a T
// first; a payload that does not decode fails the job without retries
// (decoding it again gives the same error).
func (t JobType[T]) Handle(m *Mux, h func(ctx context.Context, job *Job, v T) error) {
	m.Handle(t.kind, func(ctx context.Context, job *Job) error {
		v, err := t.decode(job)
		if err != nil {
			return err
		}
		return h(ctx, job, v)
	})
}

// decode decodes job's payload into a T; one that does not decode fails the
// job without retries (decoding it again gives the same error).
func (t JobType[T]) decode(job *Job) (T, error) {
	var v T
	if err := json.Unmarshal(job.Payload, &v); err != nil {
		return v, SkipRetry(fmt.Errorf("trafikey: payload of kind %q does not decode: %w", t.kind, err))
	}
	return v, nil
}

// HandleResult registers h on m for t's kind, as JobType.Handle does, for a
// handler that returns a result: a nil error completes the job with the
// result's JSON encoding (Job.SetResult), which a waiter (AddAndWaitResult,
// AddAndWait), the job's parent in a flow or a retained row reads. A result
// that does not encode fails the attempt.
func HandleResult[T, R any](m *Mux, t JobType[T], h func(ctx context.Context, job *Job, v T) (R, error)) {
	m.Handle(t.kind, func(ctx context.Context, job *Job) error {
		v, err := t.decode(job)
		if err != nil {
			return err
		}
		r, err := h(ctx, job, v)
		if err != nil {
			return err
		}
		result, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("trafikey: result of kind %q does not encode as JSON: %w", t.kind, err)
		}
		job.SetResult(result)
		return nil
	})
}

// AddAndWaitResult adds a job of t's kind with v as AddAndWait does, waits
// for it, and decodes its result into an R: the result of a HandleResult
// handler. A result that does not decode is an error after the job
// completed.
func AddAndWaitResult[R, T any](ctx context.Context, q *Queue, t JobType[T], v T, opts *JobOptions) (R, error) {
	var r R
	j, err := t.Job(v, opts)
	if err != nil {
		return r, err
	}
	result, err := q.AddAndWait(ctx, j.Payload, &j.Options)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return r, fmt.Errorf("trafikey: result of kind %q does not decode: %w", t.kind, err)
	}
	return r, nil
}
