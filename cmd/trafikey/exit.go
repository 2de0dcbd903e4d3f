package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
)

// The exit codes scripts can rely on.
const (
	exitOK       = 0 // the command did what it was asked
	exitError    = 1 // anything else: no connection, a server error, a wire mismatch, an interrupt
	exitUsage    = 2 // a bad flag, argument, queue name or environment variable
	exitNotFound = 3 // the queue, or a job asked for, does not exist
	exitRefused  = 4 // a job is not in a state the action takes (requeue a job that is not dead, remove an active one)
)

// exitCodesHelp documents the exit codes in the root command's help.
const exitCodesHelp = `Exit codes:
  0  done
  1  error: no connection, a server error, a wire mismatch, an interrupt,
     a deletion not confirmed
  2  usage: a bad flag, argument, queue, lane or schedule name or
     environment variable; delete-queue without a terminal nor --yes
  3  not found: the queue, or a job or schedule asked for, does not exist
  4  refused: a job is not in a state the action takes (requeue of a job
     that is not dead, remove of an active job)
A command given several jobs, lanes, schedules or queues exits with the code
all its failures share, else 1.`

// usageError is a mistake in how the command was called.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// runError marks an error returned by a command's own run, so that every
// other error main sees is cobra's: a flag, argument or command that does
// not parse.
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// runE wraps a command's run so that its errors are told from cobra's.
func runE(fn func(cmd *cobra.Command, args []string) error) func(cmd *cobra.Command, args []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := fn(cmd, args); err != nil {
			return &runError{err: err}
		}
		return nil
	}
}

// exitCode is the process's exit code for the error a command returned.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var run *runError
	if !errors.As(err, &run) {
		return exitUsage
	}
	return codeOf(run.err)
}

// codeOf classifies a failure of the command's own work.
func codeOf(err error) int {
	var usage *usageError
	var several *severalError
	switch {
	case errors.As(err, &several):
		return several.code
	case errors.As(err, &usage), errors.Is(err, admin.ErrQueueName), errors.Is(err, trafikey.ErrInvalid):
		return exitUsage
	case errors.Is(err, admin.ErrNoQueue), errors.Is(err, trafikey.ErrNotFound):
		return exitNotFound
	case errors.Is(err, trafikey.ErrState):
		return exitRefused
	default:
		return exitError
	}
}

// severalError reports the failures of a command given several jobs or
// queues (each listed by the command as it goes); its code is the one they
// all share, else exitError. Given one, it is that one's error.
type severalError struct {
	failed, total int
	code          int
	first         error
}

func (e *severalError) Error() string {
	if e.total == 1 {
		return e.first.Error()
	}
	return fmt.Sprintf("%d of %d failed", e.failed, e.total)
}

func (e *severalError) Unwrap() error { return e.first }

// collectFailures summarises errs (nil for a success) as one error, or nil
// when none failed.
func collectFailures(errs []error) error {
	var out *severalError
	for _, err := range errs {
		if err == nil {
			continue
		}
		code := codeOf(err)
		if out == nil {
			out = &severalError{total: len(errs), code: code, first: err}
		} else if out.code != code {
			out.code = exitError
		}
		out.failed++
	}
	if out == nil {
		return nil
	}
	return out
}
