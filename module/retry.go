package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// retry is EMQ.RETRY (internal/lua/retry.lua): move one delayed job to pending now.
// Crossings: the command, the row's ACL check, one read batch (the fence,
// the row, its due time, pending and signal); for a job with a lane, the
// lane accounting; the guard and one write batch.
func retry(c *host.Call) error {
	// shape and layout: numkeys 5 (base version pending delayed signal),
	// ARGV id
	r, err := prelude(c, protocol.Retry, exactly(1))
	if err != nil {
		return err
	}
	pending, delayed, signal := r.keys[2], r.keys[3], r.keys[4]
	// values: the id
	id := r.args[0]
	n, ok := grammar.Decimal(id, 1, protocol.MaxJobID)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Retry.Name, "id"))
	}
	st := retries.get()
	defer retries.put(st)
	st.reset()
	st.lanes.reset(&st.scratch)
	st.events.reset()
	st.ev = verdict.Field{}
	row := st.derived(r.base, protocol.SuffixJob, id, "")
	// the row is outside the key-spec: the caller's ACL first (read, then
	// written); a denial is the row read's refusal, in its place after the
	// fence
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate, [][]byte{row})
	if err != nil {
		return err
	}
	s := &st.seen
	*s = verdict.RetrySeen{}
	step := verdict.Retry(n, s)
	for ran := verdict.RetryNone; step.Need != verdict.RetryNone && step.Need != ran; step = verdict.Retry(n, s) {
		ran = step.Need
		switch step.Need {
		case verdict.RetryFirst:
			// GET version, HMGET row att state prio lane ev, ZSCORE delayed
			// id, ZCARD pending (also the signal's condition), LLEN signal;
			// the verdict takes them in this order
			b := r.fenced()
			if deny < 0 {
				b.Cmd(host.HMGET).Arg(row).Str(protocol.FieldAttempts).Str(protocol.FieldState).Str(protocol.FieldPriority).Str(protocol.FieldLane).Str(protocol.FieldEvents)
			}
			res := b.Cmd(host.ZSCORE).Arg(delayed).Arg(id).
				Cmd(host.ZCARD).Arg(pending).
				Cmd(host.LLEN).Arg(signal).
				RunAll()
			s.Version = st.keep(fieldAt(res, 0))
			k := 1
			if deny < 0 {
				f := st.fields[:]
				err := fieldsEvAt(res, 1, f, &st.ev)
				for i := range f {
					f[i].Bytes = st.copy(f[i].Bytes)
				}
				st.ev.Bytes = st.copy(st.ev.Bytes)
				s.Row = verdict.Reply[[]verdict.Field]{Made: true, Val: f, Err: err}
				k = 2
			} else {
				s.Row = denied[[]verdict.Field]()
			}
			s.Due = fieldAt(res, k)
			s.Pending, s.Signal = intAt(res, k+1), intAt(res, k+2)
		case verdict.RetryLanes:
			// the job's lane: one waiting job more
			st.lanes.add(r.base, step.Lane, 1, 0)
			lanes, err := st.lanes.readReply(&r)
			if err != nil {
				return err
			}
			s.Lanes = lanes
		}
	}
	if step.Err != nil || step.Need != verdict.RetryNone {
		return orInternal(step.Err)
	}
	v := step.Verdict
	if v.Gone {
		c.ReplyInt(0)
		return nil
	}
	// the job's promoted event, then the stream
	st.events.add(st.ev, protocol.EventPromoted, id, "", nil)
	if err := st.events.check(&r); err != nil {
		return err
	}
	// guard, then the writes in the Lua's order: the event, ZREM delayed,
	// HSET row state pending, ZADD pending (or the lane's set), the lane
	// accounting, the signal
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if err := st.events.publish(c, w); err != nil {
		return err
	}
	set := pending
	if v.Lane != nil {
		set = st.lanes.keys[0]
	}
	b := w.Write().
		Cmd("ZREM").Arg(delayed).Arg(id).
		Cmd("HSET").Arg(row).Str(protocol.FieldState).Str(protocol.StatePending).
		Cmd("ZADD").Arg(set).Int(v.Score).Arg(id)
	st.lanes.writes(b)
	if v.Signal || st.lanes.wakes() {
		signalPush(b, signal, s.Signal.Val)
	}
	res, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	if err := removedAll(c, res, 0, 1); err != nil {
		return err
	}
	c.ReplyInt(1)
	return nil
}

// retryState is RETRY's scratch between commands.
type retryState struct {
	scratch
	seen   verdict.RetrySeen
	fields [4]verdict.Field
	lanes  laneAcct
	// ev is the row's ev; events the job's promoted event.
	ev     verdict.Field
	events jobEvents
}

var retries pool[retryState]
