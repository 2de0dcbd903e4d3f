package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// fail is EMQ.FAIL (internal/lua/fail.lua): end an active job's attempt with an
// error, retrying it after its backoff while attempts remain, else
// dead-lettering it. Crossings: the command, the row's ACL check, one read
// batch, the guard, one write batch.
func fail(c *host.Call) error {
	// shape and layout: numkeys 6 (base version stats active delayed dead),
	// ARGV id token retry error
	r, err := prelude(c, protocol.Fail, exactly(4))
	if err != nil {
		return err
	}
	stats, active, delayed, dead := r.keys[2], r.keys[3], r.keys[4], r.keys[5]
	// values: the id, retry (0 or 1), the error text; the token is any bytes
	id, token, retry, text := r.args[0], r.args[1], r.args[2], r.args[3]
	if !grammar.ID(id) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Fail.Name, "id"))
	}
	if string(retry) != "0" && string(retry) != "1" {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Fail.Name, "retry"))
	}
	if len(text) > protocol.MaxText {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Fail.Name, "error"))
	}
	st := fails.get()
	defer fails.put(st)
	st.reset()
	st.lanes.reset(&st.scratch)
	st.flow.reset(&st.scratch)
	st.events.reset()
	st.ev = verdict.Field{}
	row := st.derived(r.base, protocol.SuffixJob, id, "")
	// the row is outside the key-spec: the caller's ACL first (a denial is
	// the row read's refusal, in its place after the fence)
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate, [][]byte{row})
	if err != nil {
		return err
	}
	// fence and domain reads, one batch: GET version, HMGET row att max bo
	// lane parent onfail wait,
	// ZSCORE active id, ZCARD delayed, ZCARD dead (the types of the sets
	// written), HMGET stats failed retried dead (the counters predicted)
	s := &st.seen
	*s = verdict.FailSeen{}
	again := string(retry) == "1"
	step := verdict.Fail(token, again, s)
	for ran := verdict.FailNone; step.Need != verdict.FailNone && step.Need != ran; step = verdict.Fail(token, again, s) {
		ran = step.Need
		switch step.Need {
		case verdict.FailAll:
			b := r.fenced()
			if deny < 0 {
				b.Cmd(host.HMGET).Arg(row).Str(protocol.FieldAttempts).Str(protocol.FieldMax).Str(protocol.FieldBackoff).Str(protocol.FieldLane).
					Str(protocol.FieldParent).Str(protocol.FieldOnFail).Str(protocol.FieldWait).Str(protocol.FieldEvents)
			}
			res := b.Cmd(host.ZSCORE).Arg(active).Arg(id).
				Cmd(host.ZCARD).Arg(delayed).
				Cmd(host.ZCARD).Arg(dead).
				Cmd(host.HMGET).Arg(stats).Str(statFailed).Str(statRetried).Str(statDead).
				RunAll()
			s.Version = st.keep(fieldAt(res, 0))
			i := 1
			if deny < 0 {
				s.Row = verdict.Reply[[7]verdict.Field]{Made: true}
				s.Row.Err = fieldsEvAt(res, 1, s.Row.Val[:], &st.ev)
				for k := range s.Row.Val {
					s.Row.Val[k].Bytes = st.copy(s.Row.Val[k].Bytes)
				}
				st.ev.Bytes = st.copy(st.ev.Bytes)
				i++
			} else {
				s.Row = denied[[7]verdict.Field]()
			}
			s.Score, s.Delayed, s.Dead = st.keep(fieldAt(res, i)), intAt(res, i+1), intAt(res, i+2)
			s.Counters = verdict.Reply[[3]verdict.Field]{Made: true}
			s.Counters.Err = fieldsAt(res, i+3, s.Counters.Val[:])
			for k := range s.Counters.Val {
				s.Counters.Val[k].Bytes = st.copy(s.Counters.Val[k].Bytes)
			}
		case verdict.FailCancelled:
			// not active: was it cancelled? (the row is read as a hash already)
			s.Cancelled = fieldAt(c.Read().Cmd(host.HGET).Arg(row).Str(protocol.FieldCancelled).RunAll(), 0)
		case verdict.FailFlow:
			st.flow.finish(id, verdict.FinishDied, text, step.Parent, step.Policy, step.Verdict.Wait)
			refusal, err := st.flow.read(&r)
			if err != nil {
				return err
			}
			s.Flow = verdict.Reply[struct{}]{Made: true, Err: refusal}
		case verdict.FailLanes:
			// the job's lane: one active job less; the parents released to
			// a lane
			if step.Lane != nil {
				st.lanes.add(r.base, step.Lane, 0, -1)
			}
			st.flow.lanes(&st.lanes, r.base)
			lanes, err := st.lanes.readReply(&r)
			if err != nil {
				return err
			}
			s.Lanes = lanes
		case verdict.FailFlowTypes:
			refusal, err := st.flow.types(&r, stats, 1)
			if err != nil {
				return err
			}
			s.FlowTypes = verdict.Reply[struct{}]{Made: true, Err: refusal}
		}
	}
	if step.Err != nil || step.Need != verdict.FailNone {
		return orInternal(step.Err)
	}
	v := step.Verdict
	if v.Gone {
		c.ReplyInt(0)
		return nil
	}
	// the job's event (retrying or dead), its released parents', then the
	// stream
	name := protocol.EventDead
	if v.Retry {
		name = protocol.EventRetrying
	}
	st.events.add(st.ev, name, id, protocol.EventErrorField, text)
	st.flow.publish(&st.events)
	if err := st.events.check(&r); err != nil {
		return err
	}
	// guard, then the writes: ZREM active; HSET row state err; ZADD delayed
	// <due> or dead <now> (absolute times, as values); one HSET stats failed
	// <failed+1> <retried|dead> <its count+1>, the predicted counters, in
	// place of the Lua's two HINCRBYs (fields present are updated where they
	// stand, absent ones appended in the same order)
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if err := st.events.publish(c, w); err != nil {
		return err
	}
	state, set, score, outcome, reply := protocol.StateDead, dead, r.now, statDead, protocol.FailDead
	counter := s.Counters.Val[2]
	if v.Retry {
		state, set, score, outcome, reply = protocol.StateDelayed, delayed, r.now+v.Delay, statRetried, protocol.FailRetry
		counter = s.Counters.Val[1]
	}
	b := w.Write().
		Cmd("ZREM").Arg(active).Arg(id).
		Cmd("HSET").Arg(row).Str(protocol.FieldState).Str(state).Str(protocol.FieldError).Argv(r.argv(3)).
		Cmd("ZADD").Arg(set).Int(score).Arg(id).
		Cmd("HSET").Arg(stats).Str(statFailed).Int(v.Failed).Str(outcome).Int(v.Outcome)
	st.flow.writes(b, r.now, stats, &st.lanes)
	st.lanes.writes(b)
	st.flow.outcomes(b)
	st.flow.signals(b, &st.lanes)
	res, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	// HSET answers the number of fields it created: the counters read absent
	if err := created(c, res, 3, absent(s.Counters.Val[0], counter)); err != nil {
		return err
	}
	c.ReplyString(reply)
	return nil
}

// failState is FAIL's scratch between commands.
type failState struct {
	scratch
	seen  verdict.FailSeen
	lanes laneAcct
	flow  flowAcct
	// ev is the row's ev; events the call's job events.
	ev     verdict.Field
	events jobEvents
}

var fails pool[failState]
