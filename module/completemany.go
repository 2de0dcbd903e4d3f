package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// completeManyArgsPerJob is the number of ARGV entries per job in
// COMPLETEMANY: id, token, result.
const completeManyArgsPerJob = 3

// completeMany is EMQ.COMPLETEMANY (internal/lua/completemany.lua): COMPLETE for 1 to
// 1000 jobs, each with its own outcome. Crossings: the command, the ACL
// check of the rows and their logs, one read batch (the fence, every row and
// its place in active, stats completed); for the completing jobs with a
// unique key, their ACL check and one read batch; with a job completed, the
// guard and one write batch.
func completeMany(c *host.Call) error {
	// shape and layout: numkeys 4 (base version stats active), ARGV a count
	// n then n triples id token result
	r, err := prelude(c, protocol.CompleteMany, counted(completeManyArgsPerJob))
	if err != nil {
		return err
	}
	st := completeManys.get()
	defer completeManys.put(st)
	if err := st.start(&r); err != nil {
		return err
	}
	// fence and domain reads, driven by the verdict
	s := &st.seen
	step, err := drive(func() verdict.CompleteManyStep { return verdict.CompleteMany(s) },
		func(step verdict.CompleteManyStep) error { return st.read(&r, step) })
	if err != nil {
		return err
	}
	v := step.Verdict
	if v.Done > 0 {
		if err := st.write(&r, v); err != nil {
			return err
		}
	}
	// the reply: each job's outcome, in argument order
	c.ReplyArray(len(v.Outcomes))
	for _, o := range v.Outcomes {
		c.ReplyInt(o.Reply)
	}
	return nil
}

// start checks the values and builds each job's keys: the rows and their
// logs, outside the key-spec, are checked against the caller's ACL first
// (the rows read then deleted, the logs deleted; the parents' flow keys
// once their deps are read).
func (st *completeManyState) start(r *verbCall) error {
	st.reset()
	st.lanes.reset(&st.scratch)
	st.flow.reset(&st.scratch)
	st.completed = nil
	st.evs, st.kinds, st.kindsRead = st.evs[:0], st.kinds[:0], false
	// values, triple by triple: the id (bad, or named earlier in the
	// call), the result (bad when too long); the
	// token is any bytes
	var err error
	if st.sorted, err = verdict.CompleteManyValues(r.args, r.n, st.sorted); err != nil {
		return err
	}
	s := &st.seen
	*s = verdict.CompleteManySeen{Jobs: grow(s.Jobs, r.n), Outcomes: s.Outcomes, Holders: s.Holders, Cancelled: s.Cancelled}
	st.rows, st.logs, st.uniques = st.rows[:0], st.logs[:0], grow(st.uniques, r.n)
	st.parents, st.flowKeys = grow(st.parents, r.n), st.flowKeys[:0]
	for i := range s.Jobs {
		j := &s.Jobs[i]
		j.ID, j.Token, j.Result = r.args[st.id(i)], r.args[st.id(i)+1], r.args[st.id(i)+2]
		st.rows = append(st.rows, st.derived(r.base, protocol.SuffixJob, j.ID, ""))
		st.logs = append(st.logs, st.derived(r.base, protocol.SuffixJob, j.ID, protocol.SuffixLogs))
	}
	st.nrows, err = st.checkRows(r)
	return err
}

// read performs the read step needs (drive).
func (st *completeManyState) read(r *verbCall, step verdict.CompleteManyStep) error {
	s := &st.seen
	var err error
	switch step.Need {
	case verdict.CompleteManyFirst:
		return st.readFirst(r)
	case verdict.CompleteManyCancelledRows:
		st.readCancelled(r, step.Verdict.Cancelled)
	case verdict.CompleteManyHolders:
		return st.readHolders(r, step.Verdict.Holders)
	case verdict.CompleteManyResultMax:
		s.ResultMax, err = readResultMax(r, &st.scratch)
	case verdict.CompleteManyFlow:
		return st.readFlow(r, step.Verdict)
	case verdict.CompleteManyLanes:
		s.Lanes, err = st.readLanes(r, step.Verdict.Outcomes)
	case verdict.CompleteManyFlowTypes:
		s.FlowTypes, err = completedFlowTypes(r, &st.flow, st.completed != nil, st.completed)
	}
	return err
}

