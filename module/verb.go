package main

import (
	"strconv"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// This file is the prelude every keyed verb starts with: the first zones of
// the command grammar (docs/PROTOCOL.md, "The order of every verb").
//
//	r, err := prelude(c, protocol.Extend, exactly(3)) // shape, layout
//	…                                                 // values, from r.args
//	res := r.fenced().Cmd(…).RunAll()                 // the fence and the first domain reads
//
// Every keyed verb starts its first read batch with r.fenced(), so the fence
// and its first domain reads cross into the server once; its verdict checks
// the fence's reply first, before it looks at any other reply of the batch.

// argCount is how a verb's ARGV is counted in the shape zone.
type argCount struct {
	n int // exactly n entries, unless per > 0 or most > n
	// most: n to most entries, the ones after the n-th optional (CLAIM's ext)
	most int
	per  int // ARGV[1] counts groups of per entries: grammar.CountedArity
	// options: ARGV[2] counts option columns, each adding one entry to
	// every group (ADD): grammar.OptionArity
	options bool
	// shaped, when not nil, is the verb's own ARGV count rule (its n).
	shaped func(args [][]byte) (int, error)
}

// exactly is an ARGV of n entries.
func exactly(n int) argCount { return argCount{n: n} }

// optional is an ARGV of n entries, then up to more optional ones.
func optional(n, more int) argCount { return argCount{n: n, most: n + more} }

// counted is an ARGV of a count n, then n groups of per entries.
func counted(per int) argCount { return argCount{per: per} }

// withOptions is an ARGV of a count n, a count k of option columns and
// their k names, then n groups of per + k entries.
func withOptions(per int) argCount { return argCount{per: per, options: true} }

// shapedBy is an ARGV whose count the verb's own rule f judges.
func shapedBy(f func(args [][]byte) (int, error)) argCount { return argCount{shaped: f} }

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
	// n is the count of a counted ARGV (ADD's jobs, COMPLETEMANY's triples),
	// else 0; k the count of option columns (ADD's).
	n, k int
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
	n, k := 0, 0
	if a.shaped != nil {
		if n, err = a.shaped(sh.Args); err != nil {
			return verbCall{}, err
		}
	} else if a.options {
		if n, k, err = grammar.OptionArity(v, sh.Args, a.per); err != nil {
			return verbCall{}, err
		}
	} else if a.per > 0 {
		if n, err = grammar.CountedArity(v, sh.Args, a.per); err != nil {
			return verbCall{}, err
		}
	} else if a.most > a.n && len(sh.Args) > a.n && len(sh.Args) <= a.most {
		// the optional entries are there
	} else if err := grammar.Arity(v, sh, a.n); err != nil {
		return verbCall{}, err
	}
	// layout: KEYS[1] is a base, the others are the base and the verb's suffixes
	if err := grammar.Layout(v, sh); err != nil {
		return verbCall{}, err
	}
	return verbCall{c: c, verb: v, base: sh.Keys[0], keys: sh.Keys, args: sh.Args, n: n, k: k, now: c.NowMillis()}, nil
}

// version is the declared version key, KEYS[2] of every keyed verb.
func (r *verbCall) version() []byte { return r.keys[1] }

// fenced starts a read batch whose first command is the fence's GET; add
// the verb's first domain reads to it and run it with RunAll; the verb's
// verdict reads the fence's reply before any other.
func (r *verbCall) fenced() *host.ReadBatch {
	return r.c.Read().Cmd(host.GET).Arg(r.version())
}

// argv is the index among the command's arguments (host.Batch.Argv) of
// ARGV[i] (0-based): the command name, numkeys and the keys come first. A
// write passes a large argument (a payload) on by reference this way.
func (r *verbCall) argv(i int) int { return 2 + len(r.keys) + i }

// keyArgv is the index among the command's arguments of KEYS[k+1] (r.keys[k]):
// a command of more than 16 arguments passes its own keys by reference this
// way (host.Batch.Arg looks for them only in shorter commands).
func (r *verbCall) keyArgv(k int) int { return 2 + k }

// firstDenied checks derived keys against the caller's ACL before they are
// touched, in one crossing, and returns the index of the first key the
// caller may not touch with access, or -1. Only when the batch is refused are
// the keys checked one by one, to find which.
func (r *verbCall) firstDenied(access host.KeyAccess, keys [][]byte) (int, error) {
	err := r.c.CheckKeys(access, keys...)
	if err == nil || len(keys) == 1 {
		if err != nil {
			return 0, checkErr(err)
		}
		return -1, nil
	}
	if err := checkErr(err); err != nil {
		return 0, err
	}
	for i, k := range keys {
		if err := r.c.CheckKeys(access, k); err != nil {
			return i, checkErr(err)
		}
	}
	return -1, nil // allowed one by one: the rules changed between the checks
}

// checkErr is nil for CheckKeys' denial, which the caller places among the
// verdict's reads, and the error itself for anything else.
func checkErr(err error) error {
	if err == host.ErrNoPerm {
		return nil
	}
	return err
}

// denied is the read error of a key the caller may not touch.
func denied[T any]() verdict.Reply[T] { return verdict.Failed[T](host.ErrNoPerm) }

// fieldAt is the i-th reply of a batch as a string-or-null read: a view,
// valid until the command's next batch runs (see scratch.keep).
func fieldAt(res host.Results, i int) verdict.Reply[verdict.Field] {
	v, err := res.At(i)
	if err != nil {
		return verdict.Failed[verdict.Field](err)
	}
	b, set, err := v.OptBytes()
	if err != nil {
		return verdict.Failed[verdict.Field](err)
	}
	return verdict.Got(verdict.Field{Bytes: b, Set: set})
}

