package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// lanes is EMQ.LANES (internal/lua/lanes.lua, read-only): a page of the lanes with
// jobs, in byte order, with their counts and settings. Crossings: the
// command, the ACL check of lanes and laneinfo, one read batch (the fence and
// the page), the ACL check of the page's lane sets, one read batch.
func lanes(c *host.Call) error {
	// shape and layout: numkeys 2 (base version), ARGV after count
	r, err := prelude(c, protocol.Lanes, exactly(2))
	if err != nil {
		return err
	}
	after := r.args[0]
	count, err := verdict.LanesValues(after, r.args[1])
	if err != nil {
		return err
	}
	st := laneVerbs.get()
	defer laneVerbs.put(st)
	st.reset()
	registry := st.derived(r.base, protocol.SuffixLanes, nil, "")
	info := st.derived(r.base, protocol.SuffixLaneInfo, nil, "")
	deny, err := r.firstDenied(host.KeyRead, [][]byte{registry, info})
	if err != nil {
		return err
	}
	// GET version, ZRANGE lanes (<after> + BYLEX LIMIT 0 <count>
	b := r.fenced()
	if deny < 0 {
		from := []byte("-")
		if len(after) > 0 {
			from = st.derived(nil, "(", after, "")
		}
		b.Cmd(host.ZRANGE).Arg(registry).Arg(from).Str("+").Str("BYLEX").Str("LIMIT").Str("0").Int(count)
	}
	if st.names, err = pageAt(b.RunAll(), deny, &st.scratch, st.names); err != nil {
		return err
	}
	return st.replyLanes(&r, info)
}

// replyLanes reads and replies the lanes of the page, st.names: each lane's
// set checked against the caller's ACL (read), then per lane HMGET
// laneinfo active:<l> cap:<l> paused:<l> and ZCARD lane:<l>; the reply is
// [lane, waiting, active, cap, paused] per lane, its reads taken lane by
// lane.
func (st *laneVerbState) replyLanes(r *verbCall, info []byte) error {
	c := r.c
	if len(st.names) == 0 {
		c.ReplyArray(0)
		return nil
	}
	st.keys = st.keys[:0]
	for _, name := range st.names {
		st.keys = append(st.keys, st.derived(r.base, protocol.SuffixLane, name, ""))
	}
	deny, err := r.firstDenied(host.KeyRead, st.keys)
	if err != nil {
		return err
	}
	if deny >= 0 {
		return host.ErrNoPerm
	}
	b := c.Read()
	for i, name := range st.names {
		b.Cmd(host.HMGET).Arg(info).
			Arg(st.derived(nil, protocol.FieldLaneActive, name, "")).
			Arg(st.derived(nil, protocol.FieldLaneCap, name, "")).
			Arg(st.derived(nil, protocol.FieldLanePaused, name, "")).
			Cmd(host.ZCARD).Arg(st.keys[i])
	}
	res := b.RunAll()
	for i := range st.names {
		in := verdict.Reply[[3]verdict.Field]{Made: true}
		in.Err = fieldsAt(res, 2*i, in.Val[:])
		out, err := verdict.LaneInfoReply(in, intAt(res, 2*i+1))
		if err != nil {
			return err
		}
		if i == 0 {
			c.ReplyArray(len(st.names))
		}
		c.ReplyArray(1 + len(out))
		c.ReplyBulk(st.names[i])
		for _, n := range out {
			c.ReplyInt(n)
		}
	}
	return nil
}