// readFirst is the first batch: GET version; per job HMGET row att uniq and
// ZSCORE active id; HGET stats completed: the verdict takes them job by job
// (active by reference: no string made for it per job); HGET meta rowopts;
// then, per job whose row has att, HMGET row ev kind while rowopts is 2,
// HMGET row lane parent keep wait ev deps unless it is 0 or 2.
func (st *completeManyState) readFirst(r *verbCall) error {
	s, nrows := &st.seen, st.nrows
	meta, err := rowOptsMeta(r, &st.scratch)
	if err != nil {
		return err
	}
	b := r.fenced()
	for i := range nrows {
		b.Cmd(host.HMGET).Arg(st.rows[i]).Str(protocol.FieldAttempts).Str(protocol.FieldUnique).
			Cmd(host.ZSCORE).Argv(r.keyArgv(3)).Argv(r.argv(st.id(i)))
	}
	b.Cmd(host.HGET).Arg(r.keys[2]).Str(statCompleted)
	if meta != nil {
		b.Cmd(host.HGET).Arg(meta).Str(protocol.MetaRowOpts)
	}
	res := b.RunAll()
	s.Version = st.keep(fieldAt(res, 0))
	s.Completed = st.keep(fieldAt(res, 1+2*nrows))
	mode := rowOptsMode(meta, res, 2+2*nrows)
	st.evs, st.kinds = grow(st.evs, r.n), grow(st.kinds, r.n)
	clear(st.evs)
	clear(st.kinds)
	st.kindsRead = mode == rowOptsEv
	for i := range nrows {
		j := &s.Jobs[i]
		j.Row = verdict.Reply[[6]verdict.Field]{Made: true}
		var f [2]verdict.Field
		j.Row.Err = fieldsAt(res, 1+2*i, f[:])
		for k := range f {
			j.Row.Val[k].Bytes, j.Row.Val[k].Set = st.copy(f[k].Bytes), f[k].Set
		}
		j.Score = st.keep(fieldAt(res, 2+2*i))
		st.parents[i] = false
	}
	if mode != rowOptsNone {
		st.readRowFields(r, mode)
	}
	return st.checkFlowKeys(r)
}

// readRowFields reads the rest of the rows read as hashes with att: their
// ev and kind (rowopts mode rowOptsEv; the kind for the job's event), or
// all their other fields.
func (st *completeManyState) readRowFields(r *verbCall, mode int) {
	s, nrows := &st.seen, st.nrows
	b := r.c.Read()
	k := 0
	for i := range nrows {
		if j := &s.Jobs[i]; j.Row.Err == nil && j.Row.Val[0].Set {
			if mode == rowOptsEv {
				b.Cmd(host.HMGET).Arg(st.rows[i]).Str(protocol.FieldEvents).Str(protocol.FieldKind)
			} else {
				b.Cmd(host.HMGET).Arg(st.rows[i]).Str(protocol.FieldLane).Str(protocol.FieldParent).
					Str(protocol.FieldKeep).Str(protocol.FieldWait).Str(protocol.FieldEvents).Str(protocol.FieldDeps)
			}
			k++
		}
	}
	if k == 0 {
		return
	}
	res := b.RunAll()
	k = 0
	for i := range nrows {
		j := &s.Jobs[i]
		if j.Row.Err != nil || !j.Row.Val[0].Set {
			continue
		}
		if mode == rowOptsEv {
			var g [2]verdict.Field // ev kind
			j.Row.Err = fieldsAt(res, k, g[:])
			k++
			st.evs[i] = verdict.Field{Bytes: st.copy(g[0].Bytes), Set: g[0].Set}
			st.kinds[i] = verdict.Field{Bytes: st.copy(g[1].Bytes), Set: g[1].Set}
			continue
		}
		st.takeRowFields(r, i, res, k)
		k++
	}
}

// takeRowFields takes job i's row fields, reply k of res: lane parent keep
// wait, then ev and deps.
func (st *completeManyState) takeRowFields(r *verbCall, i int, res host.Results, k int) {
	j := &st.seen.Jobs[i]
	var f [6]verdict.Field
	j.Row.Err = fieldsAt(res, k, f[:])
	for n := range 4 {
		j.Row.Val[2+n].Bytes, j.Row.Val[2+n].Set = st.copy(f[n].Bytes), f[n].Set
	}
	st.evs[i] = verdict.Field{Bytes: st.copy(f[4].Bytes), Set: f[4].Set}
	// a parent (deps set): its flow keys are deleted with it
	if st.parents[i] = j.Row.Err == nil && f[5].Set; st.parents[i] {
		st.flowKeys = append(st.flowKeys, st.derived(r.base, protocol.SuffixJob, j.ID, protocol.SuffixKids),
			st.derived(r.base, protocol.SuffixJob, j.ID, protocol.SuffixResults),
			st.derived(r.base, protocol.SuffixJob, j.ID, protocol.SuffixFailures))
	}
}

