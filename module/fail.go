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
	if err := st.start(&r); err != nil {
		return err
	}
	s := &st.seen
	again := string(retry) == "1"
	step, err := drive(func() verdict.FailStep { return verdict.Fail(token, again, s) },
		func(step verdict.FailStep) error { return st.read(&r, step) })
	if err != nil {
		return err
	}
	v := step.Verdict
	if v.Gone {
		c.ReplyInt(0)
		return nil
	}
	return st.write(&r, v)
}

// start readies the state for a call and checks the row against the
// caller's ACL first (jobCall.start).
func (st *failState) start(r *verbCall) error {
	err := st.jobCall.start(r)
	st.flow.reset(&st.scratch)
	st.seen = verdict.FailSeen{}
	return err
}

// read performs the read step needs (drive).
func (st *failState) read(r *verbCall, step verdict.FailStep) error {
	s := &st.seen
	var err error
	switch step.Need {
	case verdict.FailAll:
		st.readAll(r)
	case verdict.FailCancelled:
		// not active: was it cancelled? (the row is read as a hash already)
		s.Cancelled = fieldAt(r.c.Read().Cmd(host.HGET).Arg(st.row).Str(protocol.FieldCancelled).RunAll(), 0)
	case verdict.FailFlow:
		s.Flow, err = st.flow.readDied(r, r.args[0], r.args[3], step.Parent, step.Policy, step.Verdict.Wait)
	case verdict.FailLanes:
		// the job's lane: one active job less; the parents released to
		// a lane
		_, s.Lanes, err = st.flow.readLanes(r, &st.lanes, step.Lane, 0, -1)
	case verdict.FailFlowTypes:
		s.FlowTypes, err = st.flow.readTypes(r, r.keys[2], 1)
	}
	return err
}

// readAll is the fence and the domain reads, one batch: GET version, HMGET
// row att max bo lane parent onfail wait, ZSCORE active id, ZCARD delayed,
// ZCARD dead (the types of the sets written), HMGET stats failed retried
// dead (the counters predicted).
func (st *failState) readAll(r *verbCall) {
	s := &st.seen
	b := r.fenced()
	if st.deny < 0 {
		b.Cmd(host.HMGET).Arg(st.row).Str(protocol.FieldAttempts).Str(protocol.FieldMax).Str(protocol.FieldBackoff).Str(protocol.FieldLane).
			Str(protocol.FieldParent).Str(protocol.FieldOnFail).Str(protocol.FieldWait).Str(protocol.FieldEvents)
	}
	res := b.Cmd(host.ZSCORE).Arg(r.keys[3]).Arg(r.args[0]).
		Cmd(host.ZCARD).Arg(r.keys[4]).
		Cmd(host.ZCARD).Arg(r.keys[5]).
		Cmd(host.HMGET).Arg(r.keys[2]).Str(statFailed).Str(statRetried).Str(statDead).
		RunAll()
	s.Version = st.keep(fieldAt(res, 0))
	i := 1
	if st.deny < 0 {
		s.Row = verdict.Reply[[7]verdict.Field]{Made: true}
		s.Row.Err = st.rowAt(res, 1, s.Row.Val[:])
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
}

// write is FAIL's writes and reply: the job's event (retrying or dead), its
// released parents', then the stream; the guard, then ZREM active; HSET row
// state err; ZADD delayed <due> or dead <now> (absolute times, as values);
// one HSET stats failed <failed+1> <retried|dead> <its count+1>, the
// predicted counters, in place of the Lua's two HINCRBYs (fields present are
// updated where they stand, absent ones appended in the same order); the
// accountings'.
func (st *failState) write(r *verbCall, v verdict.FailVerdict) error {
	c, s, id, stats := r.c, &st.seen, r.args[0], r.keys[2]
	name := protocol.EventDead
	if v.Retry {
		name = protocol.EventRetrying
	}
	st.events.add(st.ev, name, id, protocol.EventErrorField, r.args[3])
	st.flow.publish(&st.events)
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
	e := jobEnd{from: r.keys[3], to: r.keys[5], score: r.now, row: st.row, id: id, state: protocol.StateDead, errArg: r.argv(3)}
	outcome, reply, counter := statDead, protocol.FailDead, s.Counters.Val[2]
	if v.Retry {
		e.to, e.score, e.state = r.keys[4], r.now+v.Delay, protocol.StateDelayed
		outcome, reply, counter = statRetried, protocol.FailRetry, s.Counters.Val[1]
	}
	b := w.Write()
	endWrites(b, e)
	b.Cmd("HSET").Arg(stats).Str(statFailed).Int(v.Failed).Str(outcome).Int(v.Outcome)
	accountWrites(b, r.now, stats, &st.flow, &st.lanes)
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
	jobCall
	seen verdict.FailSeen
	flow flowAcct
}

var fails pool[failState]
