package host

import (
	"errors"
	"reflect"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Error is a reply text: a handler that returns one (or wraps one) answers the
// client with exactly this text as an error reply. The first word is the
// class (EMQSTALE, WRONGTYPE, ERR …); the server adds the leading '-'.
//
// Error is comparable, so errors.Is(err, host.ErrWritePaused) holds for any
// Error with the same text, and errors.As(err, new(host.Error)) recovers it.
type Error string

// Error returns the reply text.
func (e Error) Error() string { return string(e) }

// The host texts from the protocol registry, as errors.
var (
	// ErrWritePaused: the write guard found AvoidReplicaTraffic set
	// (CLIENT PAUSE WRITE, failover); nothing was written.
	ErrWritePaused error = Error(protocol.ErrWritePaused)
	// ErrHostReply: a host reply of a type the adapter does not accept (not
	// RESP2, or arrays nested deeper than four), a failed host call, or a
	// reply that contradicts what the handler predicted.
	ErrHostReply error = Error(protocol.ErrHostReply)
	// ErrInternal: a Go panic or a misuse of this package inside a handler.
	ErrInternal error = Error(protocol.ErrInternal)
	// ErrNoPerm: the caller's ACL denies a key (CheckKeys, or a host call
	// refused with EACCES).
	ErrNoPerm error = Error(protocol.ErrNoPerm)
	// ErrWrongType: the server's text for a key of another type, for
	// handlers that type keys before writing.
	ErrWrongType error = Error(protocol.ErrWrongType)
)

// replyText returns the text to answer for a handler's error: the first error
// in its chain whose type is a string kind (Error, or a registry type of
// another package such as grammar.Refusal), whose text is the wire text by
// convention. ok is false for any other error: a bug, answered as ErrInternal.
func replyText(err error) (text string, ok bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if he, isHost := e.(Error); isHost {
			return string(he), true
		}
		if v := reflect.ValueOf(e); v.Kind() == reflect.String {
			return v.String(), true
		}
	}
	return "", false
}
