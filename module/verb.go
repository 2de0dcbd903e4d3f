package main

import (
	"trafikey/module/internal/grammar"
	"trafikey/module/internal/host"
	"trafikey/module/internal/verdict"
	"trafikey/protocol"
)

// This file is the prelude every keyed verb starts with: the first zones of
// the command grammar (docs/PROTOCOL.md, "The order of every verb").
//
//	r, err := prelude(c, protocol.Extend, exactly(3)) // shape, layout
//	…                                                 // values, from r.args
//	if err := r.fence(); err != nil {…}               // the fence
//
// A verb that reads more right after the fence starts its first read batch
// with r.fenced() instead, so the fence and its first domain reads cross into
// the server once; it then checks the fence first with r.fenceOf(res), before
// it looks at any other reply of the batch.

// argCount is how a verb's ARGV is counted in the shape zone.
type argCount struct {
	n   int // exactly n entries, unless per > 0
	per int // ARGV[1] counts groups of per entries (ADD): grammar.CountedArity
}

// exactly is an ARGV of n entries.
func exactly(n int) argCount { return argCount{n: n} }

// counted is an ARGV of a count n, then n groups of per entries.
func counted(per int) argCount { return argCount{per: per} }

// verbCall is a keyed verb call that passed shape and layout. Its byte slices
// are views of the command's arguments, valid until the handler returns.
type verbCall struct {
	c    *host.Call
	verb *protocol.Verb
	// base is KEYS[1], the queue base emq:{q}:.
	base []byte
	// keys are the declared keys, keys[0] the base, in the verb's order
	// (protocol.Verb.Keys).
	keys [][]byte
	// args is ARGV.
	args [][]byte
	// n is the count of a counted ARGV (ADD's jobs), else 0.
	n int
	// now is the server's clock in ms, fixed for the whole command: every
	// deadline and due time of the call is computed from it once.
	now int64
}

// prelude runs shape (numkeys with EVAL's rules and the verb's exact count,
// then the ARGV count) and layout (every declared key rebuilt from the base).
// A refusal here has read nothing.
func prelude(c *host.Call, v *protocol.Verb, a argCount) (verbCall, error) {
	// shape: numkeys, then the ARGV count
	sh, err := grammar.Shape(v, c.Argv())
	if err != nil {
		return verbCall{}, err
	}
	n := 0
	if a.per > 0 {
		if n, err = grammar.CountedArity(v, sh.Args, a.per); err != nil {
			return verbCall{}, err
		}
	} else if err := grammar.Arity(v, sh, a.n); err != nil {
		return verbCall{}, err
	}
	// layout: KEYS[1] is a base, the others are the base and the verb's suffixes
	if err := grammar.Layout(v, sh); err != nil {
		return verbCall{}, err
	}
	return verbCall{c: c, verb: v, base: sh.Keys[0], keys: sh.Keys, args: sh.Args, n: n, now: c.NowMillis()}, nil
}

// version is the declared version key, KEYS[2] of every keyed verb.
func (r *verbCall) version() []byte { return r.keys[1] }

// key returns the declared key with suffix (a protocol.Suffix* constant).
// It panics (answered as ErrInternal) for a suffix the verb does not declare.
func (r *verbCall) key(suffix string) []byte {
	for i, s := range r.verb.Keys {
		if s == suffix {
			return r.keys[i+1]
		}
	}
	panic("verb " + r.verb.Name + " declares no key " + suffix)
}

// derived appends base + prefix + name to dst (a row, its logs, a unique
// key). Every derived key carries the base's hash tag by construction: the
// base's first '{' opens the tag and q holds no brace, so grammar.SameTag
// always holds for it.
func (r *verbCall) derived(dst []byte, prefix string, name []byte, suffix string) []byte {
	dst = append(dst, r.base...)
	dst = append(dst, prefix...)
	dst = append(dst, name...)
	return append(dst, suffix...)
}

// fence is the fence alone: GET version as the caller, one crossing. The
// version key is declared, so the server's ACL has already checked it.
func (r *verbCall) fence() error {
	v, err := r.c.Read().Cmd("GET").Arg(r.version()).Do()
	return fenceReply(v, err)
}

// fenced starts a read batch whose first command is the fence's GET; add
// the verb's first domain reads to it, run it with RunAll, and check
// r.fenceOf(res) before any other reply.
func (r *verbCall) fenced() *host.Batch {
	return r.c.Read().Cmd("GET").Arg(r.version())
}

// fenceOf is the fence's verdict on a batch started with fenced.
func (r *verbCall) fenceOf(res host.Results) error {
	return fenceReply(res.At(0))
}

// fenceReply is the fence's verdict on GET version's reply: WRONGTYPE as the
// server sent it, EMQWIRE when absent or another wire.
func fenceReply(v host.Value, err error) error {
	if err != nil {
		return err
	}
	b, found, err := v.OptBytes()
	if err != nil {
		return err
	}
	return grammar.Fence(b, found)
}

// str is a host read's reply as a verdict slot. A view's bytes are used
// as they are: copy them (strCopy) when the slot must outlive the next host
// call.
func str(v host.Value, err error) verdict.Str {
	if err != nil {
		return verdict.Failed(err)
	}
	b, found, err := v.OptBytes()
	if err != nil {
		return verdict.Failed(err)
	}
	return verdict.Str{Found: found, V: b}
}
