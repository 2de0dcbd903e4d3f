package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// requeueDead is EMQ.REQUEUEDEAD (internal/lua/requeuedead.lua): REQUEUE of each dead
// job the filter takes, at most limit examined per call. Crossings: the
// command, the walk's reads (walkDead), the rows' ACL check, one read batch
// of the rows; with jobs taken, the lane accounting of their lanes, one read
// batch (pending, signal, the counter), the events check, the guard and one
// write batch.
func requeueDead(c *host.Call) error {
	// shape and layout: numkeys 6 (base version stats pending dead signal),
	// ARGV limit after_score after_member min max lane error
	r, err := prelude(c, protocol.RequeueDead, exactly(7))
	if err != nil {
		return err
	}
	f, err := verdict.DeadFilterValues(protocol.RequeueDead.Name, r.args)
	if err != nil {
		return err
	}
	st := jobPages.get()
	defer jobPages.put(st)
	st.reset()
	st.lanes.reset(&st.scratch)
	st.events.reset()
	examined, more, err := st.walkDead(&r, r.keys[4], &f)
	if err != nil {
		return err
	}
	members := st.members[:examined]
	// the rows: the caller's ACL (read, then written), the first denied one
	// refused in place of its read; per row HMGET state att max prio lane
	// parent onfail cfail ev err cancelled
	if err := st.readDeadRows(&r, members, host.KeyRead|host.KeyUpdate, verdict.RequeueDeadFields); err != nil {
		return err
	}
	st.moves = grow(st.moves, examined)
	st.maxes = grow(st.maxes, examined)
	taken, toPending := 0, false
	for i, m := range members {
		fl := st.fieldsOf(i, len(verdict.RequeueDeadFields))
		if fl == nil {
			continue
		}
		mv, max, ok := verdict.RequeueDeadJob(&f, m, st.scores[i], fl)
		if !ok {
			continue
		}
		st.moves[i], st.maxes[i] = mv, max
		taken++
		toPending = toPending || mv.To == verdict.ToPending
	}
	if taken == 0 {
		return st.replyWalk(c, 0, examined, more)
	}
	// the lanes of the jobs taken, in the order met: one waiting job more
	// each
	st.laneOf = grow(st.laneOf, examined)
	st.lanes.addMoves(r.base, st.moves, 1, 0, st.laneOf)
	refusal, err := st.lanes.read(&r)
	if err != nil {
		return err
	}
	if refusal != nil {
		return refusal
	}
	if err := st.writeRequeueDead(&r, members, taken, toPending); err != nil {
		return err
	}
	return st.replyWalk(c, taken, examined, more)
}

// writeRequeueDead reads ZCARD pending (the signal's condition), LLEN
// signal, HGET stats requeued (predicted with +taken); adds the requeued
// events, in walk order, then the stream; then the guard and the writes:
// the events; ZREM dead <taken…>; per job HSET row state pending max
// <att+max>, HDEL row parent onfail cfail cancelled when any is set; one
// ZADD pending and one per lane; HINCRBY stats requeued; the lanes; the
// signal.
func (st *opsState) writeRequeueDead(r *verbCall, members [][]byte, taken int, toPending bool) error {
	c, stats, pending, signal := r.c, r.keys[2], r.keys[3], r.keys[5]
	res := c.Read().Cmd(host.ZCARD).Arg(pending).Cmd(host.LLEN).Arg(signal).Cmd(host.HGET).Arg(stats).Str(statRequeued).RunAll()
	was, sig, cnt := intAt(res, 0), intAt(res, 1), fieldAt(res, 2)
	for _, e := range []error{was.Err, sig.Err, cnt.Err} {
		if e != nil {
			return e
		}
	}
	requeued, err := verdict.PredictCounter(cnt.Val, int64(taken))
	if err != nil {
		return err
	}
	for i, mv := range st.moves {
		if mv.To != verdict.Drop {
			st.events.add(st.evOf(i, len(verdict.RequeueDeadFields)), protocol.EventRequeued, members[i], "", nil)
		}
	}
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
	b := w.Write().Cmd("ZREM").Arg(r.keys[4])
	for i, m := range members {
		if st.moves[i].To != verdict.Drop {
			b.Arg(m)
		}
	}
	counter := 1 + st.requeueRows(b, members) // the index of the HINCRBY among the writes
	if zaddMoves(b, pending, verdict.ToPending, st.moves, members) {
		counter++
	}
	if st.lanes.len() > 0 {
		counter += st.lanes.zaddLanes(b, st.moves, members, st.laneOf, &st.order)
	}
	b.Cmd("HINCRBY").Arg(stats).Str(statRequeued).Int(int64(taken))
	st.lanes.writes(b)
	if (toPending && was.Val == 0) || st.lanes.wakes() {
		signalPush(b, signal, sig.Val)
	}
	wres, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	if err := removedAll(c, wres, 0, taken); err != nil {
		return err
	}
	return predicted(c, wres, counter, requeued)
}

