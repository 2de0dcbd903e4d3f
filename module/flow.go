package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// flowAcct is one call's flow accounting (docs/PROTOCOL.md, "Flows";
// verdict.FlowRun; lib.lua flow_acc): the jobs that finished, each telling
// its parent and queueing its waited outcome, the parents' reads, their
// writes, and the outcomes. Every verb that finishes a job runs it the same
// way:
//
//	fa.reset(&st.scratch)
//	fa.finish(…)                  // per finished job, in the verb's order
//	err := fa.read(&r)            // the parents, after the verb's own reads
//	fa.lanes(&st.lanes, r.base)   // the parents released to a lane
//	…                             // the lane accounting, the verb's types
//	err = fa.types(&r, stats, d)  // after them
//	…                             // the verb's writes
//	fa.writes(b, …)               // then the flows', the lanes', then
//	fa.outcomes(b)                // the outcomes
//
// A call whose jobs name no parent and are not waited for reads and writes
// nothing here.
type flowAcct struct {
	s       *scratch
	events  []verdict.FlowEvent
	waits   []int64 // per event: its own outcome's wait (0: none)
	parents verdict.FlowParents
	res     verdict.FlowResult
	told    []int
	deaths  []verdict.FlowDeath
	// rows, results and failures are each parent's keys, in Rows order.
	rows, results, failures [][]byte
	outs                    []flowOutcome
	acl                     [][]byte
	checked                 bool
	// the fixed keys the writes touch, and what the types read
	waiting, pending, dead, signal []byte
	pendingLen, signalLen          int64
}

// flowOutcome is one waited job's outcome: RPUSH key val, PEXPIRE key wait.
type flowOutcome struct {
	key, val []byte
	wait     int64
}

func (fa *flowAcct) reset(s *scratch) {
	fa.s = s
	fa.events, fa.waits = fa.events[:0], fa.waits[:0]
	fa.parents.Reset()
	fa.res = verdict.FlowResult{Need: -1}
	fa.rows, fa.results, fa.failures = fa.rows[:0], fa.results[:0], fa.failures[:0]
	fa.outs = fa.outs[:0]
	fa.checked = false
	fa.pendingLen, fa.signalLen = 0, 0
}

// any reports whether the call has flow work: a parent told or an outcome.
func (fa *flowAcct) any() bool { return len(fa.res.Told) > 0 || len(fa.outs) > 0 }

// finish records that job id finished (kind, its result or error text):
// its outcome queued when wait > 0 (outcome r carries no text), then its
// parent told when parent is not nil (policy: its onfail field). text is
// kept as given: an argument of the command or a constant, valid until the
// handler returns; the other values are copied.
func (fa *flowAcct) finish(id []byte, kind verdict.Finish, text []byte, parent []byte, policy verdict.Field, wait int64) {
	if parent == nil && wait == 0 {
		return
	}
	s := fa.s
	ev := verdict.FlowEvent{Parent: s.copy(parent), Child: s.copy(id), Kind: kind, Text: text}
	if policy.Set {
		ev.Policy = s.copy(policy.Bytes)
	}
	fa.events = append(fa.events, ev)
	fa.waits = append(fa.waits, wait)
}

// parentless reports whether no finished job names a parent.
func (fa *flowAcct) parentless() bool {
	for _, ev := range fa.events {
		if ev.Parent != nil {
			return false
		}
	}
	return true
}

// read reads the parents the events meet, level by level, and runs the
// verdict: once, before the first parent, the caller's ACL on waiting,
// pending, dead, stats and signal; per parent its row, results and failures
// (read and write), then HMGET job:<p> att state deps cfail parent onfail
// lane prio wait. Then it queues the outcomes: each job's own, then the
// parents its finish made die. It returns the flows' refusal, or a host
// failure as the second value.
func (fa *flowAcct) read(r *verbCall) (refusal, err error) {
	if !fa.parentless() {
		if refusal, err := fa.readParents(r); refusal != nil || err != nil {
			return refusal, err
		}
	}
	d := 0
	for e, ev := range fa.events {
		if w := fa.waits[e]; w > 0 {
			fa.outcome(r.base, ev.Child, ev.Kind, ev.Text, w)
		}
		for ; d < len(fa.res.Deaths) && fa.res.Deaths[d].Event == e; d++ {
			p := &fa.parents.Rows[fa.res.Deaths[d].P]
			if w := p.Wait(); w > 0 {
				fa.outcome(r.base, p.ID, verdict.FinishDied, p.Err, w)
			}
		}
	}
	return nil, nil
}

