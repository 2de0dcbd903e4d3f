// Package verdict holds the native verbs' verdicts: pure functions over what
// a handler has read so far that return either the verdict or the next read
// they need, in the order docs/PROTOCOL.md gives for each verb. Nothing here
// talks to the server, so the order of every check is unit-tested with
// scripted replies.
//
// A read may be a group that the handler runs in one host batch (reads only,
// every command run whatever the others answer). The verdict still takes the
// group's replies one by one in the documented order, so a refusal of an
// earlier read wins over an error of a later one.
package verdict

import "github.com/trafikey/trafikey/module/internal/grammar"

// Reply is one host read as a verdict sees it: whether the handler made it,
// and its value or the server's error reply for it (WRONGTYPE …), which the
// verdict returns when it reaches that read.
type Reply[T any] struct {
	Made bool
	Val  T
	Err  error
}

// Got is a read that was made and answered v.
func Got[T any](v T) Reply[T] { return Reply[T]{Made: true, Val: v} }

// Failed is a read that was made and answered the error err.
func Failed[T any](err error) Reply[T] { return Reply[T]{Made: true, Err: err} }

// Field is a string reply that may be null: GET, HGET, or an element of
// HMGET's array.
type Field struct {
	Bytes []byte
	Set   bool
}

// Str is a field holding s.
func Str(s string) Field { return Field{Bytes: []byte(s), Set: true} }

// Is reports whether the field is set and holds exactly b.
func (f Field) Is(b string) bool { return f.Set && string(f.Bytes) == b }

// JobMember reports whether a member of pending, delayed or active names a
// job: a canonical id. Any other member is treated as a job whose row is
// absent, so no row is read for it (docs/PROTOCOL.md, "Members as read").
func JobMember(m []byte) bool { return grammar.ID(m) }

// Move is where a verb sends one member it takes out of a set.
type Move struct {
	To    Dest
	Score int64 // the pending score, or the time of death, for ZADD
	// Lane is the job's lane (nil: none): a job with one that becomes ready
	// goes ToLane, and counts in its lane's accounting whatever its move.
	Lane []byte
}

// Dest names a member's destination.
type Dest uint8

// The destinations of a member taken out of a set.
const (
	// Drop: the member only leaves its set (not an id, or its row is
	// absent).
	Drop Dest = iota
	// ToPending: the job goes to pending with Move.Score.
	ToPending
	// ToDead: the job goes to dead with Move.Score.
	ToDead
	// ToLane: the job goes to its lane's set, lane:<Move.Lane>, with
	// Move.Score (a pending score).
	ToLane
)

// moves returns n zeroed Moves in *buf's array, growing it when short.
func moves(buf *[]Move, n int) []Move {
	if cap(*buf) < n {
		*buf = make([]Move, n)
	}
	m := (*buf)[:n]
	clear(m)
	return m
}

// predict is PredictHincrby on an HGET or HMGET field.
func predict(f Field, by int64) (int64, error) {
	return grammar.PredictHincrby(f.Bytes, f.Set, by)
}

// at is field i of an HMGET's fields, or an absent field past their end.
func at(f []Field, i int) Field {
	if i < len(f) {
		return f[i]
	}
	return Field{}
}
