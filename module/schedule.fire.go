package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

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
	jobs, first, err := st.fireCount(&r, fv)
	if err != nil {
		return err
	}
	var v verdict.AddVerdict
	if jobs > 0 {
		if v, err = st.fireDecide(&r, ad, in, &fv.Def, jobs, first); err != nil {
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
	if err := st.fireWrites(&r, ad, fv, jobs, v); err != nil {
		return err
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

// fireCount is how many jobs the firing adds, and the index of the first
// one's time: one per time, or with a unique key one for the last time
// unless the key is held.
func (st *schedState) fireCount(r *verbCall, fv verdict.FireVerdict) (jobs, first int, err error) {
	times := len(st.fire.Times)
	jobs, first = times, 0
	if !fv.Unique {
		return jobs, first, nil
	}
	jobs, first = 1, times-1
	key := st.derived(r.base, protocol.SuffixUnique, fv.Def.Unique(), "")
	if err := r.c.CheckKeys(host.KeyRead|host.KeyInsert, key); err != nil {
		return 0, 0, err
	}
	holder := fieldAt(r.c.Read().Cmd(host.GET).Arg(key).RunAll(), 0)
	if holder.Err != nil {
		return 0, 0, holder.Err
	}
	if holder.Val.Set {
		jobs = 0
	}
	return jobs, first, nil
}

// fireDecide runs ADD's values and verdict for the jobs of the times from
// first on, the template d as ADD's ARGV: n k <option names>, then per job
// data priority delay attempts backoff backoff_ms unique_key unique_ttl
// <option values>.
func (st *schedState) fireDecide(r *verbCall, ad *addState, in addInput, d *verdict.Def, jobs, first int) (verdict.AddVerdict, error) {
	e := d.Elems
	st.args = append(st.args[:0], st.decimal(int64(jobs)), st.decimal(int64(d.Options)))
	for o := range d.Options {
		name, _ := d.Option(o)
		st.args = append(st.args, name)
	}
	st.sat = st.sat[:0]
	for i := first; i < len(st.fire.Times); i++ {
		t := st.fire.Times[i]
		st.args = append(st.args, e[verdict.DefData], e[verdict.DefPriority], st.decimal(max(0, t+st.fire.Jitters[i]-r.now)),
			e[verdict.DefAttempts], e[verdict.DefBackoff], e[verdict.DefBackoffMS], e[verdict.DefUnique], e[verdict.DefUniqueTTL])
		for o := range d.Options {
			_, value := d.Option(o)
			st.args = append(st.args, value)
		}
		st.sat = append(st.sat, st.decimal(t))
	}
	in.args, in.n, in.k, in.sched, in.sat = st.args, jobs, d.Options, r.args[0], st.sat
	if err := ad.values(in, r.now); err != nil {
		return verdict.AddVerdict{}, err
	}
	return ad.decide(r)
}

// fireWrites is SCHEDULE.FIRE's writes: the guard, then the jobs' events,
// ADD's for the jobs, then the schedule's state, and its next due time
// (ZADD scheddue, or ZREM with none).
func (st *schedState) fireWrites(r *verbCall, ad *addState, fv verdict.FireVerdict, jobs int, v verdict.AddVerdict) error {
	c, id, schedules, due := r.c, r.args[0], r.keys[7], r.keys[8]
	st.out = verdict.AppendState(st.out[:0], fv.State)
	stateBytes := st.out
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
	added := 0
	if jobs > 0 {
		added = ad.writeJobs(r, wb, v)
	}
	wb.Cmd("HSET").Arg(schedules).Arg(st.fieldName(protocol.ScheduleStateField, id)).Arg(stateBytes)
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
		return ad.checkWrites(c, wres, 0, added, v)
	}
	return nil
}
