package main

import (
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
	"github.com/trafikey/trafikey/protocol"
)

// claim is EMQ.CLAIM (lua/claim.lua): lease up to count pending jobs,
// highest priority first. Crossings: the command, one read batch (the fence,
// the pause flag, the head of pending, active's type), the rows' ACL check,
// one read batch of the rows, the guard, one write batch.
func claim(c *host.Call) error {
	// shape and layout: numkeys 5 (base version meta pending active), ARGV
	// lease count
	r, err := prelude(c, protocol.Claim, exactly(2))
	if err != nil {
		return err
	}
	meta, pending, active := r.keys[2], r.keys[3], r.keys[4]
	// values: the lease, then the count
	lease, ok := grammar.Decimal(r.args[0], 1, protocol.MaxLeaseMS)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Claim.Name, "lease"))
	}
	count, ok := grammar.Decimal(r.args[1], 1, protocol.MaxCount)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Claim.Name, "count"))
	}
	st := claims.get()
	defer claims.put(st)
	st.reset()
	s := &st.seen
	*s = verdict.ClaimSeen{Pending: verdict.Reply[[][]byte]{Val: s.Pending.Val[:0]}, Rows: s.Rows[:0], Jobs: s.Jobs[:0]}
	st.rows = st.rows[:0]
	// fence and domain reads, driven by the verdict
	var rows host.Results // the rows' batch: the reply's payloads are read from it
	step := verdict.Claim(s)
	for ran := verdict.ClaimNone; step.Need != verdict.ClaimNone && step.Need != ran; step = verdict.Claim(s) {
		ran = step.Need
		switch step.Need {
		case verdict.ClaimFirst:
			// GET version, HGET meta paused, ZRANGE pending 0 count-1, ZCARD
			// active: the verdict takes them in this order
			res := r.fenced().
				Cmd("HGET").Arg(meta).Str(protocol.MetaPaused).
				Cmd("ZRANGE").Arg(pending).Str("0").Int(count - 1).
				Cmd("ZCARD").Arg(active).
				RunAll()
			s.Version, s.Paused, s.Active = st.keep(fieldAt(res, 0)), st.keep(fieldAt(res, 1)), intAt(res, 3)
			s.Pending.Made = true
			s.Pending.Err = st.members(&r, res)
		case verdict.ClaimRows:
			// the rows are outside the key-spec: the caller's ACL first, then
			// HMGET row att data for each member that is an id, up to the
			// first row denied
			rows, err = st.readRows(&r)
			if err != nil {
				return err
			}
		}
	}
	if step.Err != nil || step.Need != verdict.ClaimNone {
		return orInternal(step.Err)
	}
	v := step.Verdict
	s.Jobs = v.Jobs // the verdict appended to s.Jobs: keep its array for the next command
	if v.Empty {
		c.ReplyArray(0)
		return nil
	}
	// the reply, [id, data, attempt] per job, is written now, while the
	// rows' replies are readable: the write batch reuses their memory. A
	// refusal below replaces it.
	c.ReplyArray(len(v.Jobs))
	for _, j := range v.Jobs {
		c.ReplyArray(3)
		c.ReplyBulk(s.Pending.Val[j.Member])
		data, err := rows.At(st.rowAt[j.Member])
		if err != nil {
			return err
		}
		if d := data.Index(1); d.IsNull() {
			c.ReplyNull()
		} else if b, err := d.Bytes(); err == nil {
			c.ReplyBulk(b)
		} else {
			return err
		}
		c.ReplyInt(j.Attempt)
	}
	// guard, then the writes: ZPOPMIN pending <found>; per job HSET row
	// state active att <att+1> (the attempt predicted, in place of the Lua's
	// HINCRBY row att 1 and HSET row state active: both fields are updated
	// where they stand, so the row keeps its field order); one ZADD active
	// <deadline> <id> … for all the jobs (the absolute deadline, as a value)
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	deadline := r.now + lease
	b := w.Write().Cmd("ZPOPMIN").Arg(pending).Int(int64(len(s.Pending.Val)))
	for _, j := range v.Jobs {
		b.Cmd("HSET").Arg(st.row(j.Member)).
			Str(protocol.FieldState).Str(protocol.StateActive).
			Str(protocol.FieldAttempts).Int(j.Attempt)
	}
	if len(v.Jobs) > 0 {
		b.Cmd("ZADD").Arg(active)
		for _, j := range v.Jobs {
			b.Int(deadline).Arg(s.Pending.Val[j.Member])
		}
	}
	res, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	// the pop must have taken the members read, in order
	popped, err := res.At(0)
	if err != nil || popped.Len() != 2*len(s.Pending.Val) {
		return host.ErrHostReply
	}
	ok = true
	popped.Elems(func(i int, e host.Value) bool {
		if i%2 == 0 {
			m, err := e.Bytes()
			ok = err == nil && string(m) == string(s.Pending.Val[i/2])
		}
		return ok
	})
	if !ok {
		host.Logf(host.LogWarning, "%s: ZPOPMIN did not pop the members read; answered %q", c.Name(), protocol.ErrHostReply)
		return host.ErrHostReply
	}
	return nil
}