func (fa *flowAcct) readParents(r *verbCall) (refusal, err error) {
	s := fa.s
	fa.waiting = s.derived(r.base, protocol.SuffixWaiting, nil, "")
	fa.pending = s.derived(r.base, protocol.SuffixPending, nil, "")
	fa.dead = s.derived(r.base, protocol.SuffixDead, nil, "")
	fa.signal = s.derived(r.base, protocol.SuffixSignal, nil, "")
	stats := s.derived(r.base, protocol.SuffixStats, nil, "")
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate|host.KeyInsert, [][]byte{fa.waiting, fa.pending, fa.dead, stats, fa.signal})
	if err != nil {
		return nil, err
	}
	if deny >= 0 {
		return host.ErrNoPerm, nil
	}
	for _, ev := range fa.events {
		if ev.Parent != nil {
			fa.parents.Meet(ev.Parent)
		}
	}
	for range protocol.MaxFlowDepth + protocol.MaxCount {
		// every parent met and not read yet, in one batch, up to the first
		// denied one (whose read is its refusal)
		start := len(fa.rows)
		for i := start; i < len(fa.parents.Rows); i++ {
			id := fa.parents.Rows[i].ID
			fa.rows = append(fa.rows, s.derived(r.base, protocol.SuffixJob, id, ""))
			fa.results = append(fa.results, s.derived(r.base, protocol.SuffixJob, id, protocol.SuffixResults))
			fa.failures = append(fa.failures, s.derived(r.base, protocol.SuffixJob, id, protocol.SuffixFailures))
		}
		if n := len(fa.rows); n > start {
			fa.acl = fa.acl[:0]
			for i := start; i < n; i++ {
				fa.acl = append(fa.acl, fa.rows[i], fa.results[i], fa.failures[i])
			}
			deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate|host.KeyInsert, fa.acl)
			if err != nil {
				return nil, err
			}
			upto := n
			if deny >= 0 {
				upto = start + deny/3
				for i := upto; i < n; i++ {
					fa.parents.Rows[i].Row = verdict.Failed[verdict.FlowRow](host.ErrNoPerm)
				}
			}
			if upto > start {
				b := r.c.Read()
				for i := start; i < upto; i++ {
					b.Cmd(host.HMGET).Arg(fa.rows[i])
					for _, f := range verdict.FlowParentFields {
						b.Str(f)
					}
				}
				res := b.RunAll()
				for i := start; i < upto; i++ {
					p := &fa.parents.Rows[i]
					p.Row = verdict.Reply[verdict.FlowRow]{Made: true}
					p.Row.Err = fieldsAt(res, i-start, p.Row.Val[:])
					for k := range p.Row.Val {
						p.Row.Val[k].Bytes = s.copy(p.Row.Val[k].Bytes)
					}
				}
			}
		}
		fa.res = verdict.FlowRun(fa.events, &fa.parents, fa.told, fa.deaths)
		fa.told, fa.deaths = fa.res.Told[:0], fa.res.Deaths[:0]
		if fa.res.Need < 0 {
			break
		}
	}
	if fa.res.Err != nil {
		return fa.res.Err, nil
	}
	if fa.res.Need >= 0 {
		return host.ErrInternal, nil
	}
	return nil, nil
}

// outcome queues a waited job's outcome.
func (fa *flowAcct) outcome(base, id []byte, kind verdict.Finish, text []byte, wait int64) {
	s := fa.s
	key := s.derived(base, protocol.SuffixDone, id, "")
	off := len(s.buf)
	switch kind {
	case verdict.FinishCompleted:
		s.buf = append(s.buf, 'c')
	case verdict.FinishDied:
		s.buf = append(s.buf, 'd')
	default:
		s.buf = append(s.buf, 'r')
	}
	if kind != verdict.FinishRemoved {
		s.buf = append(s.buf, text...)
	}
	fa.outs = append(fa.outs, flowOutcome{key: key, val: s.buf[off:len(s.buf):len(s.buf)], wait: wait})
}

// lanes counts the parents released to a lane in the lane accounting, in
// the order they were told.
func (fa *flowAcct) lanes(la *laneAcct, base []byte) {
	for _, i := range fa.res.Told {
		p := &fa.parents.Rows[i]
		if p.Released && p.Err == nil {
			if l := p.Lane(); l != nil {
				la.add(base, l, 1, 0)
			}
		}
	}
}

// released reports whether the flows' writes end with signal-push: a
// parent goes to pending while pending was empty.
func (fa *flowAcct) released() bool { return fa.res.ToPending && fa.pendingLen == 0 }

