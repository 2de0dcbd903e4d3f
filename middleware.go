package trafikey

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"time"
)

// Middleware wraps a Handler: it runs code before and after the handler,
// or instead of it. WorkerOptions.Middleware applies a chain, the first
// outermost.
type Middleware func(next Handler) Handler

// chain wraps h in mw, mw[0] outermost.
// recovered turns a panic of h into a *PanicError, so that every
// middleware sees a handler's panic as its failure.
func recovered(h Handler) Handler {
	return func(ctx context.Context, job *Job) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = &PanicError{Value: v, Stack: debug.Stack()}
			}
		}()
		return h(ctx, job)
	}
}

func chain(h Handler, mw []Middleware) Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// LogJobs is a Middleware that logs each job's end to logger: its id,
// attempt, run time, and its error at level Warn when it failed, else at
// Info.
func LogJobs(logger *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, job *Job) error {
			began := time.Now()
			err := next(ctx, job)
			args := []any{"queue", job.Queue().Name(), "job", job.ID, "attempt", job.Attempt, "took", time.Since(began)}
			if err != nil {
				logger.WarnContext(ctx, "trafikey: job failed", append(args, "err", err)...)
			} else {
				logger.InfoContext(ctx, "trafikey: job done", args...)
			}
			return err
		}
	}
}

// ErrTimeout is the failure of an attempt whose handler ran past
// WorkerOptions.Timeout. The attempt is retried like any failed one.
var ErrTimeout = errors.New("trafikey: job timed out")
