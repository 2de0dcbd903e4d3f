package main

import (
	"slices"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// add is EMQ.ADD (internal/lua/add.lua): add 1..1000 jobs, each pending or delayed.
// Crossings: the command, one read batch (the fence, meta seq and the types
// of stats, pending, delayed and signal), the ACL check of the unique keys
// and the new rows, one read batch of them, the guard, one write batch.
func add(c *host.Call) error {
	// shape and layout: numkeys 7 (base version meta stats pending delayed
	// signal), ARGV a count n, a count k of option columns and their names,
	// then n groups of 8 + k
	r, err := prelude(c, protocol.Add, withOptions(protocol.AddArgsPerJob))
	if err != nil {
		return err
	}
	st := adds.get()
	defer adds.put(st)
	in := addInput{args: r.args, n: r.n, k: r.k, argv: true,
		meta: r.keys[2], stats: r.keys[3], pending: r.keys[4], delayed: r.keys[5], signal: r.keys[6]}
	st.begin(in)
	// values: the option names, then job by job
	if err := st.values(in, r.now); err != nil {
		return err
	}
	// fence and domain reads, driven by the verdict; its first batch is
	// the fence and ADD's first reads
	v, err := st.decide(&r)
	if err != nil {
		return err
	}
	// the jobs' added events, when meta events_max is on, then the stream
	if err := st.checkEvents(&r); err != nil {
		return err
	}
	// guard, then the writes
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	// the jobs' events first, in the same batch
	b := w.Write()
	k := st.events.prepend(b)
	added := st.writeJobs(&r, b, v)
	res, err := b.Run()
	if err != nil {
		return failed(c, k, res, err)
	}
	if err := st.checkWrites(c, res, k, added, v); err != nil {
		return err
	}
	// the reply: the new ids, in argument order
	c.ReplyArray(len(st.ids))
	for _, id := range st.ids {
		c.ReplyBulk(id)
	}
	return nil
}

// addInput is what ADD's path adds: ARGV in ADD's form (a count n, a count
// k of option columns and their names, n groups of 8 + k), whose count the
// shape checked, and the keys of ADD's K it writes. ADD passes its own
// ARGV; a verb that adds a job it builds (a schedule's occurrence) passes
// values of its own in the same form.
type addInput struct {
	args [][]byte
	n, k int
	// argv: args are the command's own ARGV, which the writes pass on by
	// reference (a payload is not copied); else they are copied.
	argv                                  bool
	meta, stats, pending, delayed, signal []byte
	// sched, when not nil, is the schedule that enqueues the jobs: each
	// row ends with sched <sched> sat <sat[i]>.
	sched []byte
	sat   [][]byte
}

// begin resets the state for a new call of in's keys.
func (st *addState) begin(in addInput) {
	st.reset()
	st.in = in
	st.jobFields, st.rowOpts = verdict.Field{}, verdict.Field{}
	s := &st.seen
	*s = verdict.AddSeen{Holders: s.Holders[:0]}
}

// values checks in's values: the option names, then job by job
// (verdict.AddOptions, verdict.AddValues), and folds the due times into
// the delays at the server's time now. A verb whose first batch made ADD's
// first reads (takeFirst) calls it after them: it keeps them.
func (st *addState) values(in addInput, now int64) error {
	st.in = in
	cols, err := verdict.AddOptions(in.args[2 : 2+in.k])
	if err != nil {
		return err
	}
	st.cols = cols
	if st.jobs, err = verdict.AddValues(in.args, in.n, in.k, cols, st.jobs[:0]); err != nil {
		return err
	}
	if cols.Due >= 0 {
		// a due time is compared with the server's clock, read once
		verdict.AddDue(st.jobs, now)
	}
	st.parents = 0
	for _, j := range st.jobs {
		if j.IsParent() {
			st.parents++
		}
	}
	st.lanes.reset(&st.scratch)
	return nil
}

// firstReads adds ADD's first domain reads to b, after what b holds: HMGET
// meta seq keep_done keep_done_max events_max jobfields rowopts, HGET stats
// added, ZCARD
// pending, ZCARD delayed, LLEN signal.
func (st *addState) firstReads(b *host.ReadBatch) *host.ReadBatch {
	in := &st.in
	return b.Cmd(host.HMGET).Arg(in.meta).Str(protocol.MetaSeq).Str(protocol.MetaKeepDone).Str(protocol.MetaKeepDoneMax).Str(protocol.MetaEventsMax).Str(protocol.MetaJobFields).Str(protocol.MetaRowOpts).
		Cmd(host.HGET).Arg(in.stats).Str(statAdded).
		Cmd(host.ZCARD).Arg(in.pending).
		Cmd(host.ZCARD).Arg(in.delayed).
		Cmd(host.LLEN).Arg(in.signal)
}

// takeFirst takes the replies of firstReads, the i-th reply of res on, and
// the fence's reply version (already judged by a verb that reads the fence
// with reads of its own).
func (st *addState) takeFirst(res host.Results, i int, version verdict.Reply[verdict.Field]) {
	s := &st.seen
	var m [6]verdict.Field
	s.Seq = verdict.Reply[verdict.Field]{Made: true, Err: fieldsAt(res, i, m[:])}
	s.Seq.Val.Bytes, s.Seq.Val.Set = st.copy(m[0].Bytes), m[0].Set
	s.Keep = [2]verdict.Field{{Bytes: st.copy(m[1].Bytes), Set: m[1].Set}, {Bytes: st.copy(m[2].Bytes), Set: m[2].Set}}
	st.ev = verdict.Field{Bytes: st.copy(m[3].Bytes), Set: m[3].Set}
	st.jobFields = verdict.Field{Bytes: st.copy(m[4].Bytes), Set: m[4].Set}
	st.rowOpts = verdict.Field{Bytes: st.copy(m[5].Bytes), Set: m[5].Set}
	s.Version, s.Added = st.keep(version), st.keep(fieldAt(res, i+1))
	s.Pending, s.Delayed, s.Signal = intAt(res, i+2), intAt(res, i+3), intAt(res, i+4)
}

// decide runs ADD's verdict and the reads it asks for: the fence and the
// first reads in one batch (unless takeFirst already took them), the new
// rows and unique keys, the lanes. It returns the verdict or the refusal.
func (st *addState) decide(r *verbCall) (verdict.AddVerdict, error) {
	s := &st.seen
	step, err := drive(func() verdict.AddStep { return verdict.Add(st.jobs, s) },
		func(step verdict.AddStep) error { return st.read(r, step) })
	return step.Verdict, err
}

// read performs the read step needs (drive).
func (st *addState) read(r *verbCall, step verdict.AddStep) error {
	var err error
	switch step.Need {
	case verdict.AddFirst:
		// GET version, HMGET meta seq …, HGET stats added, ZCARD
		// pending, ZCARD delayed, LLEN signal: the verdict takes them
		// in its order
		res := st.firstReads(r.fenced()).RunAll()
		st.takeFirst(res, 1, fieldAt(res, 0))
	case verdict.AddKeys:
		return st.readKeys(r, step.Verdict.First)
	case verdict.AddLanes:
		// each job that waits in its lane now counts in its waiting jobs
		st.laneOf = grow(st.laneOf, len(st.jobs))
		for i, j := range st.jobs {
			st.laneOf[i] = -1
			if j.Waits() {
				st.laneOf[i] = st.lanes.add(r.base, j.Lane, 1, 0)
			}
		}
		st.seen.Lanes, err = st.lanes.readReply(r)
	}
	return err
}

// checkEvents collects the jobs' added events, when meta events_max is on,
// and runs the events stream's reads (the verb's EMQKIND and EMQSTATE
// texts name r's verb).
func (st *addState) checkEvents(r *verbCall) error {
	st.events.reset()
	if !evOn(st.ev) {
		return nil
	}
	for i, j := range st.jobs {
		state := protocol.StatePending
		switch {
		case j.IsParent():
			state = protocol.StateWaiting
		case j.Delay > 0:
			state = protocol.StateDelayed
		}
		// the kind the row stores: the job's, when not empty
		st.events.addKind(st.ev, protocol.EventAdded, st.ids[i], protocol.EventStateField, []byte(state),
			verdict.Field{Bytes: j.Kind, Set: j.Kind != nil})
	}
	return st.events.check(r)
}

// arg adds the i-th entry of the input's args to b: by reference when they
// are the command's ARGV.
func (st *addState) arg(r *verbCall, b *host.Batch, i int) *host.Batch {
	if st.in.argv {
		return b.Argv(r.argv(i))
	}
	return b.Arg(st.in.args[i])
}

// writeJobs adds ADD's writes to b, after what b holds, but for the jobs'
// events (st.events.publish, the call's first writes), and returns the index
// of HINCRBY stats added among them (HINCRBY meta seq is the first).
// Every key written is typed: meta and stats by HGET, pending and delayed
// by ZCARD, signal by LLEN, the rows are absent (EXISTS) and SET takes any
// unique key. The writes are the Lua's, with the jobs' ZADDs merged into
// one per set (docs/PROTOCOL.md, ADD).
func (st *addState) writeJobs(r *verbCall, b *host.Batch, v verdict.AddVerdict) (added int) {
	in := &st.in
	n := int64(len(st.jobs))
	flag := st.writeMeta(b, v)
	at := st.decimal(r.now)
	toPending, toDelayed, toLanes := 0, 0, 0
	for i, j := range st.jobs {
		state := protocol.StatePending
		switch {
		case j.IsParent():
			state = protocol.StateWaiting
		case j.Delay > 0:
			state = protocol.StateDelayed
			toDelayed++
		case j.Lane != nil:
			toLanes++
		default:
			toPending++
		}
		st.writeRow(r, b, i, state, at, v.Keep)
	}
	st.writeSets(r, b, v, toPending, toLanes, toDelayed)
	if st.parents > 0 {
		st.writeParents(b)
	}
	for i, j := range st.jobs {
		if len(j.Unique) > 0 {
			b.Cmd("SET").Arg(st.uniques[i]).Arg(st.ids[i]).Str("PX")
			st.arg(r, b, j.Arg+verdict.AddUniqueTTL)
		}
	}
	b.Cmd("HINCRBY").Arg(in.stats).Str(statAdded).Int(n)
	added = 1 + flag + len(st.jobs) + min(toPending, 1) + min(toDelayed, 1) + st.lanes.len() + st.unique
	if st.parents > 0 {
		added += 1 + st.parents
	}
	st.lanes.writes(b)
	if v.Signal || st.lanes.wakes() {
		signalPush(b, in.signal, st.seen.Signal.Val)
	}
	return added
}

// writeMeta adds HINCRBY meta seq <n> and the queue's flags, and returns
// how many flags it wrote: a job storing kind, timeout or headers flags the
// queue; one storing lane, parent, deps, keep or wait flags it too, one
// storing ev alone (events on) as having ev only; a queue's first rows,
// when none does, mark it as having none.
func (st *addState) writeMeta(b *host.Batch, v verdict.AddVerdict) int {
	meta := st.in.meta
	b.Cmd("HINCRBY").Arg(meta).Str(protocol.MetaSeq).Int(int64(len(st.jobs)))
	flag := 0
	if verdict.AddFlagsJobFields(st.jobs, st.jobFields) {
		b.Cmd("HSET").Arg(meta).Str(protocol.MetaJobFields).Str(protocol.JobFieldsOn)
		flag = 1
	}
	if ro := verdict.AddRowOpts(st.jobs, v.Keep, evOn(st.ev), st.rowOpts); ro != "" {
		b.Cmd("HSET").Arg(meta).Str(protocol.MetaRowOpts).Str(ro)
		flag++
	}
	return flag
}

// writeRow adds job i's row: HSET row data [state] att [max] [prio] [bo] at
// [uniq] [lane] [keep] [parent] [onfail] [deps] [wait] [ev] [kind]
// [timeout] [headers]: state, max, prio and bo left out at their defaults.
func (st *addState) writeRow(r *verbCall, b *host.Batch, i int, state string, at []byte, keep bool) {
	in, j := &st.in, st.jobs[i]
	maxDefault, prioDefault, boDefault := verdict.AddRowDefaults(in.args, j)
	b.Cmd("HSET").Arg(st.rows[i]).Str(protocol.FieldData)
	st.arg(r, b, j.Arg+verdict.AddData)
	if state != protocol.DefaultState {
		b.Str(protocol.FieldState).Str(state)
	}
	b.Str(protocol.FieldAttempts).Str("0")
	if !maxDefault {
		st.arg(r, b.Str(protocol.FieldMax), j.Arg+verdict.AddAttempts)
	}
	if !prioDefault {
		st.arg(r, b.Str(protocol.FieldPriority), j.Arg+verdict.AddPriority)
	}
	if !boDefault {
		b.Str(protocol.FieldBackoff).Arg(st.backoff(in.args, j))
	}
	b.Str(protocol.FieldAdded).Arg(at)
	if len(j.Unique) > 0 {
		st.arg(r, b.Str(protocol.FieldUnique), j.Arg+verdict.AddUnique)
	}
	if j.Lane != nil {
		st.arg(r, b.Str(protocol.FieldLane), j.Arg+verdict.AddLaneArg(st.cols.Lane))
	}
	if keep {
		b.Str(protocol.FieldKeep).Str("1")
	}
	if j.Parent >= 0 {
		b.Str(protocol.FieldParent).Arg(st.ids[j.Parent])
	}
	st.writeRowOptions(b, i)
}

// writeRowOptions adds the rest of job i's row: [onfail] [deps] [wait]
// [ev] [kind] [timeout] [headers], and a fired schedule's fields.
func (st *addState) writeRowOptions(b *host.Batch, i int) {
	in, j := &st.in, st.jobs[i]
	if j.OnFail != nil {
		b.Str(protocol.FieldOnFail).Arg(j.OnFail)
	}
	if j.IsParent() {
		b.Str(protocol.FieldDeps).Int(int64(j.Kids))
	}
	if j.Wait != nil {
		b.Str(protocol.FieldWait).Arg(j.Wait)
	}
	if evOn(st.ev) {
		b.Str(protocol.FieldEvents).Arg(st.ev.Bytes)
	}
	if j.Kind != nil {
		b.Str(protocol.FieldKind).Arg(j.Kind)
	}
	if j.Timeout != nil {
		b.Str(protocol.FieldTimeout).Arg(j.Timeout)
	}
	if j.Headers != nil {
		b.Str(protocol.FieldHeaders).Arg(j.Headers)
	}
	if in.sched != nil {
		b.Str(protocol.FieldSchedule).Arg(in.sched).Str(protocol.FieldScheduledAt).Arg(in.sat[i])
	}
}

// writeSets adds one ZADD pending <score> <id> …, one ZADD lane:<l> <score>
// <id> … per lane, in the order the lanes were first met, and one ZADD
// delayed <now+delay> <id> …: the ids are distinct, so each set ends with
// the members, order and encoding one ZADD per job gives.
func (st *addState) writeSets(r *verbCall, b *host.Batch, v verdict.AddVerdict, toPending, toLanes, toDelayed int) {
	if toPending > 0 {
		b.Cmd("ZADD").Arg(st.in.pending)
		for i, j := range st.jobs {
			if j.Ready() {
				b.Int(protocol.PendingScore(j.Priority, v.First+int64(i))).Arg(st.ids[i])
			}
		}
	}
	if toLanes > 0 {
		st.byLane = st.byLane[:0]
		for i, l := range st.laneOf {
			if l >= 0 {
				st.byLane = append(st.byLane, i)
			}
		}
		slices.SortStableFunc(st.byLane, func(a, b int) int { return st.laneOf[a] - st.laneOf[b] })
		for k, i := range st.byLane {
			if k == 0 || st.laneOf[i] != st.laneOf[st.byLane[k-1]] {
				b.Cmd("ZADD").Arg(st.lanes.keys[st.laneOf[i]])
			}
			b.Int(protocol.PendingScore(st.jobs[i].Priority, v.First+int64(i))).Arg(st.ids[i])
		}
	}
	if toDelayed > 0 {
		b.Cmd("ZADD").Arg(st.in.delayed)
		for i, j := range st.jobs {
			if j.Delay > 0 {
				b.Int(r.now + j.Delay).Arg(st.ids[i])
			}
		}
	}
}

// writeParents adds, for the parents, one ZADD waiting <id> <id> …, and per
// parent ZADD job:<id>:kids <child> <child> ….
func (st *addState) writeParents(b *host.Batch) {
	b.Cmd("ZADD").Arg(st.waiting)
	for i, j := range st.jobs {
		if j.IsParent() {
			b.Arg(st.ids[i]).Arg(st.ids[i])
		}
	}
	for i, j := range st.jobs {
		if !j.IsParent() {
			continue
		}
		b.Cmd("ZADD").Arg(st.kids[i])
		for c, k := range st.jobs[i+1:] {
			if k.Parent == i {
				b.Arg(st.ids[i+1+c]).Arg(st.ids[i+1+c])
			}
		}
	}
}

// checkWrites checks the replies of writeJobs' HINCRBYs, written from the
// from-th command of res on, against the verdict's predictions.
func (st *addState) checkWrites(c *host.Call, res host.Results, from, added int, v verdict.AddVerdict) error {
	if err := predicted(c, res, from, v.Seq); err != nil {
		return err
	}
	return predicted(c, res, from+added, v.Added)
}

// addState is ADD's scratch between commands.
type addState struct {
	scratch
	// in is the call's input; cols its option columns.
	in   addInput
	cols verdict.AddColumns
	seen verdict.AddSeen
	jobs []verdict.AddJob
	// ids, rows and uniques are each job's new id, its row key and its
	// unique key (nil for none); unique counts the jobs with one.
	ids, rows, uniques [][]byte
	unique             int
	// keys are the derived keys to check and read, in the verdict's order.
	keys [][]byte
	// lanes is the lane accounting of the jobs that wait in a lane; laneOf
	// is each job's lane index in it (-1: none), byLane the jobs with one,
	// by lane.
	lanes  laneAcct
	laneOf []int
	byLane []int
	// parents counts the jobs named as a parent; kids is each job's
	// job:<id>:kids (nil when not a parent); waiting the waiting set.
	parents int
	kids    [][]byte
	waiting []byte
	// ev is meta events_max; events the jobs' added events.
	ev     verdict.Field
	events jobEvents
	// jobFields is meta jobfields as read (verdict.AddFlagsJobFields).
	jobFields verdict.Field
	// rowOpts is meta rowopts as read (verdict.AddRowOpts).
	rowOpts verdict.Field
}

var adds pool[addState]

// newKeys builds the new jobs' ids, rows, unique keys and a new parent's
// flow keys (probed with its row), and the keys of readKeys' ACL check:
// the unique keys, the rows, the flow keys.
func (st *addState) newKeys(r *verbCall, first int64) {
	s := &st.seen
	st.ids, st.rows, st.uniques, st.keys, st.unique = st.ids[:0], st.rows[:0], st.uniques[:0], st.keys[:0], 0
	s.Holders = s.Holders[:0]
	for i, j := range st.jobs {
		id := st.decimal(first + int64(i))
		st.ids = append(st.ids, id)
		st.rows = append(st.rows, st.derived(r.base, protocol.SuffixJob, id, ""))
		var u []byte
		if len(j.Unique) > 0 {
			u = st.derived(r.base, protocol.SuffixUnique, j.Unique, "")
			st.keys = append(st.keys, u)
			st.unique++
		}
		st.uniques = append(st.uniques, u)
		s.Holders = append(s.Holders, verdict.Reply[verdict.Field]{})
	}
	st.keys = append(st.keys, st.rows...)
	// a new parent's flow keys are probed with its row
	st.kids = st.kids[:0]
	for i, j := range st.jobs {
		var k []byte
		if j.IsParent() {
			k = st.derived(r.base, protocol.SuffixJob, st.ids[i], protocol.SuffixKids)
			st.keys = append(st.keys, k,
				st.derived(r.base, protocol.SuffixJob, st.ids[i], protocol.SuffixResults),
				st.derived(r.base, protocol.SuffixJob, st.ids[i], protocol.SuffixFailures))
		}
		st.kids = append(st.kids, k)
	}
}

// readKeys builds the new ids and the derived keys (rows, unique keys),
// checks them against the caller's ACL (a unique key is read then set, a
// row probed then written), and reads them in one batch: GET unique:<key>
// for each job with one, in order, then EXISTS of every new row, up to the
// first key denied. It fills the verdict's Holders and Rows.
func (st *addState) readKeys(r *verbCall, first int64) error {
	s := &st.seen
	st.newKeys(r, first)
	deny, err := r.firstDenied(host.KeyRead|host.KeyInsert, st.keys)
	if err != nil {
		return err
	}
	// the reads up to the first key denied, which is that read's refusal
	b := r.c.Read()
	gets := 0
	for i, u := range st.uniques {
		if u == nil {
			continue
		}
		if gets == deny {
			s.Holders[i] = denied[verdict.Field]()
			break
		}
		b.Cmd(host.GET).Arg(u)
		gets++
	}
	exists := deny < 0
	if exists {
		b.Cmd(host.EXISTS)
		for _, row := range st.keys[st.unique:] {
			b.Arg(row)
		}
	} else if deny >= st.unique {
		s.Rows = denied[int64]()
	}
	// the waiting set, typed when the call has parents (as internal/lua/add.lua,
	// with no ACL check of its own)
	waiting := exists && st.parents > 0
	if waiting {
		st.waiting = st.derived(r.base, protocol.SuffixWaiting, nil, "")
		b.Cmd(host.ZCARD).Arg(st.waiting)
	}
	if gets == 0 && !exists {
		return nil
	}
	res := b.RunAll()
	if waiting {
		s.Waiting = intAt(res, gets+1)
	}
	k := 0
	for i, u := range st.uniques {
		if u != nil && k < gets {
			s.Holders[i] = fieldAt(res, k)
			k++
		}
	}
	if exists {
		s.Rows = intAt(res, gets)
	}
	return nil
}

// backoff is a job's bo field, <backoff>:<backoff_ms>, in the scratch.
func (st *addState) backoff(args [][]byte, j verdict.AddJob) []byte {
	off := len(st.buf)
	st.buf = append(st.buf, args[j.Arg+verdict.AddBackoff]...)
	st.buf = append(st.buf, ':')
	st.buf = append(st.buf, args[j.Arg+verdict.AddBackoffMS]...)
	return st.buf[off:len(st.buf):len(st.buf)]
}
