package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// requeue is EMQ.REQUEUE (internal/lua/requeue.lua): send a dead job back to pending
// with a fresh set of attempts. Crossings: the command, the row's ACL check,
// one read batch (the fence and the row); for a dead job, one read batch (the
// types and the counter), the guard and one write batch.
func requeue(c *host.Call) error {
	// shape and layout: numkeys 6 (base version stats pending dead signal),
	// ARGV id
	r, err := prelude(c, protocol.Requeue, exactly(1))
	if err != nil {
		return err
	}
	// values: the id
	n, ok := grammar.Decimal(r.args[0], 1, protocol.MaxJobID)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Requeue.Name, "id"))
	}
	st := requeues.get()
	defer requeues.put(st)
	st.cancelled = false
	// the row is outside the key-spec: the caller's ACL first (read, then
	// written)
	if err := st.start(&r); err != nil {
		return err
	}
	// fence and domain reads, driven by the verdict
	s := &st.seen
	*s = verdict.RequeueSeen{}
	step, err := drive(func() verdict.RequeueStep { return verdict.Requeue(n, s) },
		func(step verdict.RequeueStep) error { return st.read(&r, step) })
	if err != nil {
		return err
	}
	v := step.Verdict
	return goneOrWritten(c, v.Gone, func() error { return st.write(&r, v) })
}

// jobCall is the state the verbs on one job's row outside the key-spec
// share (CANCEL, FAIL, REQUEUE, RESCHEDULE, RETRY): the call's scratch and
// lane accounting, the row with the ACL's verdict on it, the row's ev as
// read and the call's job events.
type jobCall struct {
	scratch
	lanes laneAcct
	// row is the job's row, deny the ACL's verdict on it (-1: allowed).
	row  []byte
	deny int
	// ev is the row's ev; events the call's job events.
	ev     verdict.Field
	events jobEvents
}

// start readies the state for a call and checks the row, outside the
// key-spec, against the caller's ACL first (rowACL): a denial is the row
// read's refusal, in its place after the fence.
func (j *jobCall) start(r *verbCall) (err error) {
	j.reset()
	j.lanes.reset(&j.scratch)
	j.events.reset()
	j.ev = verdict.Field{}
	j.row, j.deny, err = rowACL(r, &j.scratch)
	return err
}

// rowAt reads the row's HMGET of len(dst) fields then ev, res[i], into dst
// and j.ev, each copied to the scratch so the verdict can look at them
// after the next batch; the error is the row read's.
func (j *jobCall) rowAt(res host.Results, i int, dst []verdict.Field) error {
	err := fieldsEvAt(res, i, dst, &j.ev)
	for k := range dst {
		dst[k].Bytes = j.copy(dst[k].Bytes)
	}
	j.ev.Bytes = j.copy(j.ev.Bytes)
	return err
}

// rowACL builds the row of the job whose id is ARGV[1], outside the
// key-spec, and checks it against the caller's ACL (read, then written): it
// returns the row and the check's verdict (-1: allowed; a denial is the row
// read's refusal, in its place after the fence).
func rowACL(r *verbCall, s *scratch) (row []byte, deny int, err error) {
	row = s.derived(r.base, protocol.SuffixJob, r.args[0], "")
	deny, err = r.firstDenied(host.KeyRead|host.KeyUpdate, [][]byte{row})
	return row, deny, err
}

// read performs the read step needs (drive).
func (st *requeueState) read(r *verbCall, step verdict.RequeueStep) error {
	s := &st.seen
	var err error
	switch step.Need {
	case verdict.RequeueFirst:
		st.readFirst(r)
	case verdict.RequeueRest:
		// the types of the keys the writes touch (ZCARD dead, ZCARD pending,
		// which is also the signal's condition, LLEN signal), then HGET
		// stats requeued (its type and the counter HINCRBY predicts)
		res := r.c.Read().
			Cmd(host.ZCARD).Arg(r.keys[4]).
			Cmd(host.ZCARD).Arg(r.keys[3]).
			Cmd(host.LLEN).Arg(r.keys[5]).
			Cmd(host.HGET).Arg(r.keys[2]).Str(statRequeued).
			RunAll()
		s.Dead, s.Pending, s.Signal, s.Requeued = intAt(res, 0), intAt(res, 1), intAt(res, 2), fieldAt(res, 3)
	case verdict.RequeueLanes:
		// the job's lane: one waiting job more
		st.lanes.add(r.base, step.Lane, 1, 0)
		s.Lanes, err = st.lanes.readReply(r)
	}
	return err
}

