package main

import (
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
	"github.com/trafikey/trafikey/protocol"
)

// flowAcct is one call's flow accounting (docs/PROTOCOL.md, "Flows";
// verdict.FlowRun): the children that finished and name a parent, the
// parents' reads, their writes, and the waited jobs' outcomes. Every verb
// that finishes a job runs it the same way:
//
//	fa.reset(&st.scratch)
//	fa.tell(ev) / fa.outcome(…)   // per finished job, in the verb's order
//	err := fa.read(&r)            // after the verb's own reads: the parents
//	fa.lanes(&st.lanes, r.base)   // the parents released to a lane
//	err = fa.types(&r, stats)     // after the lane accounting
//	…                             // the verb's writes
//	fa.writes(b, …)               // then the flows'
//
// A call whose jobs name no parent and are not waited for reads and writes
// nothing here.
type flowAcct struct {
	s       *scratch
	events  []verdict.FlowEvent
	parents verdict.FlowParents
	res     verdict.FlowResult
	ops     []verdict.FlowOp
	// rows, results and failures are each parent's keys.
	rows, results, failures [][]byte
	outs                    []flowOutcome
	acl                     [][]byte
	// the fixed keys the writes touch, and what the types read
	waiting, pending, dead, signal []byte
	pendingLen, signalLen          int64
	// retained: a job of the call is retained (ZADD completed).
	retained  bool
	completed []byte
	deadStat  verdict.Field
}

// flowOutcome is one waited job's outcome: RPUSH key val, PEXPIRE key wait.
type flowOutcome struct {
	key, val []byte
	wait     int64
}

func (fa *flowAcct) reset(s *scratch) {
	fa.s = s
	fa.events = fa.events[:0]
	fa.parents.Reset()
	fa.res = verdict.FlowResult{Need: -1}
	fa.rows, fa.results, fa.failures = fa.rows[:0], fa.results[:0], fa.failures[:0]
	fa.outs = fa.outs[:0]
	fa.pendingLen, fa.signalLen = 0, 0
	fa.retained = false
	fa.deadStat = verdict.Field{}
}

// any reports whether the call has flow work.
func (fa *flowAcct) any() bool { return len(fa.events) > 0 || len(fa.outs) > 0 || fa.retained }

// tell records that child finished (kind, its result or error) under parent
// (a canonical id) with policy (its onfail field).
func (fa *flowAcct) tell(parent, child []byte, kind verdict.Finish, policy verdict.Field, text []byte) {
	s := fa.s
	ev := verdict.FlowEvent{Parent: s.copy(parent), Child: s.copy(child), Kind: kind, Text: s.copy(text)}
	if policy.Set {
		ev.Policy = s.copy(policy.Bytes)
	}
	fa.events = append(fa.events, ev)
}

// outcome records a waited job's outcome (wait > 0).
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

// read reads the parents the events meet, level by level (the caller's ACL
// on each parent's row, results and failures first), and runs the verdict.
// It returns the flows' refusal, or a host failure as the second value.
func (fa *flowAcct) read(r *verbCall) (refusal, err error) {
	if len(fa.events) == 0 {
		return nil, nil
	}
	for _, ev := range fa.events {
		fa.parents.Meet(ev.Parent)
	}
	for range protocol.MaxFlowDepth + 2 {
		// every parent met and not read yet, in one batch
		start := len(fa.rows)
		for i := start; i < len(fa.parents.Rows); i++ {
			id := fa.parents.Rows[i].ID
			fa.rows = append(fa.rows, fa.s.derived(r.base, protocol.SuffixJob, id, ""))
			fa.results = append(fa.results, fa.s.derived(r.base, protocol.SuffixJob, id, protocol.SuffixResults))
			fa.failures = append(fa.failures, fa.s.derived(r.base, protocol.SuffixJob, id, protocol.SuffixFailures))
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
				fa.parents.Rows[upto].Row = verdict.Failed[verdict.FlowRow](host.ErrNoPerm)
			}
			if upto > start {
				b := r.c.Read()
				for i := start; i < upto; i++ {
					b.Cmd("HMGET").Arg(fa.rows[i])
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
						p.Row.Val[k].Bytes = fa.s.copy(p.Row.Val[k].Bytes)
					}
				}
			}
			for i := upto + 1; i < n; i++ {
				// after a denied one: never reached before its refusal
				fa.parents.Rows[i].Row = verdict.Failed[verdict.FlowRow](host.ErrNoPerm)
			}
		}
		fa.res = verdict.FlowRun(fa.events, &fa.parents, fa.ops)
		fa.ops = fa.res.Ops[:0]
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
	// a parent that dies and is waited for gets its outcome
	for _, op := range fa.res.Ops {
		if op.Kind == verdict.OpDie {
			p := &fa.parents.Rows[op.P]
			if w := p.Wait(); w > 0 {
				fa.outcome(r.base, p.ID, verdict.FinishDied, op.Text, w)
			}
		}
	}
	return nil, nil
}

// lanes counts the parents released to a lane in the lane accounting.
func (fa *flowAcct) lanes(la *laneAcct, base []byte) {
	for _, op := range fa.res.Ops {
		if op.Kind == verdict.OpRelease {
			if l := fa.parents.Rows[op.P].Lane(); l != nil {
				la.add(base, l, 1, 0)
			}
		}
	}
}

