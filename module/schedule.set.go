package main

import (
	"strconv"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// scheduleSet is EMQ.SCHEDULE.SET: create or replace a schedule.
// Crossings: the command, one read batch (the fence, HMGET schedules
// d:<id> s:<id>, the types of scheddue and schedids), the guard, one write
// batch.
func scheduleSet(c *host.Call) error {
	// shape and layout: numkeys 5 (base version schedules scheddue
	// schedids), ARGV 18 + 2k
	r, err := prelude(c, protocol.ScheduleSet, shapedBy(func(args [][]byte) (int, error) {
		return 0, verdict.ScheduleSetArity(args)
	}))
	if err != nil {
		return err
	}
	schedules, due, ids := r.keys[2], r.keys[3], r.keys[4]
	// values: the id, then the definition's
	id := r.args[0]
	if err := scheduleID(protocol.ScheduleSet, id); err != nil {
		return err
	}
	if _, err := verdict.ScheduleValues(protocol.ScheduleSet.Name, r.args[1:]); err != nil {
		return err
	}
	st := scheds.get()
	defer scheds.put(st)
	st.reset()
	dField, sField := st.fieldName(protocol.ScheduleDefField, id), st.fieldName(protocol.ScheduleStateField, id)
	// fence and domain reads, one batch; types
	res := r.fenced().
		Cmd(host.HMGET).Arg(schedules).Arg(dField).Arg(sField).
		Cmd(host.ZCARD).Arg(due).
		Cmd(host.ZCARD).Arg(ids).
		RunAll()
	seen := verdict.ScheduleSetSeen{Version: fieldAt(res, 0), Fields: pair2At(res, 1), Due: intAt(res, 2), IDs: intAt(res, 3)}
	state, err := verdict.ScheduleSet(&seen, r.now)
	if err != nil {
		return err
	}
	// the definition: SET's ARGV after the id, encoded as a list
	def := st.out[:0]
	for _, e := range r.args[1:] {
		def = strconv.AppendInt(def, int64(len(e)), 10)
		def = append(def, ':')
		def = append(def, e...)
	}
	n := len(def)
	st.out = verdict.AppendState(def, state)
	def, stateBytes := st.out[:n], st.out[n:]
	// guard, then the writes
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	b := w.Write().
		Cmd("HSET").Arg(schedules).Arg(dField).Arg(def).Arg(sField).Arg(stateBytes).
		Cmd("ZADD").Arg(ids).Str("0").Arg(id)
	if !state.Paused {
		b.Cmd("ZADD").Arg(due).Int(r.now).Arg(id)
	}
	if _, err := b.Run(); err != nil {
		return wrote(c, err)
	}
	c.ReplyInt(state.Rev)
	return nil
}