// claimState is CLAIM's scratch between commands.
type claimState struct {
	scratch
	seen verdict.ClaimSeen
	// rows[i] is the row key of member i (base job: member); the member
	// itself, s.Pending.Val[i], is its tail.
	rows [][]byte
	// rowAt[i] is the index of member i's HMGET in the rows' batch.
	rowAt []int
	// keys are the row keys to check and read, in order.
	keys [][]byte
}

var claims pool[claimState]

// members copies the head of pending (ZRANGE's reply) into row keys: each
// member is kept as the tail of its row key, so both outlive the batch.
func (st *claimState) members(r *verbCall, res host.Results) error {
	v, err := res.At(2)
	if err != nil {
		return err
	}
	if v.Kind() != host.KindArray {
		return host.ErrHostReply
	}
	v.Elems(func(_ int, e host.Value) bool {
		var m []byte
		if m, err = e.Bytes(); err != nil {
			return false
		}
		row := st.derived(r.base, protocol.SuffixJob, m, "")
		st.rows = append(st.rows, row)
		st.seen.Pending.Val = append(st.seen.Pending.Val, row[len(row)-len(m):])
		return true
	})
	return err
}

// row is member i's row key.
func (st *claimState) row(i int) []byte { return st.rows[i] }

// readRows checks the rows of the members that are ids against the caller's
// ACL, then reads HMGET row att data for each, up to the first one denied,
// in one batch; it fills the verdict's Rows and returns the batch.
func (st *claimState) readRows(r *verbCall) (host.Results, error) {
	s := &st.seen
	n := len(s.Pending.Val)
	st.keys, st.rowAt = st.keys[:0], st.rowAt[:0]
	for i, m := range s.Pending.Val {
		st.rowAt = append(st.rowAt, -1)
		if verdict.JobMember(m) {
			st.keys = append(st.keys, st.rows[i])
		}
	}
	s.Rows = s.Rows[:0]
	for range n {
		s.Rows = append(s.Rows, verdict.Reply[verdict.Field]{})
	}
	if len(st.keys) == 0 {
		return host.Results{}, nil
	}
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate, st.keys)
	if err != nil {
		return host.Results{}, err
	}
	b := r.c.Read()
	k := 0
	for i, m := range s.Pending.Val {
		if !verdict.JobMember(m) {
			continue
		}
		if k == deny {
			s.Rows[i] = denied[verdict.Field]()
			break
		}
		st.rowAt[i] = k
		b.Cmd("HMGET").Arg(st.rows[i]).Str(protocol.FieldAttempts).Str(protocol.FieldData)
		k++
	}
	if k == 0 {
		return host.Results{}, nil
	}
	res := b.RunAll()
	for i := range s.Pending.Val {
		if st.rowAt[i] < 0 {
			continue
		}
		var f [2]verdict.Field
		err := fieldsAt(res, st.rowAt[i], f[:])
		s.Rows[i] = verdict.Reply[verdict.Field]{Made: true, Err: err, Val: f[0]}
	}
	return res, nil
}