// intAt is the i-th reply of a batch as an integer read (ZCARD, LLEN,
// EXISTS).
func intAt(res host.Results, i int) verdict.Reply[int64] {
	v, err := res.At(i)
	if err == nil {
		var n int64
		if n, err = v.Int(); err == nil {
			return verdict.Got(n)
		}
	}
	return verdict.Failed[int64](err)
}

// fieldsAt fills dst from the i-th reply of a batch, an HMGET of len(dst)
// fields, and returns the read's error: the server's, or ErrHostReply for a
// reply of another shape.
func fieldsAt(res host.Results, i int, dst []verdict.Field) error {
	v, err := res.At(i)
	if err != nil {
		return err
	}
	if v.Kind() != host.KindArray || v.Len() != len(dst) {
		return host.ErrHostReply
	}
	v.Elems(func(j int, e host.Value) bool {
		dst[j].Bytes, dst[j].Set, err = e.OptBytes()
		return err == nil
	})
	return err
}

// scratch is a handler's own memory for one command: copies of read values
// that must outlive the batch that read them, and the derived keys it
// builds. It is reused by the next command of the verb, so a steady load
// allocates nothing.
type scratch struct {
	buf []byte
}

// maxScratch is the capacity above which a scratch buffer is dropped after
// its command rather than kept for the next: the module's memory is invisible
// to the server's used_memory.
const maxScratch = 1 << 20

func (s *scratch) reset() {
	if cap(s.buf) > maxScratch {
		s.buf = nil
	}
	s.buf = s.buf[:0]
}

// keep copies a read's bytes into the scratch, so the verdict can look at it
// again after the next batch. Slices taken earlier stay valid when buf grows:
// they keep the old array.
func (s *scratch) keep(r verdict.Reply[verdict.Field]) verdict.Reply[verdict.Field] {
	r.Val.Bytes = s.copy(r.Val.Bytes)
	return r
}

// copy appends b to the scratch and returns the copy.
func (s *scratch) copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	off := len(s.buf)
	s.buf = append(s.buf, b...)
	return s.buf[off:len(s.buf):len(s.buf)]
}

// derived appends base + prefix + name + suffix (a row, its logs, a unique
// key) to the scratch and returns it. Every derived key carries the base's
// hash tag by construction: the base's first '{' opens the tag and q holds
// no brace, so grammar.SameTag always holds for it.
func (s *scratch) derived(base []byte, prefix string, name []byte, suffix string) []byte {
	off := len(s.buf)
	s.buf = append(s.buf, base...)
	s.buf = append(s.buf, prefix...)
	s.buf = append(s.buf, name...)
	s.buf = append(s.buf, suffix...)
	return s.buf[off:len(s.buf):len(s.buf)]
}

// decimal appends v in decimal to the scratch and returns it.
func (s *scratch) decimal(v int64) []byte {
	off := len(s.buf)
	s.buf = strconv.AppendInt(s.buf, v, 10)
	return s.buf[off:len(s.buf):len(s.buf)]
}

// pool keeps a verb's state between commands. Handlers run one at a time on
// the server thread and never call one another, so it holds one state; a
// nested command (through the host or a script) would take a second.
type pool[T any] struct {
	free []*T
}

func (p *pool[T]) get() *T {
	if n := len(p.free); n > 0 {
		x := p.free[n-1]
		p.free = p.free[:n-1]
		return x
	}
	return new(T)
}

func (p *pool[T]) put(x *T) { p.free = append(p.free, x) }

// orInternal is err, or ErrInternal when a verdict ended without a refusal
// where one was due: a verdict asking again for a read its handler made.
func orInternal(err error) error {
	if err == nil {
		return host.ErrInternal
	}
	return err
}

// wrote is the answer to a write batch that failed past the guard: every
// type and integer the writes depend on was settled before it, so a failure
// contradicts a prediction. The writes before it stay; the server's text
// goes to the log and the client gets ErrHostReply.
func wrote(c *host.Call, err error) error {
	host.Logf(host.LogWarning, "%s: a write failed past the guard: %v; answered %q", c.Name(), err, protocol.ErrHostReply)
	return host.ErrHostReply
}

// predicted checks the i-th reply of a write batch, an HINCRBY, against the
// value predicted before the guard.
func predicted(c *host.Call, res host.Results, i int, want int64) error {
	if got := intAt(res, i); got.Err != nil || got.Val != want {
		host.Logf(host.LogWarning, "%s: HINCRBY answered %d (%v), %d predicted; answered %q", c.Name(), got.Val, got.Err, want, protocol.ErrHostReply)
		return host.ErrHostReply
	}
	return nil
}

// created checks the i-th reply of a write batch, an HSET of counters whose
// values were predicted (in place of one HINCRBY per counter), against the
// number of its fields read absent before the guard: HSET answers the
// number of fields it created.
func created(c *host.Call, res host.Results, i int, want int64) error {
	if got := intAt(res, i); got.Err != nil || got.Val != want {
		host.Logf(host.LogWarning, "%s: HSET answered %d (%v), %d new fields predicted; answered %q", c.Name(), got.Val, got.Err, want, protocol.ErrHostReply)
		return host.ErrHostReply
	}
	return nil
}

// absent counts the fields read absent.
func absent(fields ...verdict.Field) int64 {
	n := int64(0)
	for _, f := range fields {
		if !f.Set {
			n++
		}
	}
	return n
}
