package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// promote is EMQ.PROMOTE (internal/lua/promote.lua): move up to limit delayed jobs
// that are due to pending. Crossings: the command, one read batch (the fence
// and the due jobs); with jobs due, the rows' ACL check, one read batch (the
// rows and the types), the guard, one write batch.
func promote(c *host.Call) error {
	// shape, layout and values: numkeys 5 (base version pending delayed
	// signal), ARGV limit
	r, limit, st, err := promoteBegin(c, protocol.Promote)
	if err != nil {
		return err
	}
	defer promotes.put(st)
	pending, delayed, signal := r.keys[2], r.keys[3], r.keys[4]
	s := &st.seen
	// fence and domain reads, driven by the verdict
	step, err := drive(func() verdict.PromoteStep { return verdict.Promote(s) }, func(step verdict.PromoteStep) error {
		if step.Need != verdict.PromoteFirst {
			return st.readNext(&r, step, pending, signal)
		}
		// GET version, then the delayed jobs due at or before now
		res := r.fenced().
			Cmd(host.ZRANGEBYSCORE).Arg(delayed).Str("-inf").Int(r.now).Str("LIMIT").Str("0").Int(limit).
			RunAll()
		s.Version = st.keep(fieldAt(res, 0))
		s.Due = listAt(res, 1, &st.scratch, st.ids)
		st.ids = s.Due.Val
		return nil
	})
	if err != nil {
		return err
	}
	v := step.Verdict
	if v.Moves == nil {
		c.ReplyInt(0)
		return nil
	}
	if err := st.promoteWrites(&r, v, pending, delayed, signal); err != nil {
		return err
	}
	c.ReplyInt(v.Moved)
	return nil
}

// readNext performs the reads PROMOTE's verdict needs after its first
// batch, for PROMOTE and PROMOTEALL alike: the rows and types (readRows),
// then the lane accounting of the jobs' lanes, in order, one waiting job
// more each.
func (st *promoteState) readNext(r *verbCall, step verdict.PromoteStep, pending, signal []byte) error {
	switch step.Need {
	case verdict.PromoteRows:
		return st.readRows(r, pending, signal)
	case verdict.PromoteLanes:
		st.laneOf = grow(st.laneOf, len(step.Verdict.Moves))
		st.lanes.addMoves(r.base, step.Verdict.Moves, 1, 0, st.laneOf)
		lanes, err := st.lanes.readReply(r)
		if err != nil {
			return err
		}
		st.seen.Lanes = lanes
		return nil
	}
	return host.ErrInternal
}

// promoteWrites is the end of PROMOTE and PROMOTEALL once their verdict
// moves jobs: the moved jobs' promoted events (their ACL check), the
// guard, then the writes.
func (st *promoteState) promoteWrites(r *verbCall, v verdict.PromoteVerdict, pending, delayed, signal []byte) error {
	// the moved jobs' promoted events, in ZRANGEBYSCORE order, then the
	// stream
	st.events.reset()
	for i, mv := range v.Moves {
		if (mv.To == verdict.ToPending || mv.To == verdict.ToLane) && i < len(st.evs) {
			st.events.add(st.evs[i], protocol.EventPromoted, st.seen.Due.Val[i], "", nil)
		}
	}
	if err := st.events.check(r); err != nil {
		return err
	}
	// guard, then the writes: ZREM delayed <all due>; per job with a row,
	// HSET row state pending; one ZADD pending <score> <id> … for them all,
	// where the Lua writes one per job; the signal
	w, err := r.c.BeginWrites()
	if err != nil {
		return err
	}
	if err := st.events.publish(r.c, w); err != nil {
		return err
	}
	ids := st.seen.Due.Val
	b := w.Write().Cmd("ZREM").Arg(delayed)
	for _, id := range ids {
		b.Arg(id)
	}
	for i, mv := range v.Moves {
		if mv.To == verdict.ToPending || mv.To == verdict.ToLane {
			b.Cmd("HSET").Arg(st.rowOf[i]).Str(protocol.FieldState).Str(protocol.StatePending)
		}
	}
	zaddMoves(b, pending, verdict.ToPending, v.Moves, ids)
	if st.lanes.len() > 0 {
		st.lanes.zaddLanes(b, v.Moves, ids, st.laneOf, &st.order)
	}
	st.lanes.writes(b)
	if v.Signal || st.lanes.wakes() {
		signalPush(b, signal, st.seen.Signal.Val)
	}
	res, err := b.Run()
	if err != nil {
		return wrote(r.c, err)
	}
	if err := removedAll(r.c, res, 0, len(ids)); err != nil {
		return err
	}
	return nil
}

// readRows is PROMOTE's second read: the rows of the due members that are
// ids, checked against the caller's ACL first (read, then written), then in
// one batch HMGET row att prio for each, ZCARD pending and LLEN signal. A
// denied row is its read's refusal; the rows after it are not read.
func (st *promoteState) readRows(r *verbCall, pending, signal []byte) error {
	s := &st.seen
	ids := s.Due.Val
	nrows, err := st.check(r, &st.scratch, ids)
	if err != nil {
		return err
	}
	b := r.c.Read()
	for _, row := range st.rows[:nrows] {
		b.Cmd(host.HMGET).Arg(row).Str(protocol.FieldAttempts).Str(protocol.FieldPriority).Str(protocol.FieldLane).Str(protocol.FieldEvents)
	}
	res := b.Cmd(host.ZCARD).Arg(pending).
		Cmd(host.LLEN).Arg(signal).
		RunAll()
	s.Rows = grow(s.Rows, len(ids))
	st.fields = grow(st.fields, 3*len(ids))
	st.evs = grow(st.evs, len(ids))
	st.place(res, ids, nrows, 3, st.fields, s.Rows, st.evs)
	s.Pending, s.Signal = intAt(res, nrows), intAt(res, nrows+1)
	// kept: the lanes' batch may come before the verdict's last look
	for i := range st.fields {
		st.fields[i].Bytes = st.copy(st.fields[i].Bytes)
	}
	for i := range st.evs {
		st.evs[i].Bytes = st.copy(st.evs[i].Bytes)
	}
	return nil
}

// promoteState is PROMOTE's scratch between commands.
type promoteState struct {
	scratch
	seen verdict.PromoteSeen
	ids  [][]byte // the due members, copied
	memberRows
	fields []verdict.Field // three per member
	// lanes is the lane accounting of the jobs' lanes; laneOf each member's
	// lane index in it (-1: none); order scratch for the lanes' ZADDs.
	lanes  laneAcct
	laneOf []int
	order  []int
	// evs are the rows' ev fields; events the call's job events.
	evs    []verdict.Field
	events jobEvents
}

var promotes pool[promoteState]

// promoteBegin checks PROMOTE's and PROMOTEALL's shape, layout (numkeys 5:
// base version pending delayed signal) and value (ARGV limit), and takes
// their pooled state, reset; the caller puts it back.
func promoteBegin(c *host.Call, v *protocol.Verb) (verbCall, int64, *promoteState, error) {
	r, err := prelude(c, v, exactly(1))
	if err != nil {
		return r, 0, nil, err
	}
	limit, ok := grammar.Decimal(r.args[0], 1, protocol.MaxCount)
	if !ok {
		return r, 0, nil, grammar.Refusal(protocol.ErrBadArg(v.Name, "limit"))
	}
	st := promotes.get()
	st.reset()
	st.lanes.reset(&st.scratch)
	st.seen = verdict.PromoteSeen{Rows: st.seen.Rows, Moves: st.seen.Moves}
	return r, limit, st, nil
}
