package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// children is EMQ.CHILDREN (internal/lua/children.lua, read-only): a page of a
// parent's children with their states, results and errors. Crossings: the
// command, the ACL check of the parent's flow keys, one read batch (the
// fence and the page), the ACL check of the children's rows, one read batch.
func children(c *host.Call) error {
	// shape and layout: numkeys 2 (base version), ARGV id after count
	r, err := prelude(c, protocol.Children, exactly(3))
	if err != nil {
		return err
	}
	id := r.args[0]
	from, count, err := verdict.ChildrenValues(id, r.args[1], r.args[2])
	if err != nil {
		return err
	}
	st := flowVerbs.get()
	defer flowVerbs.put(st)
	st.reset()
	kids := st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixKids)
	results := st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixResults)
	failures := st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixFailures)
	deny, err := r.firstDenied(host.KeyRead, [][]byte{kids, results, failures})
	if err != nil {
		return err
	}
	b := r.fenced()
	if deny < 0 {
		b.Cmd(host.ZRANGEBYSCORE).Arg(kids).Arg(st.below(from)).Str("+inf").Str("LIMIT").Str("0").Int(count)
	}
	if st.names, err = pageAt(b.RunAll(), deny, &st.scratch, st.names); err != nil {
		return err
	}
	if len(st.names) == 0 {
		c.ReplyArray(0)
		return nil
	}
	return st.replyChildren(&r, results, failures)
}

// replyChildren reads and replies the children of the page, st.names: the
// caller's ACL on their rows (read), then per child HGET row state, HGET
// row att, HGET results <child>, HGET failures <child>; the reply is
// [child, state, result, failure] each.
func (st *flowVerbState) replyChildren(r *verbCall, results, failures []byte) error {
	c := r.c
	st.keys = st.keys[:0]
	for _, child := range st.names {
		st.keys = append(st.keys, st.derived(r.base, protocol.SuffixJob, child, ""))
	}
	if c.CheckKeys(host.KeyRead, st.keys...) != nil {
		return host.ErrNoPerm
	}
	n := len(st.names)
	rb := c.Read()
	for i, child := range st.names[:n] {
		rb.Cmd(host.HGET).Arg(st.keys[i]).Str(protocol.FieldState).
			Cmd(host.HGET).Arg(st.keys[i]).Str(protocol.FieldAttempts).
			Cmd(host.HGET).Arg(results).Arg(child).
			Cmd(host.HGET).Arg(failures).Arg(child)
	}
	res := rb.RunAll()
	for i := range 4 * n {
		if f := fieldAt(res, i); f.Err != nil {
			return f.Err
		}
	}
	c.ReplyArray(len(st.names))
	for i, child := range st.names {
		c.ReplyArray(4)
		c.ReplyBulk(child)
		// a present row (att) without state is pending
		state := verdict.RowState(fieldAt(res, 4*i).Val, fieldAt(res, 4*i+1).Val)
		if state.Set {
			c.ReplyBulk(state.Bytes)
		} else {
			c.ReplyNull()
		}
		for k := 2; k < 4; k++ {
			if f := fieldAt(res, 4*i+k); f.Val.Set {
				c.ReplyBulk(f.Val.Bytes)
			} else {
				c.ReplyNull()
			}
		}
	}
	return nil
}
