package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// cancel is EMQ.CANCEL (internal/lua/cancel.lua): end a pending, delayed or active
// job in the dead set, with err cancelled and the row's cancelled field; a
// worker holding an active one is refused at its next EXTEND, COMPLETE or
// FAIL. Crossings: the command, the row's ACL check, one read batch (the
// fence, the row, the types and the counter), the guard, one write batch; a
// lane, a parent or a wait add their accountings'.
func cancel(c *host.Call) error {
	// shape and layout: numkeys 7 (base version stats pending delayed
	// active dead), ARGV id
	r, err := prelude(c, protocol.Cancel, exactly(1))
	if err != nil {
		return err
	}
	stats, dead := r.keys[2], r.keys[6]
	sets := [...][]byte{r.keys[3], r.keys[4], r.keys[5]}
	// values: the id
	id := r.args[0]
	if !grammar.ID(id) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Cancel.Name, "id"))
	}
	st := cancels.get()
	defer cancels.put(st)
	st.reset()
	st.lanes.reset(&st.scratch)
	st.flow.reset(&st.scratch)
	st.events.reset()
	st.lane = -1
	row := st.derived(r.base, protocol.SuffixJob, id, "")
	// the row is outside the key-spec: the caller's ACL first (a denial is
	// the row read's refusal, in its place after the fence)
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate, [][]byte{row})
	if err != nil {
		return err
	}
	s := &st.seen
	*s = verdict.CancelSeen{}
	var ev verdict.Field
	step := verdict.Cancel(s)
	for ran := verdict.CancelNone; step.Need != verdict.CancelNone && step.Need != ran; step = verdict.Cancel(s) {
		ran = step.Need
		switch step.Need {
		case verdict.CancelFirst:
			// GET version, HMGET row att state lane parent onfail wait ev,
			// ZCARD pending, delayed, active and dead, HGET stats cancelled:
			// the verdict takes the ones it needs, in its order
			b := r.fenced()
			if deny < 0 {
				b.Cmd(host.HMGET).Arg(row).Str(protocol.FieldAttempts).Str(protocol.FieldState).Str(protocol.FieldLane).
					Str(protocol.FieldParent).Str(protocol.FieldOnFail).Str(protocol.FieldWait).Str(protocol.FieldEvents)
			}
			for _, set := range sets {
				b.Cmd(host.ZCARD).Arg(set)
			}
			res := b.Cmd(host.ZCARD).Arg(dead).Cmd(host.HGET).Arg(stats).Str(protocol.StatCancelled).RunAll()
			s.Version = st.keep(fieldAt(res, 0))
			i := 1
			if deny < 0 {
				s.Row = verdict.Reply[[6]verdict.Field]{Made: true}
				s.Row.Err = fieldsEvAt(res, 1, s.Row.Val[:], &ev)
				for k := range s.Row.Val {
					s.Row.Val[k].Bytes = st.copy(s.Row.Val[k].Bytes)
				}
				ev.Bytes = st.copy(ev.Bytes)
				i++
			} else {
				s.Row = denied[[6]verdict.Field]()
			}
			for k := range s.Sets {
				s.Sets[k] = intAt(res, i+k)
			}
			s.Counter = st.keep(fieldAt(res, i+4))
		case verdict.CancelFlow:
			// its outcome dcancelled, and its parent told of a death
			st.flow.finish(id, verdict.FinishDied, cancelledText, step.Parent, step.Policy, step.Verdict.Wait)
			refusal, err := st.flow.read(&r)
			if err != nil {
				return err
			}
			s.Flow = verdict.Reply[struct{}]{Made: true, Err: refusal}
		case verdict.CancelLanes:
			// the job's lane: one waiting or active job less; the parents
			// released to a lane
			if step.Lane != nil {
				st.lane = st.lanes.add(r.base, step.Lane, step.DW, step.DA)
			}
			st.flow.lanes(&st.lanes, r.base)
			lanes, err := st.lanes.readReply(&r)
			if err != nil {
				return err
			}
			s.Lanes = lanes
		case verdict.CancelFlowTypes:
			refusal, err := st.flow.types(&r, stats, 0)
			if err != nil {
				return err
			}
			s.FlowTypes = verdict.Reply[struct{}]{Made: true, Err: refusal}
		}
	}
	if step.Err != nil || step.Need != verdict.CancelNone {
		return orInternal(step.Err)
	}
	v := step.Verdict
	if v.Gone {
		c.ReplyInt(0)
		return nil
	}
	// the job's cancelled event, its released parents', then the stream
	st.events.add(ev, protocol.EventCancelled, id, protocol.EventStateField, []byte(v.From))
	st.flow.publish(&st.events)
	if err := st.events.check(&r); err != nil {
		return err
	}
	// guard, then the writes: ZREM from its set; HSET row state dead err
	// cancelled cancelled 1; ZADD dead <now>; HINCRBY stats cancelled
	// (predicted); the parents', the lanes', the outcome, the signal
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if err := st.events.publish(c, w); err != nil {
		return err
	}
	var set []byte
	if v.Set >= 0 {
		set = sets[v.Set]
	} else {
		set = st.lanes.keys[st.lane] // a pending job's lane
	}
	b := w.Write().
		Cmd("ZREM").Arg(set).Arg(id).
		Cmd("HSET").Arg(row).Str(protocol.FieldState).Str(protocol.StateDead).Str(protocol.FieldError).Str(protocol.ErrTextCancelled).
		Str(protocol.FieldCancelled).Str("1").
		Cmd("ZADD").Arg(dead).Int(r.now).Arg(id).
		Cmd("HINCRBY").Arg(stats).Str(protocol.StatCancelled).Int(1)
	st.flow.writes(b, r.now, stats, &st.lanes)
	st.lanes.writes(b)
	st.flow.outcomes(b)
	st.flow.signals(b, &st.lanes)
	res, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	if err := predicted(c, res, 3, v.Cancelled); err != nil {
		return err
	}
	c.ReplyInt(1)
	return nil
}

// cancelledText is the error a cancelled job's parent and waiters are told.
var cancelledText = []byte(protocol.ErrTextCancelled)

// cancelState is CANCEL's scratch between commands.
type cancelState struct {
	scratch
	seen  verdict.CancelSeen
	lanes laneAcct
	flow  flowAcct
	// lane is the job's lane's index in the accounting, when it has one.
	lane   int
	events jobEvents
}

var cancels pool[cancelState]
