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
	pending, delayed, signal := r.keys[2], r.keys[3], r.keys[4]
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
	st.reset()
	st.lanes.reset(&st.scratch)
	st.events.reset()
	row := st.derived(r.base, protocol.SuffixJob, id, "")
	// the row is outside the key-spec: the caller's ACL first (a denial is
	// the row read's refusal, in its place after the fence)
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate, [][]byte{row})
	if err != nil {
		return err
	}
	s := &st.seen
	*s = verdict.RescheduleSeen{}
	var ev verdict.Field
	step := verdict.Reschedule(n, r.now, due, delay, s)
	for ran := verdict.RescheduleNone; step.Need != verdict.RescheduleNone && step.Need != ran; step = verdict.Reschedule(n, r.now, due, delay, s) {
		ran = step.Need
		switch step.Need {
		case verdict.RescheduleFirst:
			// GET version, HMGET row att state prio lane ev, ZCARD pending,
			// ZCARD delayed, LLEN signal: the verdict takes them in this order
			b := r.fenced()
			if deny < 0 {
				b.Cmd(host.HMGET).Arg(row).Str(protocol.FieldAttempts).Str(protocol.FieldState).Str(protocol.FieldPriority).
					Str(protocol.FieldLane).Str(protocol.FieldEvents)
			}
			res := b.Cmd(host.ZCARD).Arg(pending).Cmd(host.ZCARD).Arg(delayed).Cmd(host.LLEN).Arg(signal).RunAll()
			s.Version = st.keep(fieldAt(res, 0))
			i := 1
			if deny < 0 {
				s.Row = verdict.Reply[[4]verdict.Field]{Made: true}
				s.Row.Err = fieldsEvAt(res, 1, s.Row.Val[:], &ev)
				for k := range s.Row.Val {
					s.Row.Val[k].Bytes = st.copy(s.Row.Val[k].Bytes)
				}
				ev.Bytes = st.copy(ev.Bytes)
				i++
			} else {
				s.Row = denied[[4]verdict.Field]()
			}
			s.Pending, s.Delayed, s.Signal = intAt(res, i), intAt(res, i+1), intAt(res, i+2)
		case verdict.RescheduleLanes:
			// one waiting job more in the lane to pending, one less to delayed
			dw := int64(-1)
			if step.Verdict.To == protocol.StatePending {
				dw = 1
			}
			st.lanes.add(r.base, step.Lane, dw, 0)
			lanes, err := st.lanes.readReply(&r)
			if err != nil {
				return err
			}
			s.Lanes = lanes
		}
	}
	if step.Err != nil || step.Need != verdict.RescheduleNone {
		return orInternal(step.Err)
	}
	v := step.Verdict
	if v.Gone {
		c.ReplyInt(0)
		return nil
	}
	if v.Stay {
		c.ReplyString(v.To)
		return nil
	}
	// the job's rescheduled event, then the stream
	st.events.add(ev, protocol.EventRescheduled, id, protocol.EventStateField, []byte(v.To))
	if err := st.events.check(&r); err != nil {
		return err
	}
	// guard, then the writes: the Lua's, by move
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if err := st.events.publish(c, w); err != nil {
		return err
	}
	set := pending
	if step.Lane != nil {
		set = st.derived(r.base, protocol.SuffixLane, step.Lane, "")
	}
	b := w.Write()
	if v.To == protocol.StateDelayed {
		if v.From == protocol.StatePending {
			b.Cmd("ZREM").Arg(set).Arg(id).
				Cmd("HSET").Arg(row).Str(protocol.FieldState).Str(protocol.StateDelayed)
		}
		b.Cmd("ZADD").Arg(delayed).Int(v.Due).Arg(id)
	} else {
		b.Cmd("ZREM").Arg(delayed).Arg(id).
			Cmd("HSET").Arg(row).Str(protocol.FieldState).Str(protocol.StatePending).
			Cmd("ZADD").Arg(set).Int(v.Score).Arg(id)
	}
	st.lanes.writes(b)
	if v.Signal || st.lanes.wakes() {
		signalPush(b, signal, s.Signal.Val)
	}
	if _, err := b.Run(); err != nil {
		return wrote(c, err)
	}
	c.ReplyString(v.To)
	return nil
}

// rescheduleState is RESCHEDULE's scratch between commands.
type rescheduleState struct {
	scratch
	seen   verdict.RescheduleSeen
	lanes  laneAcct
	events jobEvents
}

var reschedules pool[rescheduleState]
