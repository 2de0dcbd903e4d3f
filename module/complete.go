package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// complete is EMQ.COMPLETE (internal/lua/complete.lua): finish an active job; its row
// and logs go, its unique key is released. Crossings: the command, the ACL
// check of the row and its logs, one read batch (and, for a job with a
// unique key, its ACL check and one more read), the guard, one write batch.
func complete(c *host.Call) error {
	// shape and layout: numkeys 4 (base version stats active), ARGV id
	// token result
	r, err := prelude(c, protocol.Complete, exactly(3))
	if err != nil {
		return err
	}
	// values: the id, the result; the token is any bytes
	id, token, result := r.args[0], r.args[1], r.args[2]
	if !grammar.ID(id) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Complete.Name, "id"))
	}
	if len(result) > protocol.MaxResult {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Complete.Name, "result"))
	}
	st := completes.get()
	defer completes.put(st)
	if err := st.start(&r); err != nil {
		return err
	}
	// fence and domain reads, driven by the verdict
	s := &st.seen
	step, err := drive(func() verdict.CompleteStep { return verdict.Complete(id, token, result, s) },
		func(step verdict.CompleteStep) error { return st.read(&r, step) })
	if err != nil {
		return err
	}
	v := step.Verdict
	return goneOrWritten(c, v.Gone, func() error { return st.write(&r, v) })
}

// start readies the state for a call and checks the row and its logs,
// outside the key-spec, against the caller's ACL first: the row read then
// deleted, the logs deleted; a parent's flow keys (deleted) once its deps
// are read.
func (st *completeState) start(r *verbCall) error {
	st.reset()
	st.lanes.reset(&st.scratch)
	st.flow.reset(&st.scratch)
	st.completed, st.parent = nil, false
	st.events.reset()
	st.ev, st.kind, st.kindRead = verdict.Field{}, verdict.Field{}, false
	id := r.args[0]
	st.row = st.derived(r.base, protocol.SuffixJob, id, "")
	st.logs[0] = st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixLogs)
	s := &st.seen
	*s = verdict.CompleteSeen{}
	st.rows[0] = st.row
	nrows, err := completedRowsACL(r, &st.keys, st.rows[:], st.logs[:], func(int) { s.Logs = host.ErrNoPerm })
	if err != nil {
		return err
	}
	if st.rowOK = nrows == 1; !st.rowOK {
		s.Row = denied[[6]verdict.Field]()
	}
	return nil
}

// read performs the read step needs (drive).
func (st *completeState) read(r *verbCall, step verdict.CompleteStep) error {
	s := &st.seen
	var err error
	switch step.Need {
	case verdict.CompleteFirst:
		return st.readFirst(r)
	case verdict.CompleteCancelled:
		// not active: was it cancelled? (the row is read as a hash already)
		s.Cancelled = fieldAt(r.c.Read().Cmd(host.HGET).Arg(st.row).Str(protocol.FieldCancelled).RunAll(), 0)
	case verdict.CompleteHolder:
		return st.readHolder(r)
	case verdict.CompleteResultMax:
		s.ResultMax, err = readResultMax(r, &st.scratch)
	case verdict.CompleteFlow:
		// a retained job: the caller's ACL on completed; then its
		// outcome and its parent
		refusal, err := st.retainedACL(r, step.Verdict.Keep, &st.completed)
		if err == nil && refusal == nil {
			st.flow.finish(r.args[0], verdict.FinishCompleted, r.args[2], step.Parent, verdict.Field{}, step.Verdict.Wait)
			refusal, err = st.flow.read(r)
		}
		s.Flow = verdict.Reply[struct{}]{Made: true, Err: refusal}
		return err
	case verdict.CompleteLanes:
		// the job's lane: one active job less; the parents released to
		// a lane: one waiting job more
		if step.Lane != nil {
			st.lanes.add(r.base, step.Lane, 0, -1)
		}
		st.flow.lanes(&st.lanes, r.base)
		s.Lanes, err = st.lanes.readReply(r)
	case verdict.CompleteFlowTypes:
		s.FlowTypes, err = completedFlowTypes(r, &st.flow, step.Verdict.Keep, st.completed)
	}
	return err
}