// readCancelled reads, for the jobs not in active, whether each was
// cancelled.
func (st *completeManyState) readCancelled(r *verbCall, cancelled []int) {
	b := r.c.Read()
	for _, i := range cancelled {
		b.Cmd(host.HGET).Arg(st.rows[i]).Str(protocol.FieldCancelled)
	}
	res := b.RunAll()
	for k, i := range cancelled {
		st.seen.Jobs[i].Cancelled = fieldAt(res, k)
	}
}

// readFlow is the flow accounting, up to the verdict's limit, in argument
// order: at the first job retained, the caller's ACL on completed; each
// job's outcome and parent (a denied completed stops the jobs there).
func (st *completeManyState) readFlow(r *verbCall, v verdict.CompleteManyVerdict) error {
	s := &st.seen
	out, limit := v.Outcomes, v.Limit
	var denied error
	for i, o := range out[:limit] {
		if o.Reply == verdict.CompleteManyDone && o.Keep {
			var err error
			if denied, err = st.retainedACL(r, true, &st.completed); err != nil {
				return err
			}
			if denied != nil {
				limit = i
			}
			break
		}
	}
	for i, o := range out[:limit] {
		if o.Reply == verdict.CompleteManyDone {
			st.flow.finish(s.Jobs[i].ID, verdict.FinishCompleted, s.Jobs[i].Result, o.Parent, verdict.Field{}, o.Wait)
		}
	}
	refusal, err := st.flow.read(r)
	if err != nil {
		return err
	}
	if refusal == nil {
		refusal = denied
	}
	s.Flow = verdict.Reply[struct{}]{Made: true, Err: refusal}
	return nil
}

// readLanes is the lane accounting of the completed jobs' lanes, in argument
// order: one active job less each; then of the parents released to a lane.
func (st *completeManyState) readLanes(r *verbCall, out []verdict.CompleteManyOutcome) (verdict.Reply[struct{}], error) {
	for i, o := range out {
		if l := verdict.LaneName(st.seen.Jobs[i].Row.Val[2]); o.Reply == verdict.CompleteManyDone && l != nil {
			st.lanes.add(r.base, l, 0, -1)
		}
	}
	st.flow.lanes(&st.lanes, r.base)
	return st.lanes.readReply(r)
}

// write is COMPLETEMANY's writes, with a job completed: the completed jobs'
// events in argument order, then the released parents', then the stream;
// the guard, then the Lua's three writes (writeJobs) and the accounting's.
func (st *completeManyState) write(r *verbCall, v verdict.CompleteManyVerdict) error {
	c, s := r.c, &st.seen
	st.events.reset()
	for i, o := range v.Outcomes {
		n := len(st.events.list)
		switch {
		case o.Reply != verdict.CompleteManyDone || i >= len(st.evs):
		case st.kindsRead:
			st.events.addKind(st.evs[i], protocol.EventCompleted, s.Jobs[i].ID, "", nil, st.kinds[i])
		default:
			st.events.add(st.evs[i], protocol.EventCompleted, s.Jobs[i].ID, "", nil)
		}
		// the id is the job's argument: the XADD passes it on
		st.events.idArgv(n, r.argv(st.id(i)))
	}
	st.flow.publish(&st.events)
	if err := st.events.check(r); err != nil {
		return err
	}
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	// the events first, in the same batch
	b := w.Write()
	ne := st.events.prepend(b)
	counter := ne + completedWrites(b, r, st.completed, st.doneJobs(r, v.Outcomes), v.Done, &st.flow, &st.lanes)
	res, err := b.Run()
	if err != nil {
		return failed(c, ne, res, err)
	}
	// every id removed was read in active
	if err := removedAll(c, res, ne, int(v.Done)); err != nil {
		return err
	}
	return predicted(c, res, counter, v.Completed)
}

