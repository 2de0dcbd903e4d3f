package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// The schedule verbs (docs/PROTOCOL.md, "Schedules"; internal/lua/schedule.*.lua).
// Every key they touch is declared but for SCHEDULE.FIRE's jobs, which go
// through ADD's path (add.go).

// schedState is the schedule verbs' scratch between commands.
type schedState struct {
	scratch
	ids   [][]byte
	elems [][]byte
	args  [][]byte
	fire  verdict.FireArgs
	sat   [][]byte
	// out is the definition or state a write carries; fields the page's
	// fields (LIST, DUE).
	out    []byte
	fields []verdict.Field
}

var scheds pool[schedState]

// fieldName appends prefix + id (d:<id>, s:<id>) to the scratch.
func (st *schedState) fieldName(prefix string, id []byte) []byte {
	return st.derived(nil, prefix, id, "")
}

// pair2At is an HMGET of two fields as a verdict reply.
func pair2At(res host.Results, i int) verdict.Reply[[2]verdict.Field] {
	r := verdict.Reply[[2]verdict.Field]{Made: true}
	r.Err = fieldsAt(res, i, r.Val[:])
	return r
}

// scheduleID checks ARGV[1], the schedule id, of verb v.
func scheduleID(v *protocol.Verb, id []byte) error {
	if !verdict.ScheduleID(id) {
		return grammar.Refusal(protocol.ErrBadArg(v.Name, "id"))
	}
	return nil
}

// schedulePauseResume is SCHEDULE.PAUSE or SCHEDULE.RESUME, decided by
// the verb's verdict at the server's time (verdict.SchedulePause,
// verdict.ScheduleResume): a paused state leaves scheddue, a running one
// is due now. Crossings: the command, one read batch (the fence, HGET schedules
// s:<id>, the type of scheddue); with a change, the guard and one write
// batch.
func schedulePauseResume(c *host.Call, v *protocol.Verb, decide func(*verdict.SchedulePauseSeen, int64) (verdict.State, bool, error)) error {
	// shape and layout: numkeys 4 (base version schedules scheddue), ARGV id
	r, err := prelude(c, v, exactly(1))
	if err != nil {
		return err
	}
	schedules, due := r.keys[2], r.keys[3]
	id := r.args[0]
	if err := scheduleID(v, id); err != nil {
		return err
	}
	st := scheds.get()
	defer scheds.put(st)
	st.reset()
	sField := st.fieldName(protocol.ScheduleStateField, id)
	res := r.fenced().
		Cmd(host.HGET).Arg(schedules).Arg(sField).
		Cmd(host.ZCARD).Arg(due).
		RunAll()
	seen := verdict.SchedulePauseSeen{Version: fieldAt(res, 0), State: fieldAt(res, 1), Due: intAt(res, 2)}
	state, change, err := decide(&seen, r.now)
	if err != nil {
		return err
	}
	if !change {
		c.ReplyInt(0)
		return nil
	}
	st.out = verdict.AppendState(st.out[:0], state)
	stateBytes := st.out
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	b := w.Write().Cmd("HSET").Arg(schedules).Arg(sField).Arg(stateBytes)
	if state.Paused {
		b.Cmd("ZREM").Arg(due).Arg(id)
	} else {
		b.Cmd("ZADD").Arg(due).Int(r.now).Arg(id)
	}
	if _, err := b.Run(); err != nil {
		return wrote(c, err)
	}
	c.ReplyInt(1)
	return nil
}

// replyEntries reads HMGET schedules d:<id> s:<id> … of st.ids in one call
// and replies one [id, definition, state] per id, after the array's head
// items (DUE's now) when head is not nil.
func (st *schedState) replyEntries(r *verbCall, schedules []byte, head func()) error {
	c := r.c
	extra := 0
	if head != nil {
		extra = 1
	}
	if len(st.ids) == 0 {
		c.ReplyArray(extra)
		if head != nil {
			head()
		}
		return nil
	}
	b := c.Read().Cmd(host.HMGET).Arg(schedules)
	for _, id := range st.ids {
		b.Arg(st.fieldName(protocol.ScheduleDefField, id)).Arg(st.fieldName(protocol.ScheduleStateField, id))
	}
	res := b.RunAll()
	v, err := res.At(0)
	if err != nil {
		return err
	}
	if v.Kind() != host.KindArray || v.Len() != 2*len(st.ids) {
		return host.ErrHostReply
	}
	// the fields, checked before the reply starts
	fields := st.fields[:0]
	v.Elems(func(_ int, e host.Value) bool {
		var f verdict.Field
		f.Bytes, f.Set, err = e.OptBytes()
		fields = append(fields, f)
		return err == nil
	})
	st.fields = fields
	if err != nil {
		return err
	}
	c.ReplyArray(extra + len(st.ids))
	if head != nil {
		head()
	}
	for i, id := range st.ids {
		c.ReplyArray(3)
		c.ReplyBulk(id)
		for _, f := range fields[2*i : 2*i+2] {
			if f.Set {
				c.ReplyBulk(f.Bytes)
			} else {
				c.ReplyNull()
			}
		}
	}
	return nil
}
