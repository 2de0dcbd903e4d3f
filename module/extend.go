package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// extend is EMQ.EXTEND (internal/lua/extend.lua): move an active job's lease deadline
// (a heartbeat). Crossings: the command, the row's ACL check, one read batch,
// the guard, one write.
func extend(c *host.Call) error {
	// shape and layout: numkeys 3 (base version active), ARGV id token lease
	r, err := prelude(c, protocol.Extend, exactly(3))
	if err != nil {
		return err
	}
	active := r.keys[2]
	// values: the id, then the lease; the token is any bytes
	id, token := r.args[0], r.args[1]
	if !grammar.ID(id) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Extend.Name, "id"))
	}
	lease, ok := grammar.Decimal(r.args[2], 1, protocol.MaxLeaseMS)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Extend.Name, "lease"))
	}
	st := extends.get()
	defer extends.put(st)
	st.reset()
	row := st.derived(r.base, protocol.SuffixJob, id, "")
	// the row is outside the key-spec: the caller's ACL first (a denial is
	// the row read's refusal, in its place after the fence)
	deny, err := r.firstDenied(host.KeyRead, [][]byte{row})
	if err != nil {
		return err
	}
	// fence and domain reads, one batch: GET version, HGET row att, ZSCORE
	// active id (which types active, the key ZADD writes)
	var s verdict.ExtendSeen
	step, err := drive(func() verdict.ExtendStep { return verdict.Extend(token, &s) }, func(step verdict.ExtendStep) error {
		switch step.Need {
		case verdict.ExtendAll:
			b := r.fenced()
			if deny < 0 {
				b.Cmd(host.HGET).Arg(row).Str(protocol.FieldAttempts)
			}
			res := b.Cmd(host.ZSCORE).Arg(active).Arg(id).RunAll()
			// views of the batch: a second read (ExtendCancelled) reuses its
			// memory, so the verdict's later look needs copies only then
			s.Version = fieldAt(res, 0)
			if deny < 0 {
				s.Att, s.Score = fieldAt(res, 1), fieldAt(res, 2)
			} else {
				s.Att, s.Score = denied[verdict.Field](), fieldAt(res, 1)
			}
		case verdict.ExtendCancelled:
			// not active: was it cancelled? (the row is read as a hash already)
			s.Version, s.Att, s.Score = st.keep(s.Version), st.keep(s.Att), st.keep(s.Score)
			s.Cancelled = fieldAt(c.Read().Cmd(host.HGET).Arg(row).Str(protocol.FieldCancelled).RunAll(), 0)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if step.Gone {
		c.ReplyInt(0)
		return nil
	}
	// guard, then the write: the absolute deadline travels as a value
	deadline := r.now + lease
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if _, err := w.Write().Cmd("ZADD").Arg(active).Str("XX").Int(deadline).Arg(id).Run(); err != nil {
		return err
	}
	c.ReplyInt(deadline)
	return nil
}

// extendState is EXTEND's scratch between commands.
type extendState struct{ scratch }

var extends pool[extendState]
