package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// remove is EMQ.REMOVE (internal/lua/remove.lua): delete a job no worker holds
// (pending, delayed, dead, waiting, or a retained completed one), with its
// logs, its flow keys and its unique key; with cascade, a waiting parent
// with its descendants, read level by level through the kids sets (at most
// MaxCount jobs). A removed job whose parent waits outside the removal
// tells its parent; a waited one gets its outcome r.
func remove(c *host.Call) error {
	// shape and layout: numkeys 7 (base version stats pending delayed active
	// dead), ARGV id cascade
	r, err := prelude(c, protocol.Remove, exactly(2))
	if err != nil {
		return err
	}
	// values: the id, cascade (0 or 1)
	id, cascade := r.args[0], r.args[1]
	if !grammar.ID(id) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Remove.Name, "id"))
	}
	if string(cascade) != "0" && string(cascade) != "1" {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Remove.Name, "cascade"))
	}
	st := removes.get()
	defer removes.put(st)
	st.reset()
	st.lanes.reset(&st.scratch)
	st.flow.reset(&st.scratch)
	st.jobs, st.keys = st.jobs[:0], st.keys[:0]
	st.sets = [...][]byte{r.keys[3], r.keys[4], r.keys[6],
		st.derived(r.base, protocol.SuffixWaiting, nil, ""), st.derived(r.base, protocol.SuffixCompleted, nil, "")}
	found, all, err := st.readRoot(&r)
	if err != nil || !found {
		if err == nil {
			c.ReplyInt(0)
		}
		return err
	}
	// with cascade, the descendants, level by level through the kids sets
	if string(st.jobs[0].state) == protocol.StateWaiting {
		if err := st.descend(&r); err != nil {
			return err
		}
	}
	nremoved, err := st.account(&r)
	if err != nil {
		return err
	}
	removed, err := st.readCounter(&r, nremoved)
	if err != nil {
		return err
	}
	if refusal, err := st.flow.types(&r, r.keys[2], 0); err != nil || refusal != nil {
		return orInternal2(refusal, err)
	}
	if !all && c.CheckKeys(host.KeyDelete, st.keys[1:5]...) != nil {
		return host.ErrNoPerm
	}
	if err := st.write(&r, nremoved, removed); err != nil {
		return err
	}
	c.ReplyInt(1)
	return nil
}

// readRoot reads the root job: its row, logs and flow keys checked in one
// ACL check (read, deleted), and when refused, the row alone (its read's
// refusal, after the fence); then the fence and the row, the removal's
// check of its state, its unique key. found is false for a job that is
// gone; all that the first ACL check passed.
func (st *removeState) readRoot(r *verbCall) (found, all bool, err error) {
	c := r.c
	root := st.jobKeys(r.base, r.args[0])
	all = c.CheckKeys(host.KeyRead|host.KeyDelete, st.keys...) == nil
	rowOK := all || c.CheckKeys(host.KeyRead|host.KeyDelete, root.row) == nil
	b := r.fenced()
	if rowOK {
		readJobRow(b, root.row)
	}
	res := b.RunAll()
	if err := verdict.Fence(fieldAt(res, 0)); err != nil {
		return false, all, err
	}
	if !rowOK {
		return false, all, host.ErrNoPerm
	}
	ok, err := st.takeRow(res, 1, &root)
	if err != nil || !ok {
		return false, all, err
	}
	if err := verdict.RemoveCheck(verdict.Field{Bytes: root.state, Set: root.hasState}, string(r.args[1]) == "1"); err != nil {
		return false, all, err
	}
	if err := st.readUnique(r, &root); err != nil {
		return false, all, err
	}
	st.jobs = append(st.jobs, root)
	return true, all, nil
}

// account plans the removal (verdict.RemovePlan): the parents outside the
// removal of the unfinished jobs removed, the lanes, the sets; it reads the
// flow and lane accountings and returns how many jobs the counter counts.
func (st *removeState) account(r *verbCall) (int64, error) {
	st.plan = st.plan[:0]
	for _, j := range st.jobs {
		st.plan = append(st.plan, verdict.RemoveJob{State: verdict.Field{Bytes: j.state, Set: j.hasState}, Lane: j.laneName,
			Parent: j.parent, InRemoval: j.parent != nil && st.find(j.parent) >= 0})
	}
	var nremoved int64
	st.moves, nremoved = verdict.RemovePlan(st.plan, st.moves)
	for i := range st.jobs {
		j, m := &st.jobs[i], st.moves[i]
		if m.Unfinished {
			var parent []byte
			if m.Tell {
				parent = j.parent
			}
			st.flow.finish(j.id, verdict.FinishRemoved, nil, parent, verdict.Field{}, j.wait)
		}
		j.set, j.lane = -1, -1
		switch m.Set {
		case verdict.RemoveLane:
			j.lane = st.lanes.add(r.base, j.laneName, -1, 0)
		case verdict.RemoveNone:
		default:
			j.set = int(m.Set)
		}
	}
	if refusal, err := st.flow.read(r); err != nil || refusal != nil {
		return 0, orInternal2(refusal, err)
	}
	st.flow.lanes(&st.lanes, r.base)
	if refusal, err := st.lanes.read(r); err != nil || refusal != nil {
		return 0, orInternal2(refusal, err)
	}
	return nremoved, nil
}

