package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// reschedule is EMQ.RESCHEDULE (internal/lua/reschedule.lua): move a pending or
// delayed job to a new due time, max(now + delay, due). Crossings: the
// command, the row's ACL check, one read batch (the fence, the row and the
// types), the guard, one write batch; a job with a lane that moves between
// pending and delayed adds the lane accounting's.
func reschedule(c *host.Call) error {
	// shape and layout: numkeys 5 (base version pending delayed signal),
	// ARGV id due delay
	r, err := prelude(c, protocol.Reschedule, exactly(3))
	if err != nil {
		return err
	}
	// values: the id, the due time, the delay
	id := r.args[0]
	if !grammar.ID(id) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Reschedule.Name, "id"))
	}
	due, ok := grammar.Decimal(r.args[1], 0, protocol.MaxDueMS)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Reschedule.Name, "due"))
	}
	delay, ok := grammar.Decimal(r.args[2], 0, protocol.MaxDelayMS)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Reschedule.Name, "delay"))
	}
	n, _ := grammar.Decimal(id, 1, protocol.MaxJobID)
	st := reschedules.get()
	defer reschedules.put(st)
	// the row is outside the key-spec: the caller's ACL first
	if err := st.start(&r); err != nil {
		return err
	}
	s := &st.seen
	*s = verdict.RescheduleSeen{}
	step, err := drive(func() verdict.RescheduleStep { return verdict.Reschedule(n, r.now, due, delay, s) },
		func(step verdict.RescheduleStep) error { return st.read(&r, step) })
	if err != nil {
		return err
	}
	v := step.Verdict
	if v.Gone {
		c.ReplyInt(0)
		return nil
	}
	if !v.Stay {
		if err := st.write(&r, v, step.Lane); err != nil {
			return err
		}
	}
	c.ReplyString(v.To)
	return nil
}

// read performs the read step needs (drive).
func (st *rescheduleState) read(r *verbCall, step verdict.RescheduleStep) error {
	s := &st.seen
	switch step.Need {
	case verdict.RescheduleFirst:
		st.readFirst(r)
	case verdict.RescheduleLanes:
		// one waiting job more in the lane to pending, one less to delayed
		dw := int64(-1)
		if step.Verdict.To == protocol.StatePending {
			dw = 1
		}
		st.lanes.add(r.base, step.Lane, dw, 0)
		var err error
		s.Lanes, err = st.lanes.readReply(r)
		return err
	}
	return nil
}

// readFirst is GET version, HMGET row att state prio lane ev, ZCARD
// pending, ZCARD delayed, LLEN signal: the verdict takes them in this order.
func (st *rescheduleState) readFirst(r *verbCall) {
	s := &st.seen
	b := r.fenced()
	if st.deny < 0 {
		b.Cmd(host.HMGET).Arg(st.row).Str(protocol.FieldAttempts).Str(protocol.FieldState).Str(protocol.FieldPriority).
			Str(protocol.FieldLane).Str(protocol.FieldEvents)
	}
	res := b.Cmd(host.ZCARD).Arg(r.keys[2]).Cmd(host.ZCARD).Arg(r.keys[3]).Cmd(host.LLEN).Arg(r.keys[4]).RunAll()
	s.Version = st.keep(fieldAt(res, 0))
	i := 1
	if st.deny < 0 {
		s.Row = verdict.Reply[[4]verdict.Field]{Made: true}
		s.Row.Err = st.rowAt(res, 1, s.Row.Val[:])
		i++
	} else {
		s.Row = denied[[4]verdict.Field]()
	}
	s.Pending, s.Delayed, s.Signal = intAt(res, i), intAt(res, i+1), intAt(res, i+2)
}

// write is RESCHEDULE's writes: the job's rescheduled event, then the
// stream; the guard, then the Lua's writes, by move: to delayed, ZREM
// pending (or its lane's set) and HSET row state delayed when it was
// pending, ZADD delayed <due>; to pending, as a job sent back (backWrites).
func (st *rescheduleState) write(r *verbCall, v verdict.RescheduleVerdict, lane []byte) error {
	c, id := r.c, r.args[0]
	st.events.add(st.ev, protocol.EventRescheduled, id, protocol.EventStateField, []byte(v.To))
	if err := st.events.check(r); err != nil {
		return err
	}
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if err := st.events.publish(c, w); err != nil {
		return err
	}
	set := r.keys[2]
	if lane != nil {
		set = st.derived(r.base, protocol.SuffixLane, lane, "")
	}
	b := w.Write()
	back := jobBack{from: r.keys[3], row: st.row, set: set, score: v.Score, signal: v.Signal, sig: r.keys[4], held: st.seen.Signal.Val}
	if v.To == protocol.StateDelayed {
		if v.From == protocol.StatePending {
			b.Cmd("ZREM").Arg(set).Arg(id).
				Cmd("HSET").Arg(st.row).Str(protocol.FieldState).Str(protocol.StateDelayed)
		}
		b.Cmd("ZADD").Arg(r.keys[3]).Int(v.Due).Arg(id)
		st.lanes.writes(b)
		if v.Signal || st.lanes.wakes() {
			signalPush(b, r.keys[4], st.seen.Signal.Val)
		}
	} else {
		backWrites(b, id, back, &st.lanes)
	}
	if _, err := b.Run(); err != nil {
		return wrote(c, err)
	}
	return nil
}

// rescheduleState is RESCHEDULE's scratch between commands.
type rescheduleState struct {
	jobCall
	seen verdict.RescheduleSeen
}

var reschedules pool[rescheduleState]
