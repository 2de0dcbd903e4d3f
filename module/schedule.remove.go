package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// scheduleRemove is EMQ.SCHEDULE.REMOVE: delete a schedule (the jobs it
// enqueued stay). Crossings: the command, one read batch (the fence,
// HEXISTS schedules s:<id>, the types of scheddue and schedids), the
// guard, one write batch.
func scheduleRemove(c *host.Call) error {
	// shape and layout: numkeys 5 (base version schedules scheddue
	// schedids), ARGV id
	r, err := prelude(c, protocol.ScheduleRemove, exactly(1))
	if err != nil {
		return err
	}
	schedules, due, ids := r.keys[2], r.keys[3], r.keys[4]
	id := r.args[0]
	if err := scheduleID(protocol.ScheduleRemove, id); err != nil {
		return err
	}
	st := scheds.get()
	defer scheds.put(st)
	st.reset()
	dField, sField := st.fieldName(protocol.ScheduleDefField, id), st.fieldName(protocol.ScheduleStateField, id)
	res := r.fenced().
		Cmd(host.HEXISTS).Arg(schedules).Arg(sField).
		Cmd(host.ZCARD).Arg(due).
		Cmd(host.ZCARD).Arg(ids).
		RunAll()
	seen := verdict.ScheduleRemoveSeen{Version: fieldAt(res, 0), Exists: intAt(res, 1), Due: intAt(res, 2), IDs: intAt(res, 3)}
	existed, err := verdict.ScheduleRemove(&seen)
	if err != nil {
		return err
	}
	// the writes, always: a member left without its fields goes too
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if _, err := w.Write().
		Cmd("HDEL").Arg(schedules).Arg(dField).Arg(sField).
		Cmd("ZREM").Arg(due).Arg(id).
		Cmd("ZREM").Arg(ids).Arg(id).
		Run(); err != nil {
		return wrote(c, err)
	}
	c.ReplyInt(existed)
	return nil
}
