package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// retry is EMQ.RETRY (internal/lua/retry.lua): move one delayed job to pending now.
// Crossings: the command, the row's ACL check, one read batch (the fence,
// the row, its due time, pending and signal); for a job with a lane, the
// lane accounting; the guard and one write batch.
func retry(c *host.Call) error {
	// shape and layout: numkeys 5 (base version pending delayed signal),
	// ARGV id
	r, err := prelude(c, protocol.Retry, exactly(1))
	if err != nil {
		return err
	}
	// values: the id
	n, ok := grammar.Decimal(r.args[0], 1, protocol.MaxJobID)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Retry.Name, "id"))
	}
	st := retries.get()
	defer retries.put(st)
	// the row is outside the key-spec: the caller's ACL first (read, then
	// written)
	if err := st.start(&r); err != nil {
		return err
	}
	s := &st.seen
	*s = verdict.RetrySeen{}
	step, err := drive(func() verdict.RetryStep { return verdict.Retry(n, s) },
		func(step verdict.RetryStep) error { return st.read(&r, step) })
	if err != nil {
		return err
	}
	v := step.Verdict
	return goneOrWritten(c, v.Gone, func() error { return st.write(&r, v) })
}

// read performs the read step needs (drive).
func (st *retryState) read(r *verbCall, step verdict.RetryStep) error {
	s := &st.seen
	var err error
	switch step.Need {
	case verdict.RetryFirst:
		st.readFirst(r)
	case verdict.RetryLanes:
		// the job's lane: one waiting job more
		st.lanes.add(r.base, step.Lane, 1, 0)
		s.Lanes, err = st.lanes.readReply(r)
	}
	return err
}

// readFirst is GET version, HMGET row att state prio lane ev, ZSCORE
// delayed id, ZCARD pending (also the signal's condition), LLEN signal; the
// verdict takes them in this order.
func (st *retryState) readFirst(r *verbCall) {
	s := &st.seen
	b := r.fenced()
	if st.deny < 0 {
		b.Cmd(host.HMGET).Arg(st.row).Str(protocol.FieldAttempts).Str(protocol.FieldState).Str(protocol.FieldPriority).Str(protocol.FieldLane).Str(protocol.FieldEvents)
	}
	res := b.Cmd(host.ZSCORE).Arg(r.keys[3]).Arg(r.args[0]).
		Cmd(host.ZCARD).Arg(r.keys[2]).
		Cmd(host.LLEN).Arg(r.keys[4]).
		RunAll()
	s.Version = st.keep(fieldAt(res, 0))
	k := 1
	if st.deny < 0 {
		f := st.fields[:]
		s.Row = verdict.Reply[[]verdict.Field]{Made: true, Val: f, Err: st.rowAt(res, 1, f)}
		k = 2
	} else {
		s.Row = denied[[]verdict.Field]()
	}
	s.Due = fieldAt(res, k)
	s.Pending, s.Signal = intAt(res, k+1), intAt(res, k+2)
}

// write is RETRY's writes: the job's promoted event, then the stream; the
// guard, then the writes in the Lua's order (backWrites): the event, ZREM
// delayed, HSET row state pending, ZADD pending (or the lane's set), the
// lane accounting, the signal.
func (st *retryState) write(r *verbCall, v verdict.RetryVerdict) error {
	c := r.c
	st.events.add(st.ev, protocol.EventPromoted, r.args[0], "", nil)
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
	if v.Lane != nil {
		set = st.lanes.keys[0]
	}
	b := w.Write()
	backWrites(b, r.args[0], jobBack{from: r.keys[3], row: st.row, set: set, score: v.Score, signal: v.Signal, sig: r.keys[4], held: st.seen.Signal.Val}, &st.lanes)
	res, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	return removedAll(c, res, 0, 1)
}

// retryState is RETRY's scratch between commands.
type retryState struct {
	jobCall
	seen   verdict.RetrySeen
	fields [4]verdict.Field
}

var retries pool[retryState]
