package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// What the bus verbs share (docs/PROTOCOL.md, "Bus verbs"): a prelude whose
// ARGV count is the verb's own rule, and the read of a stream.

// busPrelude runs shape (numkeys with EVAL's rules and the verb's exact
// count, then arity, the verb's ARGV rule) and layout (the named key checked
// against its form). A refusal here has read nothing.
func busPrelude(c *host.Call, v *protocol.Verb, arity func([][]byte) error) (verbCall, error) {
	sh, err := grammar.Shape(v, c.Argv())
	if err != nil {
		return verbCall{}, err
	}
	if err := arity(sh.Args); err != nil {
		return verbCall{}, err
	}
	if err := grammar.Layout(v, sh); err != nil {
		return verbCall{}, err
	}
	return verbCall{c: c, verb: v, base: sh.Keys[0], keys: sh.Keys, args: sh.Args, now: c.NowMillis()}, nil
}

// readStream runs the fence and the stream's reads in one batch: GET
// version, EXISTS <stream>, XINFO STREAM <stream> (whose error counts only
// when the stream exists). The top is copied into st, so it outlives the
// batch.
func readStream(r *verbCall, stream []byte, st *scratch) verdict.StreamSeen {
	res := r.fenced().Cmd(host.EXISTS).Arg(stream).Cmd(host.XINFO).Str("STREAM").Arg(stream).RunAll()
	s := verdict.StreamSeen{Version: st.keep(fieldAt(res, 0))}
	streamAt(res, 1, &s, st)
	return s
}

// streamAt reads the stream's EXISTS (the at-th reply of res) and XINFO
// STREAM, or XINFO STREAM FULL COUNT 1 (the next one) into s.
func streamAt(res host.Results, at int, s *verdict.StreamSeen, st *scratch) {
	s.Exists = intAt(res, at)
	if s.Exists.Err != nil || s.Exists.Val == 0 {
		return
	}
	info, err := res.At(at + 1)
	if err != nil {
		s.Info = verdict.Failed[struct{}](err)
		return
	}
	s.Info = verdict.Got(struct{}{})
	bad := info.Kind() != host.KindArray || info.Len()%2 != 0
	var top []byte
	info.Elems(func(i int, e host.Value) bool {
		if i%2 == 1 {
			return true
		}
		name, err := e.Bytes()
		if err != nil {
			bad = true
			return false
		}
		switch string(name) {
		case "last-generated-id":
			if top, err = info.Index(i + 1).Bytes(); err != nil {
				bad = true
			}
		case "first-entry", "entries":
			// XINFO STREAM: the entry or null; FULL COUNT 1: [entry] or []
			first := info.Index(i + 1)
			if string(name) == "entries" {
				if first.Kind() != host.KindArray {
					bad = true
					break
				}
				if first.Len() == 0 {
					break
				}
				first = first.Index(0)
			} else if first.IsNull() {
				break
			}
			// [id, [field, value, …]]
			if first.Kind() != host.KindArray || first.Len() != 2 {
				bad = true
				break
			}
			fields := first.Index(1)
			s.HasFirst = true
			if fields.Kind() == host.KindArray && fields.Len() >= 2 {
				s.FirstField = st.keep(optAt(fields.Index(0))).Val
				s.FirstValue = st.keep(optAt(fields.Index(1))).Val
			}
		}
		return !bad
	})
	if bad || top == nil {
		s.Info = verdict.Failed[struct{}](host.ErrHostReply)
		return
	}
	s.Top = st.copy(top)
}

// optAt is a string-or-null value as a read.
func optAt(v host.Value) verdict.Reply[verdict.Field] {
	b, set, err := v.OptBytes()
	if err != nil {
		return verdict.Failed[verdict.Field](err)
	}
	return verdict.Got(verdict.Field{Bytes: b, Set: set})
}

// busState is a bus verb's scratch between commands.
type busState struct {
	scratch
	starts []int
	ids    []verdict.StreamID
}

var buses pool[busState]
