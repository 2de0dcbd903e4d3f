package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// scheduleList is EMQ.SCHEDULE.LIST (read-only): a page of the schedules,
// in byte order of their ids. Crossings: the command, one read batch (the
// fence and the page's ids), one read batch of their fields when any.
func scheduleList(c *host.Call) error {
	// shape and layout: numkeys 4 (base version schedules schedids), ARGV
	// after count
	r, err := prelude(c, protocol.ScheduleList, exactly(2))
	if err != nil {
		return err
	}
	schedules, ids := r.keys[2], r.keys[3]
	after := r.args[0]
	count, err := verdict.ScheduleListValues(after, r.args[1])
	if err != nil {
		return err
	}
	st := scheds.get()
	defer scheds.put(st)
	st.reset()
	b := r.fenced().Cmd(host.ZRANGE).Arg(ids)
	if len(after) == 0 {
		b.Str("-")
	} else {
		b.Arg(st.derived(nil, "(", after, ""))
	}
	res := b.Str("+").Str("BYLEX").Str("LIMIT").Str("0").Int(count).RunAll()
	if st.ids, err = pageAt(res, -1, &st.scratch, st.ids); err != nil {
		return err
	}
	return st.replyEntries(&r, schedules, nil)
}
