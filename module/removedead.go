package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// removeDead is EMQ.REMOVEDEAD (internal/lua/removedead.lua): REMOVE of each dead job
// the filter takes, at most limit examined per call; a member without a row
// leaves dead too. A dead job is finished: no parent is told, no outcome
// pushed. Crossings: the command, the walk's reads (walkDead), one ACL check
// of the members' keys, one read batch of the rows; for the jobs taken with
// a unique key, its ACL check and one read batch of their GETs; the counter,
// the events check, the guard and one write batch (after the events').
func removeDead(c *host.Call) error {
	// shape and layout: numkeys 4 (base version stats dead), ARGV limit
	// after_score after_member min max lane error
	r, err := prelude(c, protocol.RemoveDead, exactly(7))
	if err != nil {
		return err
	}
	f, err := verdict.DeadFilterValues(protocol.RemoveDead.Name, r.args)
	if err != nil {
		return err
	}
	st := jobPages.get()
	defer jobPages.put(st)
	st.reset()
	st.events.reset()
	examined, more, err := st.walkDead(&r, r.keys[3], &f)
	if err != nil {
		return err
	}
	members := st.members[:examined]
	if err := st.readRemoveRows(&r, members); err != nil {
		return err
	}
	// each member's fate: taken (matched), dropped (no row) or left
	width := len(verdict.RemoveDeadFields)
	st.fates = grow(st.fates, examined)
	st.uniques = grow(st.uniques, examined)
	taken, out := 0, 0
	for i := range members {
		st.fates[i] = verdict.RemoveDeadJob(&f, st.scores[i], st.fieldsOf(i, width))
		switch st.fates[i] {
		case verdict.DeadTaken:
			taken++
			out++
		case verdict.DeadRowless:
			out++
		}
	}
	if out == 0 {
		return st.replyWalk(c, 0, examined, more)
	}
	if err := st.readRemoveHolders(&r, members); err != nil {
		return err
	}
	// HGET stats removed, predicted with +taken
	var removed int64
	if taken > 0 {
		cnt := fieldAt(c.Read().Cmd(host.HGET).Arg(r.keys[2]).Str(statRemoved).RunAll(), 0)
		if cnt.Err != nil {
			return cnt.Err
		}
		if removed, err = verdict.PredictCounter(cnt.Val, int64(taken)); err != nil {
			return err
		}
	}
	if err := st.writeRemoveDead(&r, members, taken, out, removed); err != nil {
		return err
	}
	return st.replyWalk(c, taken, examined, more)
}

// readRemoveRows checks, in one ACL check (read, then deleted), the row,
// logs, kids, results and failures of every member that is an id, before
// any row is read; then reads per id HMGET row att state lane err uniq ev,
// in one batch.
func (st *opsState) readRemoveRows(r *verbCall, members [][]byte) error {
	examined := len(members)
	st.keys = st.keys[:0]
	st.rowOf = grow(st.rowOf, examined)
	for i, m := range members {
		if verdict.JobMember(m) {
			st.rowOf[i] = st.derived(r.base, protocol.SuffixJob, m, "")
			st.keys = append(st.keys, st.rowOf[i],
				st.derived(r.base, protocol.SuffixJob, m, protocol.SuffixLogs),
				st.derived(r.base, protocol.SuffixJob, m, protocol.SuffixKids),
				st.derived(r.base, protocol.SuffixJob, m, protocol.SuffixResults),
				st.derived(r.base, protocol.SuffixJob, m, protocol.SuffixFailures))
		}
	}
	if len(st.keys) > 0 {
		if err := r.c.CheckKeys(host.KeyRead|host.KeyDelete, st.keys...); err != nil {
			return err
		}
	}
	width := len(verdict.RemoveDeadFields)
	st.has = grow(st.has, examined)
	st.fields = grow(st.fields, (width+1)*examined)
	b := r.c.Read()
	nrows := 0
	for i, m := range members {
		if verdict.JobMember(m) {
			b.Cmd(host.HMGET).Arg(st.rowOf[i])
			for _, name := range verdict.RemoveDeadFields {
				b.Str(name)
			}
			b.Str(protocol.FieldEvents)
			nrows++
		}
	}
	if nrows == 0 {
		return nil
	}
	res := b.RunAll()
	k := 0
	for i, m := range members {
		if !verdict.JobMember(m) {
			continue
		}
		fl := st.fields[(width+1)*i : (width+1)*(i+1)]
		if err := fieldsAt(res, k, fl); err != nil {
			return err
		}
		for j := range fl {
			fl[j].Bytes = st.copy(fl[j].Bytes)
		}
		st.has[i] = true
		k++
	}
	return nil
}