// readFirst is the first batch: GET version, HMGET row att uniq, ZSCORE
// active id, HGET stats completed (the verdict takes them in this order),
// HGET meta rowopts; then, when the row has att, HGET row ev while rowopts
// is 2, HMGET row lane parent keep wait ev deps unless it is 0 or 2.
func (st *completeState) readFirst(r *verbCall) error {
	s := &st.seen
	meta, err := rowOptsMeta(r, &st.scratch)
	if err != nil {
		return err
	}
	b := r.fenced()
	if st.rowOK {
		b.Cmd(host.HMGET).Arg(st.row).Str(protocol.FieldAttempts).Str(protocol.FieldUnique)
	}
	b.Cmd(host.ZSCORE).Arg(r.keys[3]).Arg(r.args[0]).
		Cmd(host.HGET).Arg(r.keys[2]).Str(statCompleted)
	if meta != nil {
		b.Cmd(host.HGET).Arg(meta).Str(protocol.MetaRowOpts)
	}
	res := b.RunAll()
	s.Version = st.keep(fieldAt(res, 0))
	i := 1
	if st.rowOK {
		i++
	}
	// copied before the next read, which reuses res's memory
	s.Score, s.Completed = st.keep(fieldAt(res, i)), st.keep(fieldAt(res, i+1))
	if !st.rowOK {
		return nil
	}
	s.Row = verdict.Reply[[6]verdict.Field]{Made: true}
	var f [8]verdict.Field // the verdict's six, then ev and deps
	s.Row.Err = fieldsAt(res, 1, f[:2])
	for k := range 2 {
		s.Row.Val[k].Bytes, s.Row.Val[k].Set = st.copy(f[k].Bytes), f[k].Set
	}
	// HGET meta rowopts follows HGET stats completed
	if s.Row.Err == nil && f[0].Set {
		st.readRowRest(r, rowOptsMode(meta, res, i+2), &f)
	}
	st.ev = verdict.Field{Bytes: st.copy(f[6].Bytes), Set: f[6].Set}
	for k := 2; k < len(s.Row.Val); k++ {
		s.Row.Val[k].Bytes, s.Row.Val[k].Set = st.copy(f[k].Bytes), f[k].Set
	}
	// a parent (deps set): its flow keys are deleted with it
	if st.parent = s.Row.Err == nil && f[7].Set; st.parent {
		id := r.args[0]
		st.flowKeys = [3][]byte{st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixKids),
			st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixResults),
			st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixFailures)}
		return deletedFlowACL(r, st.flowKeys[:], func() { s.Logs = host.ErrNoPerm })
	}
	return nil
}

// readRowRest reads the row's fields after att uniq that mode says it may
// hold into f: ev and kind (the kind for the job's event, into st.kind),
// or lane parent keep wait ev deps.
func (st *completeState) readRowRest(r *verbCall, mode int, f *[8]verdict.Field) {
	s := &st.seen
	switch mode {
	case rowOptsEv:
		var g [2]verdict.Field // ev kind
		s.Row.Err = fieldsAt(r.c.Read().Cmd(host.HMGET).Arg(st.row).Str(protocol.FieldEvents).Str(protocol.FieldKind).RunAll(), 0, g[:])
		f[6] = g[0]
		// copied before the next read, which reuses the reply's memory
		st.kind, st.kindRead = verdict.Field{Bytes: st.copy(g[1].Bytes), Set: g[1].Set}, true
	case rowOptsAll:
		s.Row.Err = fieldsAt(r.c.Read().Cmd(host.HMGET).Arg(st.row).Str(protocol.FieldLane).Str(protocol.FieldParent).
			Str(protocol.FieldKeep).Str(protocol.FieldWait).Str(protocol.FieldEvents).Str(protocol.FieldDeps).RunAll(), 0, f[2:])
	}
}

// readHolder reads the unique key, derived from the row: its ACL, then GET.
func (st *completeState) readHolder(r *verbCall) error {
	s := &st.seen
	st.unique = st.derived(r.base, protocol.SuffixUnique, s.Row.Val[1].Bytes, "")
	deny, err := r.firstDenied(host.KeyRead|host.KeyDelete, [][]byte{st.unique})
	if err != nil {
		return err
	}
	if deny >= 0 {
		s.Holder = denied[verdict.Field]()
	} else {
		s.Holder = st.keep(fieldAt(r.c.Read().Cmd(host.GET).Arg(st.unique).RunAll(), 0))
	}
	return nil
}

// write is COMPLETE's writes: the job's event and its released parent's,
// then the stream; the guard, then the writes of the job completed
// (completedWrites).
func (st *completeState) write(r *verbCall, v verdict.CompleteVerdict) error {
	if st.kindRead {
		st.events.addKind(st.ev, protocol.EventCompleted, r.args[0], "", nil, st.kind)
	} else {
		st.events.add(st.ev, protocol.EventCompleted, r.args[0], "", nil)
	}
	st.flow.publish(&st.events)
	if err := st.events.check(r); err != nil {
		return err
	}
	w, err := r.c.BeginWrites()
	if err != nil {
		return err
	}
	// the events first, in the same batch
	b := w.Write()
	k := st.events.prepend(b)
	job := completedJob{id: r.argv(0), row: st.row, logs: st.logs[0], keep: v.Keep}
	if st.parent {
		job.flows = st.flowKeys[:]
	}
	if v.Release {
		job.unique = st.unique
	}
	if len(r.args[2]) > 0 {
		job.result = r.argv(2)
	}
	st.done[0] = job
	counter := k + completedWrites(b, r, st.completed, st.done[:], 1, &st.flow, &st.lanes)
	res, err := b.Run()
	if err != nil {
		return failed(r.c, k, res, err)
	}
	return predicted(r.c, res, counter, v.Completed)
}

