package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// recoverExpired is EMQ.RECOVER (internal/lua/recover.lua): take back up to limit jobs
// whose lease expired, to pending while attempts remain, else to dead.
// Crossings: the command, one read batch (the fence and the expired leases);
// with leases to take back, the rows' ACL check, one read batch (the rows and
// the types), the guard, one write batch.
func recoverExpired(c *host.Call) error {
	// shape and layout: numkeys 7 (base version stats pending active dead
	// signal), ARGV limit
	r, err := prelude(c, protocol.Recover, exactly(1))
	if err != nil {
		return err
	}
	// values: limit
	limit, ok := grammar.Decimal(r.args[0], 1, protocol.MaxCount)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Recover.Name, "limit"))
	}
	st := recovers.get()
	defer recovers.put(st)
	st.reset()
	st.lanes.reset(&st.scratch)
	st.flow.reset(&st.scratch)
	s := &st.seen
	*s = verdict.RecoverSeen{Rows: s.Rows, Moves: s.Moves}
	// fence and domain reads, driven by the verdict
	step, err := drive(func() verdict.RecoverStep { return verdict.Recover(r.now, s) },
		func(step verdict.RecoverStep) error { return st.read(&r, limit, step) })
	if err != nil {
		return err
	}
	v := step.Verdict
	if v.Moves == nil {
		c.ReplyArray(2)
		c.ReplyInt(0)
		c.ReplyInt(0)
		return nil
	}
	if err := st.write(&r, v); err != nil {
		return err
	}
	c.ReplyArray(2)
	c.ReplyInt(v.Requeued)
	c.ReplyInt(v.Died)
	return nil
}

// read performs the read step needs (drive).
func (st *recoverState) read(r *verbCall, limit int64, step verdict.RecoverStep) error {
	s := &st.seen
	stats := r.keys[2]
	var err error
	switch step.Need {
	case verdict.RecoverFirst:
		// GET version, then the leases whose deadline is before now
		res := r.fenced().
			Cmd(host.ZRANGEBYSCORE).Arg(r.keys[4]).Str("-inf").Arg(st.below(r.now)).Str("LIMIT").Str("0").Int(limit).
			RunAll()
		s.Version = st.keep(fieldAt(res, 0))
		s.Expired = listAt(res, 1, &st.scratch, st.ids)
		st.ids = s.Expired.Val
	case verdict.RecoverRows:
		return st.readRows(r, stats, r.keys[3], r.keys[5], r.keys[6])
	case verdict.RecoverFlow:
		// each job that dies, in order: its outcome, its parent
		for i, mv := range step.Verdict.Moves {
			if mv.To != verdict.ToDead {
				continue
			}
			f := s.Rows[i].Val
			st.flow.finish(s.Expired.Val[i], verdict.FinishDied, []byte(protocol.LeaseExpired), verdict.ChildParent(f[4]), f[5], verdict.WaitField(f[6]))
		}
		refusal, err := st.flow.read(r)
		s.Flow = verdict.Reply[struct{}]{Made: true, Err: refusal}
		return err
	case verdict.RecoverFlowTypes:
		s.FlowTypes, err = st.flow.readTypes(r, stats, step.Verdict.Died)
	case verdict.RecoverLanes:
		// the jobs' lanes, in order: one active job less each, one
		// waiting job more for each requeued
		st.laneOf = grow(st.laneOf, len(step.Verdict.Moves))
		st.lanes.addMoves(r.base, step.Verdict.Moves, 1, -1, st.laneOf)
		st.flow.lanes(&st.lanes, r.base)
		s.Lanes, err = st.lanes.readReply(r)
	}
	return err
}

// write is RECOVER's writes, with leases taken back: the jobs' events
// (recovered or dead), in ZRANGEBYSCORE order, then the released parents',
// then the stream; the guard, then ZREM active <all expired>; per job HSET
// row state (and err for the dead); one ZADD pending and one ZADD dead for
// all the jobs going there, where the Lua writes one per job (the scores
// and the time of death travel as values); the counters (counterWrites);
// the accountings'; the signal.
func (st *recoverState) write(r *verbCall, v verdict.RecoverVerdict) error {
	c, s := r.c, &st.seen
	st.events.reset()
	for i, mv := range v.Moves {
		if i >= len(st.evs) {
			break
		}
		switch mv.To {
		case verdict.ToPending, verdict.ToLane:
			st.events.add(st.evs[i], protocol.EventRecovered, s.Expired.Val[i], "", nil)
		case verdict.ToDead:
			st.events.add(st.evs[i], protocol.EventDead, s.Expired.Val[i], protocol.EventErrorField, leaseExpired)
		}
	}
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
	ids := s.Expired.Val
	b := w.Write().Cmd("ZREM").Arg(r.keys[4])
	for _, id := range ids {
		b.Arg(id)
	}
	for i, mv := range v.Moves {
		switch mv.To {
		case verdict.ToPending, verdict.ToLane:
			b.Cmd("HSET").Arg(st.rowOf[i]).Str(protocol.FieldState).Str(protocol.StatePending)
		case verdict.ToDead:
			b.Cmd("HSET").Arg(st.rowOf[i]).Str(protocol.FieldState).Str(protocol.StateDead).Str(protocol.FieldError).Str(protocol.LeaseExpired)
		}
	}
	counters := 1 + int(v.Requeued+v.Died) // the counters' index in the batch
	if zaddMoves(b, r.keys[3], verdict.ToPending, v.Moves, ids) {
		counters++
	}
	if zaddMoves(b, r.keys[5], verdict.ToDead, v.Moves, ids) {
		counters++
	}
	if st.lanes.len() > 0 {
		counters += st.lanes.zaddLanes(b, v.Moves, ids, st.laneOf, &st.order)
	}
	st.counterWrites(b, r.keys[2], v)
	st.flow.writes(b, r.now, r.keys[2], &st.lanes)
	st.lanes.writes(b)
	st.flow.outcomes(b)
	if v.Signal || st.lanes.wakes() || st.flow.released() {
		signalPush(b, r.keys[6], s.Signal.Val)
	}
	res, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	if err := removedAll(c, res, 0, len(ids)); err != nil {
		return err
	}
	return st.checkCounters(c, res, counters, v)
}