// readRemoveHolders reads the unique keys of the jobs taken: the caller's ACL
// (read, then deleted), the first denied one refused in place of its GET;
// one batch of GET unique:<uniq>. A key held by another job is kept
// (st.uniques[i] nil).
func (st *opsState) readRemoveHolders(r *verbCall, members [][]byte) error {
	width := len(verdict.RemoveDeadFields)
	st.probe = st.probe[:0] // the unique keys, in walk order
	for i := range members {
		st.uniques[i] = nil
		if st.fates[i] != verdict.DeadTaken {
			continue
		}
		if u := st.fieldsOf(i, width)[4]; u.Set {
			st.uniques[i] = st.derived(r.base, protocol.SuffixUnique, u.Bytes, "")
			st.probe = append(st.probe, st.uniques[i])
		}
	}
	if len(st.probe) == 0 {
		return nil
	}
	deny, err := r.firstDenied(host.KeyRead|host.KeyDelete, st.probe)
	if err != nil {
		return err
	}
	n := len(st.probe)
	if deny >= 0 {
		n = deny
	}
	gb := r.c.Read()
	for _, key := range st.probe[:n] {
		gb.Cmd(host.GET).Arg(key)
	}
	var res host.Results
	if n > 0 {
		res = gb.RunAll()
	}
	k := 0
	for i, m := range members {
		if st.uniques[i] == nil {
			continue
		}
		if k == n {
			return host.ErrNoPerm
		}
		h := fieldAt(res, k)
		if h.Err != nil {
			return h.Err
		}
		if !h.Val.Is(string(m)) {
			st.uniques[i] = nil // held by another job: kept
		}
		k++
	}
	return nil
}

// writeRemoveDead is REMOVEDEAD's writes: the removed events, in walk
// order, then the stream; the guard, then the events; ZREM dead <taken and
// rowless…>; one DEL of the taken jobs' keys and the unique keys they
// hold; HINCRBY stats removed (predicted: removed).
func (st *opsState) writeRemoveDead(r *verbCall, members [][]byte, taken, out int, removed int64) error {
	c := r.c
	width := len(verdict.RemoveDeadFields)
	for i, m := range members {
		if st.fates[i] == verdict.DeadTaken {
			st.events.add(st.evOf(i, width), protocol.EventRemoved, m, "", nil)
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
	wb := w.Write().Cmd("ZREM").Arg(r.keys[3])
	for i, m := range members {
		if st.fates[i] != verdict.DeadLeft {
			wb.Arg(m)
		}
	}
	if taken > 0 {
		wb.Cmd("DEL")
		for i, m := range members {
			if st.fates[i] != verdict.DeadTaken {
				continue
			}
			wb.Arg(st.rowOf[i]).
				Arg(st.derived(r.base, protocol.SuffixJob, m, protocol.SuffixLogs)).
				Arg(st.derived(r.base, protocol.SuffixJob, m, protocol.SuffixKids)).
				Arg(st.derived(r.base, protocol.SuffixJob, m, protocol.SuffixResults)).
				Arg(st.derived(r.base, protocol.SuffixJob, m, protocol.SuffixFailures))
			if st.uniques[i] != nil {
				wb.Arg(st.uniques[i])
			}
		}
		wb.Cmd("HINCRBY").Arg(r.keys[2]).Str(statRemoved).Int(int64(taken))
	}
	res, err := wb.Run()
	if err != nil {
		return wrote(c, err)
	}
	if err := removedAll(c, res, 0, out); err != nil {
		return err
	}
	if taken > 0 {
		return predicted(c, res, 2, removed)
	}
	return nil
}
