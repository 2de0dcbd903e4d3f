package trafikey

import (
	"fmt"
	"strconv"

	"github.com/trafikey/trafikey/internal/protocol"
)

// invalidError is an argument the client refused before any I/O. Its text
// is the one prefix "trafikey: <op>: " and what was wrong; it matches
// ErrInvalid.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Unwrap() error { return ErrInvalid }

// invalid builds the error of an argument refused by op.
func invalid(op, format string, args ...any) error {
	return &invalidError{msg: "trafikey: " + op + ": " + fmt.Sprintf(format, args...)}
}

// echoMax bounds how much of a refused input an error repeats, so a huge
// or hostile argument does not end up whole in logs.
const echoMax = 64

// echo quotes s for an error message, cut to its first echoMax bytes.
func echo(s string) string {
	if len(s) <= echoMax {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:echoMax]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// checkQueueName refuses a name the key layout cannot carry.
func checkQueueName(op, name string) error {
	if !protocol.ValidQueueName(name) {
		return invalid(op, "queue name %s must be 1..%d bytes without '{' or '}'", echo(name), protocol.MaxQueueName)
	}
	return nil
}

// checkJobID refuses an id that no job can have, before it reaches the
// server.
func checkJobID(op, id string) error {
	if !protocol.ValidJobID(id) {
		return invalid(op, "job id %s is not a positive decimal of at most %d", echo(id), int64(protocol.MaxJobID))
	}
	return nil
}
