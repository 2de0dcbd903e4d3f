package trafikey

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
)

// Handler runs one job. Returning nil completes the job; returning an error
// fails the attempt with the error's text, and the job is retried after its
// backoff while attempts remain (wrap the error with SkipRetry to
// dead-letter it at once). A panic is recovered and fails the attempt like
// an error, with its stack in the text.
//
// ctx is cancelled when the job's lease is lost (context.Cause is
// ErrLeaseLost): another worker may run the job now, so the handler should
// stop; when Queue.Cancel ended the job (context.Cause is ErrCancelled);
// when the job's timeout passes (ErrTimeout); and when the worker's
// shutdown timeout passes.
type Handler func(ctx context.Context, job *Job) error

// ErrSkipRetry marks a handler error that must not be retried: the job is
// dead-lettered whatever its attempts. SkipRetry wraps an error with it.
var ErrSkipRetry = errors.New("trafikey: skip retry")

// ErrShutdownTimeout is returned by Worker.Run when handlers were still
// running when the shutdown timeout passed. Their jobs were not failed: the
// server gives them to another worker when their leases expire.
var ErrShutdownTimeout = errors.New("trafikey: shutdown timeout passed with handlers running")

// SkipRetry wraps err so that the worker dead-letters the job instead of
// retrying it. The job's stored error text is err's text.
func SkipRetry(err error) error { return &skipRetryError{err: err} }

// skipRetryError reads as the error it wraps and matches ErrSkipRetry, so
// the job's stored text is the handler's own.
type skipRetryError struct{ err error }

func (e *skipRetryError) Error() string {
	if e.err == nil {
		return ErrSkipRetry.Error()
	}
	return e.err.Error()
}

func (e *skipRetryError) Unwrap() error        { return e.err }
func (e *skipRetryError) Is(target error) bool { return target == ErrSkipRetry }

// PanicError is the failure of a handler that panicked.
type PanicError struct {
	// Value is what the handler passed to panic.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack []byte
}

// Error returns the panic value and the stack, the text stored as the job's
// error.
func (e *PanicError) Error() string {
	return fmt.Sprintf("panic: %v\n\n%s", e.Value, e.Stack)
}

// invoke runs h, turning a panic into a *PanicError.
func invoke(ctx context.Context, h Handler, job *Job) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return h(ctx, job)
}