// types checks, after the verb's own types and counters, the keys the flow
// writes touch (lib.lua flow_types): HLEN of each told parent's results and
// failures it writes; ZCARD waiting when a parent is told; ZCARD pending and
// LLEN signal when one goes to pending; ZCARD dead and HGET stats dead
// (predicted with ownDead + the parents that die) when one dies; then per
// outcome the caller's ACL on done:<id> (read and write) and LLEN. It
// returns the refusal, or a host failure as the second value.
func (fa *flowAcct) types(r *verbCall, stats []byte, ownDead int64) (refusal, err error) {
	if !fa.any() {
		return nil, nil
	}
	if refusal, err := fa.parentTypes(r, stats, ownDead); refusal != nil || err != nil {
		return refusal, err
	}
	if len(fa.outs) > 0 {
		return fa.outcomeTypes(r)
	}
	return nil, nil
}

// parentTypes is types' first batch: HLEN of the told parents' results and
// failures, ZCARD waiting; with a parent released, ZCARD pending and LLEN
// signal; with deaths, ZCARD dead and HGET stats dead, predicted with its
// deaths and ownDead.
func (fa *flowAcct) parentTypes(r *verbCall, stats []byte, ownDead int64) (refusal, err error) {
	b := r.c.Read()
	n := 0
	for _, i := range fa.res.Told {
		p := &fa.parents.Rows[i]
		if len(p.Results) > 0 {
			b.Cmd(host.HLEN).Arg(fa.results[i])
			n++
		}
		if len(p.Failures) > 0 {
			b.Cmd(host.HLEN).Arg(fa.failures[i])
			n++
		}
	}
	if len(fa.res.Told) > 0 {
		b.Cmd(host.ZCARD).Arg(fa.waiting)
		n++
	}
	if fa.res.ToPending {
		b.Cmd(host.ZCARD).Arg(fa.pending).Cmd(host.LLEN).Arg(fa.signal)
	}
	deaths := len(fa.res.Deaths) > 0
	if deaths {
		b.Cmd(host.ZCARD).Arg(fa.dead).Cmd(host.HGET).Arg(stats).Str(statDead)
	}
	if n == 0 && !fa.res.ToPending && !deaths {
		return nil, nil
	}
	res := b.RunAll()
	for i := range n {
		if v := intAt(res, i); v.Err != nil {
			return v.Err, nil
		}
	}
	if fa.res.ToPending {
		v := intAt(res, n)
		if v.Err != nil {
			return v.Err, nil
		}
		fa.pendingLen = v.Val
		if v = intAt(res, n+1); v.Err != nil {
			return v.Err, nil
		}
		fa.signalLen = v.Val
		n += 2
	}
	if deaths {
		if v := intAt(res, n); v.Err != nil {
			return v.Err, nil
		}
		f := fieldAt(res, n+1)
		if f.Err != nil {
			return f.Err, nil
		}
		if _, err := verdict.PredictField(f.Val, ownDead+int64(len(fa.res.Deaths))); err != nil {
			return err, nil
		}
	}
	return nil, nil
}

// outcomeTypes checks the outcome lists against the caller's ACL (read,
// written), and reads LLEN of each up to the first denied one, which is
// then the refusal.
func (fa *flowAcct) outcomeTypes(r *verbCall) (refusal, err error) {
	fa.acl = fa.acl[:0]
	for _, o := range fa.outs {
		fa.acl = append(fa.acl, o.key)
	}
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate|host.KeyInsert, fa.acl)
	if err != nil {
		return nil, err
	}
	upto := len(fa.outs)
	if deny >= 0 {
		upto = deny
	}
	if upto > 0 {
		b := r.c.Read()
		for _, o := range fa.outs[:upto] {
			b.Cmd(host.LLEN).Arg(o.key)
		}
		res := b.RunAll()
		for i := range upto {
			if v := intAt(res, i); v.Err != nil {
				return v.Err, nil
			}
		}
	}
	if deny >= 0 {
		return host.ErrNoPerm, nil
	}
	return nil, nil
}