// counterWrites adds the counters' write: HINCRBY stats recovered or dead
// when one grows, and when both do one HSET of both predicted values in
// place of the Lua's two HINCRBYs.
func (st *recoverState) counterWrites(b *host.Batch, stats []byte, v verdict.RecoverVerdict) {
	switch {
	case v.Requeued > 0 && v.Died > 0:
		b.Cmd("HSET").Arg(stats).Str(statRecovered).Int(v.Recovered).Str(statDead).Int(v.Dead)
	case v.Requeued > 0:
		b.Cmd("HINCRBY").Arg(stats).Str(statRecovered).Int(v.Requeued)
	case v.Died > 0:
		b.Cmd("HINCRBY").Arg(stats).Str(statDead).Int(v.Died)
	}
}

// checkCounters checks the counters' write, the i-th reply of res, against
// its prediction.
func (st *recoverState) checkCounters(c *host.Call, res host.Results, i int, v verdict.RecoverVerdict) error {
	switch {
	case v.Requeued > 0 && v.Died > 0:
		return created(c, res, i, absent(st.seen.Counters.Val[0], st.seen.Counters.Val[1]))
	case v.Requeued > 0:
		return predicted(c, res, i, v.Recovered)
	case v.Died > 0:
		return predicted(c, res, i, v.Dead)
	}
	return nil
}

// readRows is RECOVER's second read: the rows of the expired members that
// are ids, checked against the caller's ACL first (read, then written), then
// in one batch HMGET row att max prio lane parent onfail wait for each, ZCARD pending, ZCARD dead,
// LLEN signal and HMGET stats recovered dead. A denied row is its read's
// refusal; the rows after it are not read.
func (st *recoverState) readRows(r *verbCall, stats, pending, dead, signal []byte) error {
	s := &st.seen
	ids := s.Expired.Val
	nrows, err := st.check(r, &st.scratch, ids)
	if err != nil {
		return err
	}
	b := r.c.Read()
	for _, row := range st.rows[:nrows] {
		b.Cmd(host.HMGET).Arg(row).Str(protocol.FieldAttempts).Str(protocol.FieldMax).Str(protocol.FieldPriority).Str(protocol.FieldLane).
			Str(protocol.FieldParent).Str(protocol.FieldOnFail).Str(protocol.FieldWait).Str(protocol.FieldEvents)
	}
	res := b.Cmd(host.ZCARD).Arg(pending).
		Cmd(host.ZCARD).Arg(dead).
		Cmd(host.LLEN).Arg(signal).
		Cmd(host.HMGET).Arg(stats).Str(statRecovered).Str(statDead).
		RunAll()
	s.Rows = grow(s.Rows, len(ids))
	st.fields = grow(st.fields, recoverRowWidth*len(ids)+2)
	st.evs = grow(st.evs, len(ids))
	st.place(res, ids, nrows, recoverRowWidth, st.fields, s.Rows, st.evs)
	s.Pending, s.Dead, s.Signal = intAt(res, nrows), intAt(res, nrows+1), intAt(res, nrows+2)
	f := st.fields[recoverRowWidth*len(ids):]
	s.Counters = verdict.Reply[[]verdict.Field]{Made: true, Val: f, Err: fieldsAt(res, nrows+3, f)}
	// kept: the lanes' batch may come before the verdict's last look
	for i := range st.fields {
		st.fields[i].Bytes = st.copy(st.fields[i].Bytes)
	}
	for i := range st.evs {
		st.evs[i].Bytes = st.copy(st.evs[i].Bytes)
	}
	return nil
}

// recoverState is RECOVER's scratch between commands.
type recoverState struct {
	scratch
	seen verdict.RecoverSeen
	ids  [][]byte // the expired members, copied
	memberRows
	fields []verdict.Field // four per member, then the two counters
	// lanes is the lane accounting of the jobs' lanes; laneOf each member's
	// lane index in it (-1: none); order scratch for the lanes' ZADDs.
	lanes  laneAcct
	laneOf []int
	order  []int
	flow   flowAcct
	// evs are the rows' ev fields; events the call's job events.
	evs    []verdict.Field
	events jobEvents
}

// recoverRowWidth is the fields of RECOVER's row read: att max prio lane
// parent onfail wait.
const recoverRowWidth = 7

var recovers pool[recoverState]
