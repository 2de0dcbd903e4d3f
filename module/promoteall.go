package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// promoteAll is EMQ.PROMOTEALL (internal/lua/promoteall.lua): move up to limit
// delayed jobs to pending whether they are due or not, soonest due first.
// It is PROMOTE over the head of delayed in place of its due jobs, and
// shares PROMOTE's reads; its verdict (verdict.PromoteAll) is PROMOTE's
// after ZCARD delayed. Crossings: the command, one read batch
// (the fence, ZCARD delayed and its head); with members, the rows' ACL
// check, one read batch (the rows and the types), the guard, one write
// batch.
func promoteAll(c *host.Call) error {
	// shape, layout and values: numkeys 5 (base version pending delayed
	// signal), ARGV limit
	r, limit, st, err := promoteBegin(c, protocol.PromoteAll)
	if err != nil {
		return err
	}
	defer promotes.put(st)
	pending, delayed, signal := r.keys[2], r.keys[3], r.keys[4]
	s := &st.seen
	// fence, ZCARD delayed (0: nothing to do), ZRANGE delayed 0 <limit-1>
	res := r.fenced().
		Cmd(host.ZCARD).Arg(delayed).
		Cmd(host.ZRANGE).Arg(delayed).Str("0").Int(limit - 1).
		RunAll()
	s.Version = st.keep(fieldAt(res, 0))
	card := intAt(res, 1)
	if card.Err == nil && card.Val > 0 {
		s.Due = listAt(res, 2, &st.scratch, st.ids)
		st.ids = s.Due.Val
	}
	// the rest is PROMOTE's, driven by PROMOTEALL's verdict
	step, err := drive(func() verdict.PromoteStep { return verdict.PromoteAll(s, card) },
		func(step verdict.PromoteStep) error { return st.readNext(&r, step, pending, signal) })
	if err != nil {
		return err
	}
	v := step.Verdict
	left := card.Val - int64(len(s.Due.Val))
	if v.Moves == nil {
		return replyMovedLeft(c, 0, left)
	}
	if err := st.promoteWrites(&r, v, pending, delayed, signal); err != nil {
		return err
	}
	return replyMovedLeft(c, v.Moved, left)
}

// replyMovedLeft is PROMOTEALL's reply, [moved, left].
func replyMovedLeft(c *host.Call, moved, left int64) error {
	c.ReplyArray(2)
	c.ReplyInt(moved)
	c.ReplyInt(left)
	return nil
}