// readCounter reads HGET stats removed, when jobs are counted, and the
// types of the sets the jobs leave (ZCARD): it returns the counter's
// predicted value.
func (st *removeState) readCounter(r *verbCall, nremoved int64) (int64, error) {
	rb := r.c.Read()
	reads := 0
	if nremoved > 0 {
		rb.Cmd(host.HGET).Arg(r.keys[2]).Str(statRemoved)
		reads++
	}
	for _, j := range st.jobs {
		if j.set >= 0 {
			rb.Cmd(host.ZCARD).Arg(st.sets[j.set])
			reads++
		}
	}
	if reads == 0 {
		return 0, nil
	}
	res := rb.RunAll()
	var removed int64
	k := 0
	if nremoved > 0 {
		f := fieldAt(res, 0)
		if f.Err != nil {
			return 0, f.Err
		}
		var err error
		if removed, err = verdict.PredictField(f.Val, nremoved); err != nil {
			return 0, err
		}
		k = 1
	}
	for ; k < reads; k++ {
		if v := intAt(res, k); v.Err != nil {
			return 0, v.Err
		}
	}
	return removed, nil
}

// write is REMOVE's writes: every job's removed event in removal order (the
// root first), the released parents', then the stream; the guard, then per
// job ZREM from its set, one DEL of its row, logs, flow keys and its unique
// key when it holds the job; HINCRBY stats removed (predicted: removed); the
// accountings'.
func (st *removeState) write(r *verbCall, nremoved, removed int64) error {
	c, stats := r.c, r.keys[2]
	st.events.reset()
	for _, j := range st.jobs {
		st.events.add(j.ev, protocol.EventRemoved, j.id, "", nil)
	}
	st.flow.publish(&st.events)
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
	wb := w.Write()
	counter := 0
	for _, j := range st.jobs {
		switch {
		case j.lane >= 0:
			wb.Cmd("ZREM").Arg(st.lanes.keys[j.lane]).Arg(j.id)
			counter++
		case j.set >= 0:
			wb.Cmd("ZREM").Arg(st.sets[j.set]).Arg(j.id)
			counter++
		}
		counter++
		wb.Cmd("DEL")
		for _, k := range st.keys[j.keys : j.keys+5] {
			wb.Arg(k)
		}
		if j.release {
			wb.Arg(j.unique)
		}
	}
	if nremoved > 0 {
		wb.Cmd("HINCRBY").Arg(stats).Str(statRemoved).Int(nremoved)
	}
	accountWrites(wb, r.now, stats, &st.flow, &st.lanes)
	res, err := wb.Run()
	if err != nil {
		return wrote(c, err)
	}
	if nremoved > 0 {
		return predicted(c, res, counter, removed)
	}
	return nil
}

// orInternal2 is a refusal or a host failure, whichever is set.
func orInternal2(refusal, err error) error {
	if err != nil {
		return err
	}
	return refusal
}

// removeJob is one job of a removal, as read.
type removeJob struct {
	id, row                    []byte
	keys                       int // its row, logs and flow keys: keys[keys : keys+5]
	state                      []byte
	uniq, laneName, parent     []byte
	hasUniq, release, hasState bool
	unique                     []byte
	ev                         verdict.Field
	wait                       int64
	set, lane                  int
}

// jobKeys appends a job's row, logs, kids, results and failures to st.keys
// and returns the job with its id and row.
func (st *removeState) jobKeys(base, id []byte) removeJob {
	id = st.copy(id)
	j := removeJob{id: id, keys: len(st.keys)}
	j.row = st.derived(base, protocol.SuffixJob, id, "")
	st.keys = append(st.keys, j.row,
		st.derived(base, protocol.SuffixJob, id, protocol.SuffixLogs),
		st.derived(base, protocol.SuffixJob, id, protocol.SuffixKids),
		st.derived(base, protocol.SuffixJob, id, protocol.SuffixResults),
		st.derived(base, protocol.SuffixJob, id, protocol.SuffixFailures))
	return j
}

// readJobRow adds HMGET row att state uniq lane parent wait to b.
func readJobRow(b *host.ReadBatch, row []byte) {
	b.Cmd(host.HMGET).Arg(row).Str(protocol.FieldAttempts).Str(protocol.FieldState).Str(protocol.FieldUnique).
		Str(protocol.FieldLane).Str(protocol.FieldParent).Str(protocol.FieldWait).Str(protocol.FieldEvents)
}

