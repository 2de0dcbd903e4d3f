package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// lane is EMQ.LANE (internal/lua/lane.lua, read-only): one lane's counts and
// settings. Crossings: the command, the ACL check of laneinfo and the lane's
// set, one read batch.
func lane(c *host.Call) error {
	// shape and layout: numkeys 2 (base version), ARGV lane
	r, err := prelude(c, protocol.Lane, exactly(1))
	if err != nil {
		return err
	}
	name := r.args[0]
	if err := verdict.LaneValue(protocol.Lane.Name, name); err != nil {
		return err
	}
	st := laneVerbs.get()
	defer laneVerbs.put(st)
	st.reset()
	info := st.derived(r.base, protocol.SuffixLaneInfo, nil, "")
	set := st.derived(r.base, protocol.SuffixLane, name, "")
	// the caller's ACL (read), then one batch: GET version, HMGET laneinfo
	// active:<l> cap:<l> paused:<l>, ZCARD lane:<l>; the verdict takes the
	// fence first
	deny, err := r.firstDenied(host.KeyRead, [][]byte{info, set})
	if err != nil {
		return err
	}
	b := r.fenced()
	if deny < 0 {
		b.Cmd(host.HMGET).Arg(info).
			Arg(st.derived(nil, protocol.FieldLaneActive, name, "")).
			Arg(st.derived(nil, protocol.FieldLaneCap, name, "")).
			Arg(st.derived(nil, protocol.FieldLanePaused, name, "")).
			Cmd(host.ZCARD).Arg(set)
	}
	res := b.RunAll()
	if err := verdict.Fence(fieldAt(res, 0)); err != nil {
		return err
	}
	if deny >= 0 {
		return host.ErrNoPerm
	}
	in := verdict.Reply[[3]verdict.Field]{Made: true}
	in.Err = fieldsAt(res, 1, in.Val[:])
	out, err := verdict.LaneInfoReply(in, intAt(res, 2))
	if err != nil {
		return err
	}
	c.ReplyArray(len(out))
	for _, n := range out {
		c.ReplyInt(n)
	}
	return nil
}