// released reports whether a parent goes to pending (not a lane).
func (fa *flowAcct) released() bool { return fa.res.Pending > 0 }

// types checks, after the lane accounting, the keys the flow writes touch:
// the caller's ACL on waiting, pending, dead, signal and the outcome lists
// (read and write), then ZCARD waiting, pending and dead, LLEN signal,
// LLEN of each outcome list, and HGET stats dead predicted with ownDead +
// the parents' deaths when any died. It returns the refusal, or a host
// failure as the second value.
func (fa *flowAcct) types(r *verbCall, stats []byte, ownDead int64) (refusal, err error) {
	if !fa.any() {
		return nil, nil
	}
	s := fa.s
	fa.waiting = s.derived(r.base, protocol.SuffixWaiting, nil, "")
	fa.pending = s.derived(r.base, protocol.SuffixPending, nil, "")
	fa.dead = s.derived(r.base, protocol.SuffixDead, nil, "")
	fa.signal = s.derived(r.base, protocol.SuffixSignal, nil, "")
	fa.completed = s.derived(r.base, protocol.SuffixCompleted, nil, "")
	fa.acl = append(fa.acl[:0], fa.waiting, fa.pending, fa.dead, fa.signal)
	if fa.retained {
		fa.acl = append(fa.acl, fa.completed)
	}
	for _, o := range fa.outs {
		fa.acl = append(fa.acl, o.key)
	}
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate|host.KeyInsert, fa.acl)
	if err != nil {
		return nil, err
	}
	if deny >= 0 {
		return host.ErrNoPerm, nil
	}
	b := r.c.Read().Cmd("ZCARD").Arg(fa.waiting).Cmd("ZCARD").Arg(fa.pending).Cmd("ZCARD").Arg(fa.dead).Cmd("LLEN").Arg(fa.signal)
	if fa.retained {
		b.Cmd("ZCARD").Arg(fa.completed)
	}
	for _, op := range fa.res.Ops {
		switch op.Kind {
		case verdict.OpResult:
			b.Cmd("HLEN").Arg(fa.results[op.P])
		case verdict.OpFailure:
			b.Cmd("HLEN").Arg(fa.failures[op.P])
		}
	}
	for _, o := range fa.outs {
		b.Cmd("LLEN").Arg(o.key)
	}
	if fa.res.Deaths > 0 {
		b.Cmd("HGET").Arg(stats).Str(statDead)
	}
	res := b.RunAll()
	n := res.Len()
	last := n
	if fa.res.Deaths > 0 {
		last = n - 1
	}
	for i := range last {
		v := intAt(res, i)
		if v.Err != nil {
			return v.Err, nil
		}
		switch i {
		case 1:
			fa.pendingLen = v.Val
		case 3:
			fa.signalLen = v.Val
		}
	}
	if fa.res.Deaths > 0 {
		f := fieldAt(res, n-1)
		if f.Err != nil {
			return f.Err, nil
		}
		if _, err := verdict.PredictField(f.Val, ownDead+fa.res.Deaths); err != nil {
			return err, nil
		}
	}
	return nil, nil
}

// writes adds the flows' writes in the verdict's order, then the waited
// jobs' outcomes.
func (fa *flowAcct) writes(b *host.Batch, now int64, stats []byte, la *laneAcct) {
	for _, op := range fa.res.Ops {
		p := &fa.parents.Rows[op.P]
		row := fa.rows[op.P]
		switch op.Kind {
		case verdict.OpResult:
			b.Cmd("HSET").Arg(fa.results[op.P]).Arg(op.Child).Arg(op.Text)
		case verdict.OpFailure:
			b.Cmd("HSET").Arg(fa.failures[op.P]).Arg(op.Child).Arg(op.Text)
		case verdict.OpChildFail:
			b.Cmd("HSET").Arg(row).Str(protocol.FieldChildFail).Arg(op.Child)
		case verdict.OpDeps:
			b.Cmd("HSET").Arg(row).Str(protocol.FieldDeps).Int(op.Val)
		case verdict.OpRelease:
			b.Cmd("ZREM").Arg(fa.waiting).Arg(p.ID).
				Cmd("HSET").Arg(row).Str(protocol.FieldState).Str(protocol.StatePending)
			if l := p.Lane(); l != nil {
				b.Cmd("ZADD").Arg(la.keys[la.find(l)]).Int(op.Val).Arg(p.ID)
			} else {
				b.Cmd("ZADD").Arg(fa.pending).Int(op.Val).Arg(p.ID)
			}
		case verdict.OpDie:
			b.Cmd("ZREM").Arg(fa.waiting).Arg(p.ID).
				Cmd("HSET").Arg(row).Str(protocol.FieldState).Str(protocol.StateDead).Str(protocol.FieldError).Arg(op.Text).
				Cmd("ZADD").Arg(fa.dead).Int(now).Arg(p.ID).
				Cmd("HINCRBY").Arg(stats).Str(statDead).Int(1)
		}
	}
}

// outcomes adds RPUSH done:<id> <outcome>, PEXPIRE done:<id> <wait> of each
// waited job.
func (fa *flowAcct) outcomes(b *host.Batch) {
	for _, o := range fa.outs {
		b.Cmd("RPUSH").Arg(o.key).Arg(o.val).Cmd("PEXPIRE").Arg(o.key).Int(o.wait)
	}
}