// completedJob is one job COMPLETE or COMPLETEMANY completes, as its writes
// need it.
type completedJob struct {
	// id and result are the indexes of its id and its result among the
	// command's arguments (result 0: an empty result).
	id, result int
	// row and logs are its keys; flows a parent's kids, results and
	// failures (nil: not a parent), deleted with it.
	row, logs []byte
	flows     [][]byte
	// unique is its unique key when the job releases it, else nil.
	unique []byte
	// keep: retained, the row and the logs stay.
	keep bool
}

// completedWrites adds the writes of completing jobs, COMPLETE's and
// COMPLETEMANY's alike (the Lua's): ZREM active <ids…>; per retained job
// HSET row state completed [result <result>]; ZADD completed <now> <id> …
// of them; one DEL of the other jobs' rows, logs and flow keys and of the
// unique keys released; HINCRBY stats completed <done>; then the parents'
// writes and the lane accounting's (a freed slot can make a capped lane
// ready again, and signal). It returns the index of HINCRBY among the
// writes it added.
func completedWrites(b *host.Batch, r *verbCall, completed []byte, jobs []completedJob, done int64, flow *flowAcct, lanes *laneAcct) int {
	stats := r.keys[2]
	b.Cmd("ZREM").Arg(r.keys[3])
	for _, j := range jobs {
		b.Argv(j.id)
	}
	n, kept, del := 1, 0, false
	for _, j := range jobs {
		if j.keep {
			b.Cmd("HSET").Arg(j.row).Str(protocol.FieldState).Str(protocol.StateCompleted)
			if j.result > 0 {
				b.Str(protocol.FieldResult).Argv(j.result)
			}
			kept++
		}
		del = del || !j.keep || j.unique != nil
	}
	if kept > 0 {
		b.Cmd("ZADD").Arg(completed)
		for _, j := range jobs {
			if j.keep {
				b.Int(r.now).Argv(j.id)
			}
		}
		n += kept + 1
	}
	if del {
		b.Cmd("DEL")
		for _, j := range jobs {
			if !j.keep {
				b.Arg(j.row).Arg(j.logs)
				for _, k := range j.flows {
					b.Arg(k)
				}
			}
			if j.unique != nil {
				b.Arg(j.unique)
			}
		}
		n++
	}
	b.Cmd("HINCRBY").Arg(stats).Str(statCompleted).Int(done)
	accountWrites(b, r.now, stats, flow, lanes)
	return n
}

// completedFlowTypes is COMPLETE's and COMPLETEMANY's last read: ZCARD
// completed when a job is retained (keep), then the flows' types.
func completedFlowTypes(r *verbCall, flow *flowAcct, keep bool, completed []byte) (verdict.Reply[struct{}], error) {
	var refusal error
	if keep {
		refusal = intAt(r.c.Read().Cmd(host.ZCARD).Arg(completed).RunAll(), 0).Err
	}
	var err error
	if refusal == nil {
		refusal, err = flow.types(r, r.keys[2], 0)
	}
	return verdict.Reply[struct{}]{Made: true, Err: refusal}, err
}

// completedRowsACL checks the rows of jobs about to be completed (read,
// then deleted) and their logs (deleted) against the caller's ACL: one check
// of all with both accesses, and only when it is refused, the rows alone, to
// find the first denied one (its read is then the refusal, and the rows
// after it are not read), and the logs of the rows before it with their own
// access, one by one when needed. Denied logs are refused where the writes
// would start: deniedLogs is called with each one's index. It returns how
// many rows may be read. keys is scratch for the joint check. logs holds
// len(logs)/len(rows) delete-only keys per row (its logs), row by row.
func completedRowsACL(r *verbCall, keys *[][]byte, rows, logs [][]byte, deniedLogs func(i int)) (int, error) {
	per := len(logs) / len(rows)
	*keys = append(append((*keys)[:0], rows...), logs...)
	err := r.c.CheckKeys(host.KeyRead|host.KeyDelete, *keys...)
	if err == nil {
		return len(rows), nil
	}
	if err := checkErr(err); err != nil {
		return 0, err
	}
	nrows := len(rows)
	deny, err := r.firstDenied(host.KeyRead|host.KeyDelete, rows)
	if err != nil {
		return 0, err
	}
	if deny >= 0 {
		nrows = deny
	}
	logs = logs[:per*nrows]
	if len(logs) == 0 {
		return nrows, nil
	}
	if err := r.c.CheckKeys(host.KeyDelete, logs...); err == nil {
		return nrows, nil
	} else if err := checkErr(err); err != nil {
		return 0, err
	}
	for i, l := range logs {
		if err := r.c.CheckKeys(host.KeyDelete, l); err != nil {
			if err := checkErr(err); err != nil {
				return 0, err
			}
			deniedLogs(i / per)
		}
	}
	return nrows, nil
}

