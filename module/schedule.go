package main

import (
	"strconv"

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

// schedulePause is EMQ.SCHEDULE.PAUSE: stop a schedule.
func schedulePause(c *host.Call) error { return schedulePauseResume(c, protocol.SchedulePause, true) }

// scheduleResume is EMQ.SCHEDULE.RESUME: start a paused schedule again,
// from the server's time.
func scheduleResume(c *host.Call) error {
	return schedulePauseResume(c, protocol.ScheduleResume, false)
}

// schedulePauseResume is SCHEDULE.PAUSE (pause) or SCHEDULE.RESUME.
// Crossings: the command, one read batch (the fence, HGET schedules
// s:<id>, the type of scheddue); with a change, the guard and one write
// batch.
func schedulePauseResume(c *host.Call, v *protocol.Verb, pause bool) error {
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
	state, change, err := verdict.SchedulePause(&seen, pause, r.now)
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
	if pause {
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
	if len(after) > 0 && !verdict.ScheduleID(after) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.ScheduleList.Name, "after"))
	}
	count, ok := grammar.Decimal(r.args[1], 1, protocol.MaxCount)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.ScheduleList.Name, "count"))
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
	if err := verdict.Fence(fieldAt(res, 0)); err != nil {
		return err
	}
	page := listAt(res, 1, &st.scratch, st.ids)
	if page.Err != nil {
		return page.Err
	}
	st.ids = page.Val
	return st.replyEntries(&r, schedules, nil)
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
	limit, ok := grammar.Decimal(r.args[0], 1, protocol.MaxCount)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.ScheduleDue.Name, "limit"))
	}
	st := scheds.get()
	defer scheds.put(st)
	st.reset()
	res := r.fenced().
		Cmd(host.ZRANGEBYSCORE).Arg(due).Str("-inf").Int(r.now).Str("LIMIT").Str("0").Int(limit).
		RunAll()
	if err := verdict.Fence(fieldAt(res, 0)); err != nil {
		return err
	}
	list := listAt(res, 1, &st.scratch, st.ids)
	if list.Err != nil {
		return list.Err
	}
	st.ids = list.Val
	return st.replyEntries(&r, schedules, func() { c.ReplyInt(r.now) })
}

