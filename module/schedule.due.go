package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// scheduleDue is EMQ.SCHEDULE.DUE (read-only), the schedule step's first
// phase: the server's time and the schedules due at it, with their
// definition and state. Crossings: the command, one read batch (the fence
// and the due ids), one read batch of their fields when any.
func scheduleDue(c *host.Call) error {
	// shape and layout: numkeys 4 (base version schedules scheddue), ARGV
	// limit
	r, err := prelude(c, protocol.ScheduleDue, exactly(1))
	if err != nil {
		return err
	}
	schedules, due := r.keys[2], r.keys[3]
	limit, err := verdict.ScheduleDueLimit(r.args[0])
	if err != nil {
		return err
	}
	st := scheds.get()
	defer scheds.put(st)
	st.reset()
	res := r.fenced().
		Cmd(host.ZRANGEBYSCORE).Arg(due).Str("-inf").Int(r.now).Str("LIMIT").Str("0").Int(limit).
		RunAll()
	if st.ids, err = pageAt(res, -1, &st.scratch, st.ids); err != nil {
		return err
	}
	return st.replyEntries(&r, schedules, func() { c.ReplyInt(r.now) })
}