// readFirst is GET version, HMGET row state att max prio lane parent
// onfail cfail (which types the row), then ev and cancelled.
func (st *requeueState) readFirst(r *verbCall) {
	s := &st.seen
	b := r.fenced()
	if st.deny < 0 {
		b.Cmd(host.HMGET).Arg(st.row).Str(protocol.FieldState).Str(protocol.FieldAttempts).Str(protocol.FieldMax).Str(protocol.FieldPriority).Str(protocol.FieldLane).
			Str(protocol.FieldParent).Str(protocol.FieldOnFail).Str(protocol.FieldChildFail).Str(protocol.FieldEvents).
			Str(protocol.FieldCancelled)
	}
	res := b.RunAll()
	s.Version = st.keep(fieldAt(res, 0))
	if st.deny >= 0 {
		s.Row = denied[[]verdict.Field]()
		return
	}
	// the verdict's eight, then ev and cancelled
	var all [10]verdict.Field
	err := fieldsAt(res, 1, all[:])
	f := st.fields[:]
	for i := range f {
		f[i] = verdict.Field{Bytes: st.copy(all[i].Bytes), Set: all[i].Set}
	}
	st.ev = verdict.Field{Bytes: st.copy(all[8].Bytes), Set: all[8].Set}
	st.cancelled = all[9].Set
	s.Row = verdict.Reply[[]verdict.Field]{Made: true, Val: f, Err: err}
}

// write is REQUEUE's writes: the job's requeued event, then the stream; the
// guard, then the writes in the Lua's order (backWrites): ZREM dead, HSET
// row state pending max <att+max>, ZADD pending <score>, HINCRBY stats
// requeued (predicted), the signal (in one write when the list held at most
// one element).
func (st *requeueState) write(r *verbCall, v verdict.RequeueVerdict) error {
	c := r.c
	st.events.add(st.ev, protocol.EventRequeued, r.args[0], "", nil)
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
	// a child runs on its own from now on; a parent forgets its cfail;
	// a cancelled job is one no more
	f := st.fields[5:8]
	forget := f[0].Set || f[1].Set || f[2].Set || st.cancelled
	b := w.Write()
	set := r.keys[3]
	if v.Lane != nil {
		set = st.lanes.keys[0]
	}
	counter := backWrites(b, r.args[0], jobBack{from: r.keys[4], row: st.row, set: set, score: v.Score, max: v.Max, setMax: true, forget: forget, stats: r.keys[2],
		signal: v.Signal, sig: r.keys[5], held: st.seen.Signal.Val}, &st.lanes)
	res, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	return predicted(c, res, counter, v.Requeued)
}

// jobBack is a job sent back to pending, REQUEUE's and RETRY's, as
// backWrites writes it.
type jobBack struct {
	// from is the set it leaves; row its row; score its score in set,
	// pending or its lane's.
	from, row, set []byte
	score          int64
	// max, with setMax, is its new max.
	max    int64
	setMax bool
	// forget: HDEL row parent onfail cfail cancelled.
	forget bool
	// stats, when not nil: HINCRBY stats requeued 1.
	stats []byte
	// signal: push the signal list, key sig, which held held elements;
	// also when a lane wakes.
	signal bool
	sig    []byte
	held   int64
}

// backWrites adds the writes of a job sent back to pending, REQUEUE's and
// RETRY's alike, in the Lua's order: ZREM <from> <id>; HSET row state
// pending [max <max>]; [HDEL row parent onfail cfail cancelled]; ZADD
// pending (or the lane's set) <score> <id>; [HINCRBY stats requeued 1]; the
// lane accounting's; the signal. It returns the index of HINCRBY (0: none).
func backWrites(b *host.Batch, id []byte, j jobBack, lanes *laneAcct) int {
	b.Cmd("ZREM").Arg(j.from).Arg(id).
		Cmd("HSET").Arg(j.row).Str(protocol.FieldState).Str(protocol.StatePending)
	if j.setMax {
		b.Str(protocol.FieldMax).Int(j.max)
	}
	counter := 0
	if j.forget {
		b.Cmd("HDEL").Arg(j.row).Str(protocol.FieldParent).Str(protocol.FieldOnFail).Str(protocol.FieldChildFail).Str(protocol.FieldCancelled)
		counter++
	}
	b.Cmd("ZADD").Arg(j.set).Int(j.score).Arg(id)
	if j.stats != nil {
		b.Cmd("HINCRBY").Arg(j.stats).Str(statRequeued).Int(1)
		counter += 3
	}
	lanes.writes(b)
	if j.signal || lanes.wakes() {
		signalPush(b, j.sig, j.held)
	}
	return counter
}

// requeueState is REQUEUE's scratch between commands.
type requeueState struct {
	jobCall
	seen   verdict.RequeueSeen
	fields [8]verdict.Field
	// cancelled: the row's cancelled field is present.
	cancelled bool
}

var requeues pool[requeueState]
