// Package verdict holds the pure verdicts of the native job-core verbs: for
// each verb a function over what has been read so far that returns either the
// verdict or the next reads it needs, in the order docs/PROTOCOL.md lists
// them. Nothing here talks to the server; every order of checks is
// unit-tested with scripted replies.
//
// A Need may name several reads; the handler runs them in one host batch
// (reads only), and the verdict still interprets the replies strictly in the
// documented order: a refusal read later in a batch (a WRONGTYPE, say) never
// wins over an earlier one. A reply the verdict reads is copied into a slot of
// the verb's Seen by the handler, so the slots stay valid across batches.
package verdict

// Reads is a set of reads a verdict asks for, one bit per read; each verb
// names its own. Zero means the verdict needs nothing more.
type Reads uint32

// Str is the outcome of one read answering a string or a null (GET, HGET,
// ZSCORE, one field of an HMGET).
type Str struct {
	// Err is the read's error reply (WRONGTYPE …, NOPERM …), returned
	// unchanged when the verdict reaches this read.
	Err error
	// Found is false for a null.
	Found bool
	// V is the string, when found.
	V []byte
}

// Got is a string read found with value v.
func Got(v string) Str { return Str{Found: true, V: []byte(v)} }

// Nil is a read that answered a null.
var Nil = Str{}

// Failed is a read that answered the error err.
func Failed(err error) Str { return Str{Err: err} }
