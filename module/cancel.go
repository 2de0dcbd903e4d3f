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
	// values: the id
	if !grammar.ID(r.args[0]) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Cancel.Name, "id"))
	}
	st := cancels.get()
	defer cancels.put(st)
	if err := st.start(&r); err != nil {
		return err
	}
	s := &st.seen
	step, err := drive(func() verdict.CancelStep { return verdict.Cancel(s) },
		func(step verdict.CancelStep) error { return st.read(&r, step) })
	if err != nil {
		return err
	}
	v := step.Verdict
	return goneOrWritten(c, v.Gone, func() error { return st.write(&r, v) })
}

// start readies the state for a call and checks the row against the
// caller's ACL first (jobCall.start).
func (st *cancelState) start(r *verbCall) error {
	err := st.jobCall.start(r)
	st.flow.reset(&st.scratch)
	st.lane = -1
	st.seen = verdict.CancelSeen{}
	return err
}

// read performs the read step needs (drive).
func (st *cancelState) read(r *verbCall, step verdict.CancelStep) error {
	s := &st.seen
	var err error
	switch step.Need {
	case verdict.CancelFirst:
		st.readFirst(r)
	case verdict.CancelFlow:
		// its outcome dcancelled, and its parent told of a death
		s.Flow, err = st.flow.readDied(r, r.args[0], cancelledText, step.Parent, step.Policy, step.Verdict.Wait)
	case verdict.CancelLanes:
		// the job's lane: one waiting or active job less; the parents
		// released to a lane
		st.lane, s.Lanes, err = st.flow.readLanes(r, &st.lanes, step.Lane, step.DW, step.DA)
	case verdict.CancelFlowTypes:
		s.FlowTypes, err = st.flow.readTypes(r, r.keys[2], 0)
	}
	return err
}

// readFirst is the first batch: GET version, HMGET row att state lane
// parent onfail wait ev, ZCARD pending, delayed, active and dead, HGET stats
// cancelled: the verdict takes the ones it needs, in its order.
func (st *cancelState) readFirst(r *verbCall) {
	s := &st.seen
	b := r.fenced()
	if st.deny < 0 {
		b.Cmd(host.HMGET).Arg(st.row).Str(protocol.FieldAttempts).Str(protocol.FieldState).Str(protocol.FieldLane).
			Str(protocol.FieldParent).Str(protocol.FieldOnFail).Str(protocol.FieldWait).Str(protocol.FieldEvents)
	}
	for _, set := range r.keys[3:6] {
		b.Cmd(host.ZCARD).Arg(set)
	}
	res := b.Cmd(host.ZCARD).Arg(r.keys[6]).Cmd(host.HGET).Arg(r.keys[2]).Str(protocol.StatCancelled).RunAll()
	s.Version = st.keep(fieldAt(res, 0))
	i := 1
	if st.deny < 0 {
		s.Row = verdict.Reply[[6]verdict.Field]{Made: true}
		s.Row.Err = st.rowAt(res, 1, s.Row.Val[:])
		i++
	} else {
		s.Row = denied[[6]verdict.Field]()
	}
	for k := range s.Sets {
		s.Sets[k] = intAt(res, i+k)
	}
	s.Counter = st.keep(fieldAt(res, i+4))
}

// write is CANCEL's writes: the job's cancelled event, its released
// parents', then the stream; the guard, then ZREM from its set; HSET row
// state dead err cancelled cancelled 1; ZADD dead <now>; HINCRBY stats
// cancelled (predicted); the accountings'; for an active job, SPUBLISH
// cancels "<id> <att>" when the caller's ACL allows it.
func (st *cancelState) write(r *verbCall, v verdict.CancelVerdict) error {
	c, id, stats := r.c, r.args[0], r.keys[2]
	st.events.add(st.ev, protocol.EventCancelled, id, protocol.EventStateField, []byte(v.From))
	st.flow.publish(&st.events)
	if err := st.events.check(r); err != nil {
		return err
	}
	// the notice to the worker holding an active job: left out, not
	// refused, when the caller may not publish it (the worker's heartbeat
	// learns it then)
	var channel, notice []byte
	if v.Notice {
		channel = st.derived(r.base, protocol.ChannelCancels, nil, "")
		notice = st.derived(id, " ", st.seen.Row.Val[0].Bytes, "")
		if !c.MayCall(spublish, channel, notice) {
			channel = nil
		}
	}
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if err := st.events.publish(c, w); err != nil {
		return err
	}
	var set []byte
	if v.Set >= 0 {
		set = r.keys[3+v.Set]
	} else {
		set = st.lanes.keys[st.lane] // a pending job's lane
	}
	b := w.Write()
	endWrites(b, jobEnd{from: set, to: r.keys[6], row: st.row, id: id, score: r.now, state: protocol.StateDead, errArg: -1})
	b.Cmd("HINCRBY").Arg(stats).Str(protocol.StatCancelled).Int(1)
	accountWrites(b, r.now, stats, &st.flow, &st.lanes)
	if channel != nil {
		b.Cmd("SPUBLISH").Arg(channel).Arg(notice)
	}
	res, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	return predicted(c, res, 3, v.Cancelled)
}

// jobEnd is a job that leaves its set for the dead or the delayed set
// (CANCEL, FAIL), as endWrites writes it.
type jobEnd struct {
	// from is the set it leaves, to the set it joins with score.
	from, to []byte
	score    int64
	row, id  []byte
	state    string
	// errArg is the index of its error text among the command's
	// arguments, -1 for a cancelled job (err cancelled, cancelled 1).
	errArg int
}

// endWrites adds the writes of a job that ends its stay in a set, CANCEL's
// and FAIL's alike: ZREM <from> <id>; HSET row state <state> err <text>
// (cancelled 1 for a cancelled job); ZADD <to> <score> <id>.
func endWrites(b *host.Batch, e jobEnd) {
	b.Cmd("ZREM").Arg(e.from).Arg(e.id).
		Cmd("HSET").Arg(e.row).Str(protocol.FieldState).Str(e.state).Str(protocol.FieldError)
	if e.errArg < 0 {
		b.Str(protocol.ErrTextCancelled).Str(protocol.FieldCancelled).Str("1")
	} else {
		b.Argv(e.errArg)
	}
	b.Cmd("ZADD").Arg(e.to).Int(e.score).Arg(e.id)
}

// spublish is the command of CANCEL's notice, for the caller's ACL check.
var spublish = []byte("SPUBLISH")

// cancelledText is the error a cancelled job's parent and waiters are told.
var cancelledText = []byte(protocol.ErrTextCancelled)

// cancelState is CANCEL's scratch between commands.
type cancelState struct {
	jobCall
	seen verdict.CancelSeen
	flow flowAcct
	// lane is the job's lane's index in the accounting, when it has one.
	lane int
}

var cancels pool[cancelState]