// writes adds the parents' writes (lib.lua flow_write), parent by parent in
// the order told: deps (its predicted value, for HINCRBY deps -k), its
// results, its failures, its new cfail; for a released one ZREM waiting
// and its move to pending, its lane or dead; then HINCRBY stats dead <n>.
func (fa *flowAcct) writes(b *host.Batch, now int64, stats []byte, la *laneAcct) {
	for _, i := range fa.res.Told {
		p := &fa.parents.Rows[i]
		row := fa.rows[i]
		b.Cmd("HSET").Arg(row).Str(protocol.FieldDeps).Int(p.Deps)
		if len(p.Results) > 0 {
			b.Cmd("HSET").Arg(fa.results[i])
			for _, x := range p.Results {
				b.Arg(x)
			}
		}
		if len(p.Failures) > 0 {
			b.Cmd("HSET").Arg(fa.failures[i])
			for _, x := range p.Failures {
				b.Arg(x)
			}
		}
		if p.NewCfail {
			b.Cmd("HSET").Arg(row).Str(protocol.FieldChildFail).Arg(p.Cfail)
		}
		if !p.Released {
			continue
		}
		b.Cmd("ZREM").Arg(fa.waiting).Arg(p.ID)
		switch {
		case p.Err != nil:
			b.Cmd("HSET").Arg(row).Str(protocol.FieldState).Str(protocol.StateDead).Str(protocol.FieldError).Arg(p.Err).
				Cmd("ZADD").Arg(fa.dead).Int(now).Arg(p.ID)
		case p.Lane() != nil:
			b.Cmd("HSET").Arg(row).Str(protocol.FieldState).Str(protocol.StatePending).
				Cmd("ZADD").Arg(la.keys[la.find(p.Lane())]).Int(p.Score).Arg(p.ID)
		default:
			b.Cmd("HSET").Arg(row).Str(protocol.FieldState).Str(protocol.StatePending).
				Cmd("ZADD").Arg(fa.pending).Int(p.Score).Arg(p.ID)
		}
	}
	if n := len(fa.res.Deaths); n > 0 {
		b.Cmd("HINCRBY").Arg(stats).Str(statDead).Int(int64(n))
	}
}

// publish queues the events of the parents released, in the order told:
// dead (error child <c> failed) or released.
func (fa *flowAcct) publish(e *jobEvents) {
	for _, i := range fa.res.Told {
		p := &fa.parents.Rows[i]
		if !p.Released {
			continue
		}
		if p.Err != nil {
			e.add(p.Ev(), protocol.EventDead, p.ID, protocol.EventErrorField, p.Err)
		} else {
			e.add(p.Ev(), protocol.EventReleased, p.ID, "", nil)
		}
	}
}

// outcomes adds RPUSH done:<id> <outcome>, PEXPIRE done:<id> <wait> of each
// waited job, in the order queued.
func (fa *flowAcct) outcomes(b *host.Batch) {
	for _, o := range fa.outs {
		b.Cmd("RPUSH").Arg(o.key).Arg(o.val).Cmd("PEXPIRE").Arg(o.key).Int(o.wait)
	}
}

// signals adds signal-push when the lane accounting or the flows end the
// call with it.
func (fa *flowAcct) signals(b *host.Batch, la *laneAcct) {
	switch {
	case la.wakes():
		signalPush(b, la.signal, la.signalLen())
	case fa.released():
		signalPush(b, fa.signal, fa.signalLen)
	}
}

// accountWrites adds the accountings' writes after a verb's own (COMPLETE,
// COMPLETEMANY, CANCEL, FAIL): the parents', then the lanes' (a freed slot
// can make a capped lane ready again), the outcomes, the signals.
func accountWrites(b *host.Batch, now int64, stats []byte, fa *flowAcct, la *laneAcct) {
	fa.writes(b, now, stats, la)
	la.writes(b)
	fa.outcomes(b)
	fa.signals(b, la)
}

// readDied is the flow accounting of a job that dies (CANCEL, FAIL): its
// outcome, with text its error, and its parent (policy its onfail) told of
// a death.
func (fa *flowAcct) readDied(r *verbCall, id, text, parent []byte, policy verdict.Field, wait int64) (verdict.Reply[struct{}], error) {
	fa.finish(id, verdict.FinishDied, text, parent, policy, wait)
	refusal, err := fa.read(r)
	return verdict.Reply[struct{}]{Made: true, Err: refusal}, err
}

// readTypes is the flow accounting's last read, the types (flowAcct.types).
func (fa *flowAcct) readTypes(r *verbCall, stats []byte, ownDead int64) (verdict.Reply[struct{}], error) {
	refusal, err := fa.types(r, stats, ownDead)
	return verdict.Reply[struct{}]{Made: true, Err: refusal}, err
}

// readLanes is the lane accounting of a job that leaves its lane (lane, nil
// for none: dw waiting and da active jobs more) and of the parents the flow
// accounting released to a lane. It returns the job's lane's index in la
// (-1: none).
func (fa *flowAcct) readLanes(r *verbCall, la *laneAcct, lane []byte, dw, da int64) (int, verdict.Reply[struct{}], error) {
	at := -1
	if lane != nil {
		at = la.add(r.base, lane, dw, da)
	}
	fa.lanes(la, r.base)
	reply, err := la.readReply(r)
	return at, reply, err
}

// flowVerbState is the retention and flow verbs' scratch between commands.
type flowVerbState struct {
	scratch
	names, keys, uniques [][]byte
}

var flowVerbs pool[flowVerbState]
