package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// requeue is EMQ.REQUEUE (internal/lua/requeue.lua): send a dead job back to pending
// with a fresh set of attempts. Crossings: the command, the row's ACL check,
// one read batch (the fence and the row); for a dead job, one read batch (the
// types and the counter), the guard and one write batch.
func requeue(c *host.Call) error {
	// shape and layout: numkeys 6 (base version stats pending dead signal),
	// ARGV id
	r, err := prelude(c, protocol.Requeue, exactly(1))
	if err != nil {
		return err
	}
	stats, pending, dead, signal := r.keys[2], r.keys[3], r.keys[4], r.keys[5]
	// values: the id
	id := r.args[0]
	n, ok := grammar.Decimal(id, 1, protocol.MaxJobID)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Requeue.Name, "id"))
	}
	st := requeues.get()
	defer requeues.put(st)
	st.reset()
	st.lanes.reset(&st.scratch)
	st.events.reset()
	st.cancelled = false
	st.ev = verdict.Field{}
	row := st.derived(r.base, protocol.SuffixJob, id, "")
	// the row is outside the key-spec: the caller's ACL first (read, then
	// written); a denial is the row read's refusal, in its place after the
	// fence
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate, [][]byte{row})
	if err != nil {
		return err
	}
	// fence and domain reads, driven by the verdict
	s := &st.seen
	*s = verdict.RequeueSeen{}
	step := verdict.Requeue(n, s)
	for ran := verdict.RequeueNone; step.Need != verdict.RequeueNone && step.Need != ran; step = verdict.Requeue(n, s) {
		ran = step.Need
		switch step.Need {
		case verdict.RequeueFirst:
			// GET version, HMGET row state att max prio lane parent onfail
			// cfail (which types the row)
			b := r.fenced()
			if deny < 0 {
				b.Cmd(host.HMGET).Arg(row).Str(protocol.FieldState).Str(protocol.FieldAttempts).Str(protocol.FieldMax).Str(protocol.FieldPriority).Str(protocol.FieldLane).
					Str(protocol.FieldParent).Str(protocol.FieldOnFail).Str(protocol.FieldChildFail).Str(protocol.FieldEvents).
					Str(protocol.FieldCancelled)
			}
			res := b.RunAll()
			s.Version = st.keep(fieldAt(res, 0))
			if deny < 0 {
				// the verdict's eight, then ev and cancelled
				var all [10]verdict.Field
				err := fieldsAt(res, 1, all[:])
				f := st.fields[:]
				for i := range f {
					f[i] = verdict.Field{Bytes: st.copy(all[i].Bytes), Set: all[i].Set}
				}
				st.ev = verdict.Field{Bytes: st.copy(all[8].Bytes), Set: all[8].Set}
				st.cancelled = all[9].Set
				s.Row = verdict.Reply[[]verdict.Field]{Made: true, Val: f, Err: err}
			} else {
				s.Row = denied[[]verdict.Field]()
			}
		case verdict.RequeueRest:
			// the types of the keys the writes touch (ZCARD dead, ZCARD pending,
			// which is also the signal's condition, LLEN signal), then HGET
			// stats requeued (its type and the counter HINCRBY predicts)
			res := c.Read().
				Cmd(host.ZCARD).Arg(dead).
				Cmd(host.ZCARD).Arg(pending).
				Cmd(host.LLEN).Arg(signal).
				Cmd(host.HGET).Arg(stats).Str(statRequeued).
				RunAll()
			s.Dead, s.Pending, s.Signal, s.Requeued = intAt(res, 0), intAt(res, 1), intAt(res, 2), fieldAt(res, 3)
		case verdict.RequeueLanes:
			// the job's lane: one waiting job more
			st.lanes.add(r.base, step.Lane, 1, 0)
			lanes, err := st.lanes.readReply(&r)
			if err != nil {
				return err
			}
			s.Lanes = lanes
		}
	}
	if step.Err != nil || step.Need != verdict.RequeueNone {
		return orInternal(step.Err)
	}
	v := step.Verdict
	if v.Gone {
		c.ReplyInt(0)
		return nil
	}
	// the job's requeued event, then the stream
	st.events.add(st.ev, protocol.EventRequeued, id, "", nil)
	if err := st.events.check(&r); err != nil {
		return err
	}
	// guard, then the writes in the Lua's order: ZREM dead, HSET row state
	// pending max <att+max>, ZADD pending <score>, HINCRBY stats requeued
	// (predicted), the signal (in one write when the list held at most one
	// element)
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if err := st.events.publish(c, w); err != nil {
		return err
	}
	set := pending
	if v.Lane != nil {
		set = st.lanes.keys[0]
	}
	b := w.Write().
		Cmd("ZREM").Arg(dead).Arg(id).
		Cmd("HSET").Arg(row).Str(protocol.FieldState).Str(protocol.StatePending).Str(protocol.FieldMax).Int(v.Max)
	counter := 3
	if f := st.fields[5:8]; f[0].Set || f[1].Set || f[2].Set || st.cancelled {
		// a child runs on its own from now on; a parent forgets its cfail;
		// a cancelled job is one no more
		b.Cmd("HDEL").Arg(row).Str(protocol.FieldParent).Str(protocol.FieldOnFail).Str(protocol.FieldChildFail).Str(protocol.FieldCancelled)
		counter++
	}
	b.Cmd("ZADD").Arg(set).Int(v.Score).Arg(id).
		Cmd("HINCRBY").Arg(stats).Str(statRequeued).Int(1)
	st.lanes.writes(b)
	if v.Signal || st.lanes.wakes() {
		signalPush(b, signal, s.Signal.Val)
	}
	res, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	if err := predicted(c, res, counter, v.Requeued); err != nil {
		return err
	}
	c.ReplyInt(1)
	return nil
}

// requeueState is REQUEUE's scratch between commands.
type requeueState struct {
	scratch
	seen   verdict.RequeueSeen
	fields [8]verdict.Field
	// cancelled: the row's cancelled field is present.
	cancelled bool
	lanes     laneAcct
	// ev is the row's ev; events the job's requeued event.
	ev     verdict.Field
	events jobEvents
}

var requeues pool[requeueState]