// doneJobs lists the jobs completed, in argument order, for
// completedWrites.
func (st *completeManyState) doneJobs(r *verbCall, out []verdict.CompleteManyOutcome) []completedJob {
	st.done = st.done[:0]
	flows := st.flowKeys
	for i, o := range out {
		var own [][]byte
		if st.parents[i] {
			own, flows = flows[:3], flows[3:]
		}
		if o.Reply != verdict.CompleteManyDone {
			continue
		}
		j := completedJob{id: r.argv(st.id(i)), row: st.rows[i], logs: st.logs[i], flows: own, keep: o.Keep}
		if o.Release {
			j.unique = st.uniques[i]
		}
		if len(st.seen.Jobs[i].Result) > 0 {
			j.result = r.argv(st.id(i) + 2)
		}
		st.done = append(st.done, j)
	}
	return st.done
}

// completeManyState is COMPLETEMANY's scratch between commands.
type completeManyState struct {
	scratch
	seen verdict.CompleteManySeen
	// sorted is the value check's memory.
	sorted []uint64
	// rows, logs and uniques are each job's row, its logs and its unique
	// key (nil until read, and for a job without one).
	rows, logs, uniques [][]byte
	// parents are whether each job's row has deps; flowKeys are the kids,
	// results and failures of each parent, in argument order.
	parents  []bool
	flowKeys [][]byte
	// keys are the keys of one ACL check.
	keys [][]byte
	// nrows is how many rows the caller may read, from the first
	// (checkRows).
	nrows int
	// lanes is the lane accounting of the completed jobs' lanes.
	lanes laneAcct
	flow  flowAcct
	// completed is the retained set, when a job is retained.
	completed []byte
	// done are the jobs completed, for completedWrites.
	done []completedJob
	// evs are the rows' ev fields; events the call's job events. kinds
	// are the rows' kinds when kindsRead: the row reads listed them
	// (rowopts 2).
	evs       []verdict.Field
	kinds     []verdict.Field
	kindsRead bool
	events    jobEvents
}

var completeManys pool[completeManyState]

// id is the index in ARGV of job i's id; its token follows.
func (*completeManyState) id(i int) int { return 1 + completeManyArgsPerJob*i }

// checkRows checks the rows and their logs against the caller's ACL
// (completedRowsACL): a denied row is its job's row read's refusal, denied
// logs are their job's, refused where the writes would start.
func (st *completeManyState) checkRows(r *verbCall) (int, error) {
	jobs := st.seen.Jobs
	nrows, err := completedRowsACL(r, &st.keys, st.rows, st.logs, func(i int) { jobs[i].Logs = host.ErrNoPerm })
	if err == nil && nrows < len(st.rows) {
		jobs[nrows].Row = denied[[6]verdict.Field]()
	}
	return nrows, err
}

// checkFlowKeys checks the parents' flow keys, which are only deleted,
// against the caller's ACL (delete): one check of all, and only when it is
// refused, parent by parent; a denied parent's are its job's Logs, refused
// where the writes would start.
func (st *completeManyState) checkFlowKeys(r *verbCall) error {
	if len(st.flowKeys) == 0 {
		return nil
	}
	if err := r.c.CheckKeys(host.KeyDelete, st.flowKeys...); err == nil {
		return nil
	} else if err := checkErr(err); err != nil {
		return err
	}
	flows := st.flowKeys
	for i, p := range st.parents {
		if !p {
			continue
		}
		if err := deletedFlowACL(r, flows[:3], func() { st.seen.Jobs[i].Logs = host.ErrNoPerm }); err != nil {
			return err
		}
		flows = flows[3:]
	}
	return nil
}

// readHolders builds the unique keys of the jobs in holders, checks them
// against the caller's ACL (read, then deleted) and reads them in one batch,
// GET unique:<uniq> of each up to the first denied one, whose read is then
// the refusal.
func (st *completeManyState) readHolders(r *verbCall, holders []int) error {
	jobs := st.seen.Jobs
	st.keys = st.keys[:0]
	for _, i := range holders {
		st.uniques[i] = st.derived(r.base, protocol.SuffixUnique, jobs[i].Row.Val[1].Bytes, "")
		st.keys = append(st.keys, st.uniques[i])
	}
	n := len(holders)
	deny, err := r.firstDenied(host.KeyRead|host.KeyDelete, st.keys)
	if err != nil {
		return err
	}
	if deny >= 0 {
		n = deny
		jobs[holders[deny]].Holder = denied[verdict.Field]()
	}
	if n == 0 {
		return nil
	}
	b := r.c.Read()
	for _, u := range st.keys[:n] {
		b.Cmd(host.GET).Arg(u)
	}
	res := b.RunAll()
	for k, i := range holders[:n] {
		// kept: the lanes' batch may come before the verdict's last look
		jobs[i].Holder = st.keep(fieldAt(res, k))
	}
	return nil
}