// completeState is COMPLETE's scratch between commands.
type completeState struct {
	scratch
	seen   verdict.CompleteSeen
	unique []byte
	// row is the job's row; rowOK whether the caller may read it.
	row   []byte
	rowOK bool
	// done is the job, for completedWrites.
	done [1]completedJob
	// rows, logs and keys hold the keys of the ACL check.
	rows [1][]byte
	logs [1][]byte
	keys [][]byte
	// parent is whether the row has deps; flowKeys are then its kids,
	// results and failures, deleted with it.
	parent   bool
	flowKeys [3][]byte
	lanes    laneAcct
	flow     flowAcct
	// completed is the retained set, when the job is retained.
	completed []byte
	// ev is the row's ev; events the call's job events. kind is the row's
	// kind when kindRead: the row read listed it (rowopts 2).
	ev       verdict.Field
	kind     verdict.Field
	kindRead bool
	events   jobEvents
}

var completes pool[completeState]

// deletedFlowACL checks a parent's flow keys, which are only deleted, against
// the caller's ACL (delete) and calls denied when they are refused: where
// the writes would start, as the logs.
func deletedFlowACL(r *verbCall, keys [][]byte, denied func()) error {
	if err := r.c.CheckKeys(host.KeyDelete, keys...); err != nil {
		if err := checkErr(err); err != nil {
			return err
		}
		denied()
	}
	return nil
}

// retainedACL checks completed against the caller's ACL (read and write)
// when the call retains a job, and returns the refusal.
func (s *scratch) retainedACL(r *verbCall, keep bool, completed *[]byte) (refusal, err error) {
	if !keep {
		return nil, nil
	}
	*completed = s.derived(r.base, protocol.SuffixCompleted, nil, "")
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate|host.KeyInsert, [][]byte{*completed})
	if err != nil || deny < 0 {
		return nil, err
	}
	return host.ErrNoPerm, nil
}

// readResultMax reads HGET meta result_max, after the caller's ACL on meta
// (read): a denial is the read's refusal.
func readResultMax(r *verbCall, s *scratch) (verdict.Reply[verdict.Field], error) {
	meta := s.derived(r.base, protocol.SuffixMeta, nil, "")
	deny, err := r.firstDenied(host.KeyRead, [][]byte{meta})
	if err != nil {
		return verdict.Reply[verdict.Field]{}, err
	}
	if deny >= 0 {
		return denied[verdict.Field](), nil
	}
	return s.keep(fieldAt(r.c.Read().Cmd(host.HGET).Arg(meta).Str(protocol.MetaResultMax).RunAll(), 0)), nil
}

// rowOptsMeta checks meta against the caller's ACL (read) for COMPLETE's
// and COMPLETEMANY's HGET meta rowopts: it returns meta's key, or nil when
// denied (every row field is read then, and nothing is refused).
func rowOptsMeta(r *verbCall, s *scratch) ([]byte, error) {
	meta := s.derived(r.base, protocol.SuffixMeta, nil, "")
	deny, err := r.firstDenied(host.KeyRead, [][]byte{meta})
	if err != nil || deny >= 0 {
		return nil, err
	}
	return meta, nil
}

// The rows' fields meta rowopts says COMPLETE and COMPLETEMANY read
// (rowOptsMode).
const (
	rowOptsNone = iota // att uniq
	rowOptsEv          // att uniq ev
	rowOptsAll         // att uniq lane parent keep wait ev deps
)

// rowOptsMode is which of the rows' lane parent keep wait ev deps are read
// (docs/PROTOCOL.md, "The queue's row flag"), from meta rowopts, the k-th
// reply of res: none when it is 0 or absent (a queue no row of which has
// them), ev alone when it is 2 (a queue whose rows have only ev); a denied
// meta (nil), one that is not a hash, or a flag of other bytes has them all
// read.
func rowOptsMode(meta []byte, res host.Results, k int) int {
	if meta == nil {
		return rowOptsAll
	}
	f := fieldAt(res, k)
	switch {
	case f.Err != nil:
		return rowOptsAll
	case verdict.RowFlagOff(f.Val):
		return rowOptsNone
	case f.Val.Is(protocol.RowOptsEvents):
		return rowOptsEv
	}
	return rowOptsAll
}