// requeueRows adds, per job taken, HSET row state pending max <att+max>,
// and HDEL row parent onfail cfail cancelled when any is set; it returns
// how many writes it added.
func (st *opsState) requeueRows(b *host.Batch, members [][]byte) int {
	n := 0
	for i := range members {
		if st.moves[i].To == verdict.Drop {
			continue
		}
		b.Cmd("HSET").Arg(st.rowOf[i]).Str(protocol.FieldState).Str(protocol.StatePending).Str(protocol.FieldMax).Int(st.maxes[i])
		n++
		if fl := st.fieldsOf(i, len(verdict.RequeueDeadFields)); fl[5].Set || fl[6].Set || fl[7].Set || fl[9].Set {
			b.Cmd("HDEL").Arg(st.rowOf[i]).Str(protocol.FieldParent).Str(protocol.FieldOnFail).Str(protocol.FieldChildFail).Str(protocol.FieldCancelled)
			n++
		}
	}
	return n
}

// walkDead runs a dead filter's reads up to its walk: the fence and ZCARD
// dead in one batch, the cursor's place, ZCOUNT dead -inf (<min>, then
// ZRANGE dead <s> <s + limit> WITHSCORES from the walk's start s into
// st.members and st.scores. It returns how many members the walk examines
// and whether it goes on after them.
func (st *opsState) walkDead(r *verbCall, dead []byte, f *verdict.DeadFilter) (int, bool, error) {
	res := r.fenced().Cmd(host.ZCARD).Arg(dead).RunAll()
	if err := verdict.Fence(fieldAt(res, 0)); err != nil {
		return 0, false, err
	}
	card := intAt(res, 1)
	if card.Err != nil {
		return 0, false, card.Err
	}
	_, e, err := st.place(r, dead, f.After, card.Val)
	if err != nil {
		return 0, false, err
	}
	below := intAt(r.c.Read().Cmd(host.ZCOUNT).Arg(dead).Str("-inf").Arg(st.below(f.Min)).RunAll(), 0)
	if below.Err != nil {
		return 0, false, below.Err
	}
	s := verdict.WalkStart(e, below.Val)
	st.members, st.scores = st.members[:0], st.scores[:0]
	if err := st.zrange(r.c, dead, s, s+f.Limit); err != nil {
		return 0, false, err
	}
	examined, more := verdict.Walk(st.scores, f.Limit, f.Max)
	return examined, more, nil
}

// readDeadRows reads the rows of the members examined that are ids: the
// caller's ACL (access) checked first, the first denied one refused in
// place of its read; one batch of HMGET row <fields> then ev, kept in
// st.fields (len(fields) + 1 per member).
func (st *opsState) readDeadRows(r *verbCall, members [][]byte, access host.KeyAccess, fields []string) error {
	width := len(fields)
	st.rowOf = grow(st.rowOf, len(members))
	st.has = grow(st.has, len(members))
	st.fields = grow(st.fields, (width+1)*len(members))
	st.keys = st.keys[:0]
	for i, m := range members {
		if verdict.JobMember(m) {
			st.rowOf[i] = st.derived(r.base, protocol.SuffixJob, m, "")
			st.keys = append(st.keys, st.rowOf[i])
		}
	}
	if len(st.keys) == 0 {
		return nil
	}
	deny, err := r.firstDenied(access, st.keys)
	if err != nil {
		return err
	}
	nrows := len(st.keys)
	if deny >= 0 {
		nrows = deny
	}
	b := r.c.Read()
	for _, row := range st.keys[:nrows] {
		b.Cmd(host.HMGET).Arg(row)
		for _, f := range fields {
			b.Str(f)
		}
		b.Str(protocol.FieldEvents)
	}
	res := b.RunAll()
	k := 0
	for i, m := range members {
		if !verdict.JobMember(m) {
			continue
		}
		if k == nrows {
			return host.ErrNoPerm
		}
		f := st.fields[(width+1)*i : (width+1)*(i+1)]
		if err := fieldsAt(res, k, f); err != nil {
			return err
		}
		for j := range f {
			f[j].Bytes = st.copy(f[j].Bytes)
		}
		st.has[i] = true
		k++
	}
	return nil
}

// fieldsOf is member i's row fields as readDeadRows read them (width
// fields), or nil for a member that is not an id.
func (st *opsState) fieldsOf(i, width int) []verdict.Field {
	if !st.has[i] {
		return nil
	}
	return st.fields[(width+1)*i : (width+1)*i+width]
}

// evOf is member i's ev field as readDeadRows read it.
func (st *opsState) evOf(i, width int) verdict.Field {
	if !st.has[i] {
		return verdict.Field{}
	}
	return st.fields[(width+1)*i+width]
}

// replyWalk is a dead filter's reply: [taken, examined, next_score,
// next_member], the cursor the last member examined when the walk goes on,
// else two nulls.
func (st *opsState) replyWalk(c *host.Call, taken, examined int, more bool) error {
	c.ReplyArray(4)
	c.ReplyInt(int64(taken))
	c.ReplyInt(int64(examined))
	if more {
		c.ReplyInt(st.scores[examined-1])
		c.ReplyBulk(st.members[examined-1])
	} else {
		c.ReplyNull()
		c.ReplyNull()
	}
	return nil
}