// takeRow reads reply i, a job's row (readJobRow), into j: false when the
// row is absent; EMQSTATE remove job is active for an active one.
func (st *removeState) takeRow(res host.Results, i int, j *removeJob) (bool, error) {
	var f [6]verdict.Field
	var ev verdict.Field
	if err := fieldsEvAt(res, i, f[:], &ev); err != nil {
		return false, err
	}
	if !f[0].Set {
		return false, nil
	}
	state := verdict.RowState(f[1], f[0]) // a row leaves out state pending
	if err := verdict.RemoveCheck(state, true); err != nil {
		return false, err
	}
	j.state, j.hasState = st.copy(state.Bytes), state.Set
	j.hasUniq = f[2].Set
	j.uniq = st.copy(f[2].Bytes)
	j.laneName = st.copy(verdict.LaneName(f[3]))
	j.parent = st.copy(verdict.ChildParent(f[4]))
	j.wait = verdict.WaitField(f[5])
	j.ev = verdict.Field{Bytes: st.copy(ev.Bytes), Set: ev.Set}
	return true, nil
}

// readUnique reads a job's unique key's holder, after its ACL check.
func (st *removeState) readUnique(r *verbCall, j *removeJob) error {
	if !j.hasUniq {
		return nil
	}
	j.unique = st.derived(r.base, protocol.SuffixUnique, j.uniq, "")
	deny, err := r.firstDenied(host.KeyRead|host.KeyDelete, [][]byte{j.unique})
	if err != nil {
		return err
	}
	if deny >= 0 {
		return host.ErrNoPerm
	}
	h := fieldAt(r.c.Read().Cmd(host.GET).Arg(j.unique).RunAll(), 0)
	if h.Err != nil {
		return h.Err
	}
	j.release = h.Val.Is(string(j.id))
	return nil
}

// find is the index of job id in the removal, or -1.
func (st *removeState) find(id []byte) int {
	for i := range st.jobs {
		if string(st.jobs[i].id) == string(id) {
			return i
		}
	}
	return -1
}

// descend adds the descendants of the waiting jobs of the removal, breadth
// first, up to MaxCount jobs in all: per waiting job ZRANGE kids, per child
// not in the removal yet its keys' ACL check, its row, its unique key.
func (st *removeState) descend(r *verbCall) error {
	for i := 0; i < len(st.jobs) && len(st.jobs) < protocol.MaxCount; i++ {
		if string(st.jobs[i].state) != protocol.StateWaiting {
			continue
		}
		kids := st.keys[st.jobs[i].keys+2]
		res := r.c.Read().Cmd(host.ZRANGE).Arg(kids).Str("0").Int(int64(protocol.MaxCount - len(st.jobs) - 1)).RunAll()
		l := listAt(res, 0, &st.scratch, st.kids)
		if l.Err != nil {
			return l.Err
		}
		st.kids = l.Val
		for _, cid := range st.kids {
			if !grammar.ID(cid) || st.find(cid) >= 0 || len(st.jobs) >= protocol.MaxCount {
				continue
			}
			j := st.jobKeys(r.base, cid)
			deny, err := r.firstDenied(host.KeyRead|host.KeyDelete, st.keys[j.keys:j.keys+5])
			if err != nil {
				return err
			}
			if deny >= 0 {
				return host.ErrNoPerm
			}
			b := r.c.Read()
			readJobRow(b, j.row)
			ok, err := st.takeRow(b.RunAll(), 0, &j)
			if err != nil {
				return err
			}
			if !ok {
				st.keys = st.keys[:j.keys]
				continue
			}
			if err := st.readUnique(r, &j); err != nil {
				return err
			}
			st.jobs = append(st.jobs, j)
		}
	}
	return nil
}

// rowAndLogsACL checks a job's row and its logs against the caller's ACL,
// each with its own access: one check with both accesses, and only when it
// is refused, one check per key. rowOK is false when the row is denied (its
// read is then the refusal, and it is not read); logsErr is ErrNoPerm when
// the logs are denied.
func rowAndLogsACL(r *verbCall, row, logs []byte, rowAccess, logsAccess host.KeyAccess) (rowOK bool, logsErr, err error) {
	if err := r.c.CheckKeys(rowAccess|logsAccess, row, logs); err == nil {
		return true, nil, nil
	} else if err = checkErr(err); err != nil {
		return false, nil, err
	}
	if err := r.c.CheckKeys(rowAccess, row); err != nil {
		if err = checkErr(err); err != nil {
			return false, nil, err
		}
		return false, nil, nil
	}
	if err := r.c.CheckKeys(logsAccess, logs); err != nil {
		if err = checkErr(err); err != nil {
			return false, nil, err
		}
		return true, host.ErrNoPerm, nil
	}
	return true, nil, nil // allowed one by one: the rules changed between the checks
}

// removeState is REMOVE's scratch between commands.
type removeState struct {
	scratch
	jobs  []removeJob
	keys  [][]byte
	kids  [][]byte
	sets  [5][]byte
	plan  []verdict.RemoveJob
	moves []verdict.RemoveMove
	lanes laneAcct
	flow  flowAcct
	// events are the call's job events.
	events jobEvents
}

var removes pool[removeState]