// scheduleFire is EMQ.SCHEDULE.FIRE, the schedule step's second phase:
// enqueue a schedule's occurrences computed from its revision and last
// fired time, and advance it. Crossings: the command, one read batch (the
// fence, HMGET schedules d:<id> s:<id>, ADD's first reads and the type of
// scheddue); with a unique template, its ACL check and GET; then ADD's
// (the rows' ACL check and EXISTS, the lanes, the events); the guard, one
// write batch.
func scheduleFire(c *host.Call) error {
	// shape and layout: numkeys 9 (base version meta stats pending delayed
	// signal schedules scheddue), ARGV 6 + 2n
	r, err := prelude(c, protocol.ScheduleFire, shapedBy(verdict.FireArity))
	if err != nil {
		return err
	}
	meta, stats, pending, delayed, signal, schedules, due := r.keys[2], r.keys[3], r.keys[4], r.keys[5], r.keys[6], r.keys[7], r.keys[8]
	// values: id rev from upto next, then the pairs
	id := r.args[0]
	if err := scheduleID(protocol.ScheduleFire, id); err != nil {
		return err
	}
	st := scheds.get()
	defer scheds.put(st)
	st.reset()
	st.fire.Times, st.fire.Jitters = st.fire.Times[:0], st.fire.Jitters[:0]
	if err := verdict.FireValues(r.args, r.n, &st.fire); err != nil {
		return err
	}
	sField := st.fieldName(protocol.ScheduleStateField, id)
	// fence and domain reads, one batch: the schedule's fields, then ADD's
	// first reads and the type of scheddue, which the verdicts take in
	// their place
	ad := adds.get()
	defer adds.put(ad)
	in := addInput{meta: meta, stats: stats, pending: pending, delayed: delayed, signal: signal}
	ad.begin(in)
	b := r.fenced().Cmd(host.HMGET).Arg(schedules).Arg(st.fieldName(protocol.ScheduleDefField, id)).Arg(sField)
	res := ad.firstReads(b).Cmd(host.ZCARD).Arg(due).RunAll()
	seen := verdict.FireSeen{Version: fieldAt(res, 0), Fields: pair2At(res, 1)}
	dueType := intAt(res, 7)
	// ADD's first reads came with the fence: its verdict goes on from them
	// once the fence passed (copies: the next batch ends these replies)
	ad.takeFirst(res, 2, verdict.Got(verdict.Str(protocol.WireString)))
	if seen.Fields.Err == nil {
		seen.Fields.Val[0].Bytes = st.copy(seen.Fields.Val[0].Bytes)
	}
	fv, err := verdict.Fire(&seen, &st.fire, r.now, st.elems)
	st.elems = fv.Def.Elems
	if err != nil {
		return err
	}
	// the jobs: one per time, or with a unique key one for the last time
	// unless the key is held
	times := len(st.fire.Times)
	jobs, first := times, 0
	if fv.Unique {
		jobs, first = 1, times-1
		key := st.derived(r.base, protocol.SuffixUnique, fv.Def.Unique(), "")
		if err := c.CheckKeys(host.KeyRead|host.KeyInsert, key); err != nil {
			return err
		}
		holder := fieldAt(c.Read().Cmd(host.GET).Arg(key).RunAll(), 0)
		if holder.Err != nil {
			return holder.Err
		}
		if holder.Val.Set {
			jobs = 0
		}
	}
	var v verdict.AddVerdict
	added := 0
	if jobs > 0 {
		// the template as ADD's ARGV: n k <option names>, then per job
		// data priority delay attempts backoff backoff_ms unique_key
		// unique_ttl <option values>
		d := &fv.Def
		e := d.Elems
		st.args = append(st.args[:0], st.decimal(int64(jobs)), st.decimal(int64(d.Options)))
		for o := range d.Options {
			name, _ := d.Option(o)
			st.args = append(st.args, name)
		}
		st.sat = st.sat[:0]
		for i := first; i < times; i++ {
			t := st.fire.Times[i]
			st.args = append(st.args, e[verdict.DefData], e[verdict.DefPriority], st.decimal(max(0, t+st.fire.Jitters[i]-r.now)),
				e[verdict.DefAttempts], e[verdict.DefBackoff], e[verdict.DefBackoffMS], e[verdict.DefUnique], e[verdict.DefUniqueTTL])
			for o := range d.Options {
				_, value := d.Option(o)
				st.args = append(st.args, value)
			}
			st.sat = append(st.sat, st.decimal(t))
		}
		in.args, in.n, in.k, in.sched, in.sat = st.args, jobs, d.Options, id, st.sat
		if err := ad.values(in, r.now); err != nil {
			return err
		}
		if v, err = ad.decide(&r); err != nil {
			return err
		}
	}
	// types: scheddue
	if dueType.Err != nil {
		return dueType.Err
	}
	// last, the jobs' added events
	if jobs > 0 {
		if err := ad.checkEvents(&r); err != nil {
			return err
		}
	}
	st.out = verdict.AppendState(st.out[:0], fv.State)
	stateBytes := st.out
	// guard, then the writes: the jobs' events, ADD's for the jobs, then
	// the schedule's state
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if jobs > 0 {
		if err := ad.events.publish(c, w); err != nil {
			return err
		}
	}
	wb := w.Write()
	if jobs > 0 {
		added = ad.writeJobs(&r, wb, v)
	}
	wb.Cmd("HSET").Arg(schedules).Arg(sField).Arg(stateBytes)
	if fv.Next > 0 {
		wb.Cmd("ZADD").Arg(due).Int(fv.Next).Arg(id)
	} else {
		wb.Cmd("ZREM").Arg(due).Arg(id)
	}
	wres, err := wb.Run()
	if err != nil {
		return wrote(c, err)
	}
	if jobs > 0 {
		if err := ad.checkWrites(c, wres, 0, added, v); err != nil {
			return err
		}
	}
	if jobs == 0 {
		c.ReplyArray(0)
		return nil
	}
	c.ReplyArray(len(ad.ids))
	for _, jid := range ad.ids {
		c.ReplyBulk(jid)
	}
	return nil
}
