package main

import (
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
	"github.com/trafikey/trafikey/protocol"
)

// laneVerbState is the lane verbs' scratch between commands.
type laneVerbState struct {
	scratch
	lanes laneAcct
	keys  [][]byte
	names [][]byte
	info  []verdict.Reply[[3]verdict.Field]
	wait  []verdict.Reply[int64]
}

var laneVerbs pool[laneVerbState]

// laneSetting runs the reads every lane setting verb shares: the fence, then
// the lane accounting of lane (no change to its counts); set, when not nil,
// sets the lane's settings after the call in its change. It returns the
// lane's accounting, read and decided.
func laneSetting(r *verbCall, st *laneVerbState, lane []byte, set func(*verdict.LaneChange)) error {
	if err := verdict.Fence(fieldAt(r.fenced().RunAll(), 0)); err != nil {
		return err
	}
	st.lanes.reset(&st.scratch)
	i := st.lanes.add(r.base, lane, 0, 0)
	set(st.lanes.change(i))
	refusal, err := st.lanes.read(r)
	if err != nil {
		return err
	}
	return refusal
}

// laneSettingWrites writes a lane setting verb's field (HSET field value, or
// HDEL field, when not empty), then the lane accounting's writes and its
// signal. With nothing to write it passes no guard.
func laneSettingWrites(r *verbCall, st *laneVerbState, hset, hdel []byte, value string) error {
	la := &st.lanes
	if hset == nil && hdel == nil && !la.v.Any && !la.wakes() {
		return nil
	}
	w, err := r.c.BeginWrites()
	if err != nil {
		return err
	}
	b := w.Write()
	switch {
	case hset != nil:
		b.Cmd("HSET").Arg(la.laneinfo).Arg(hset).Str(value)
	case hdel != nil:
		b.Cmd("HDEL").Arg(la.laneinfo).Arg(hdel)
	}
	la.writes(b)
	if la.wakes() {
		signalPush(b, la.signal, la.signalLen())
	}
	if _, err := b.Run(); err != nil {
		return wrote(r.c, err)
	}
	return nil
}

// laneCap is EMQ.LANECAP (lua/lanecap.lua): set a lane's concurrency cap (0
// clears it). Crossings: the command, the fence, the lane accounting (its
// ACL check and one read batch), the guard, one write batch.
func laneCap(c *host.Call) error {
	// shape and layout: numkeys 2 (base version), ARGV lane cap
	r, err := prelude(c, protocol.LaneCap, exactly(2))
	if err != nil {
		return err
	}
	// values: the lane, the cap
	lane := r.args[0]
	if err := verdict.LaneValue(protocol.LaneCap.Name, lane); err != nil {
		return err
	}
	capTo, ok := grammar.Decimal(r.args[1], 0, protocol.MaxLaneCap)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.LaneCap.Name, "cap"))
	}
	st := laneVerbs.get()
	defer laneVerbs.put(st)
	st.reset()
	if err := laneSetting(&r, st, lane, func(l *verdict.LaneChange) { l.SetCap, l.CapTo = true, capTo }); err != nil {
		return err
	}
	// the cap field as stored: HSET when it differs, HDEL of a cap cleared
	set, del := verdict.LaneCapChange(st.lanes.seen.Lanes[0].Info.Val[1], capTo)
	var hset, hdel []byte
	field := st.lanes.field(protocol.FieldLaneCap, lane)
	if set {
		hset = field
	} else if del {
		hdel = field
	}
	if err := laneSettingWrites(&r, st, hset, hdel, protocol.FormatInt(capTo)); err != nil {
		return err
	}
	c.ReplyInt(1)
	return nil
}

// lanePause is EMQ.LANEPAUSE (lua/lanepause.lua): stop CLAIM from serving a
// lane. Crossings as LANECAP's.
func lanePause(c *host.Call) error { return lanePaused(c, protocol.LanePause, true) }

// laneResume is EMQ.LANERESUME (lua/laneresume.lua): let CLAIM serve a lane
// again, waking idle workers when it becomes ready. Crossings as LANECAP's.
func laneResume(c *host.Call) error { return lanePaused(c, protocol.LaneResume, false) }

// lanePaused sets lane's paused flag to paused (LANEPAUSE, LANERESUME):
// reply 1 when the state changed, 0 when it already was so.
func lanePaused(c *host.Call, v *protocol.Verb, paused bool) error {
	// shape and layout: numkeys 2 (base version), ARGV lane
	r, err := prelude(c, v, exactly(1))
	if err != nil {
		return err
	}
	lane := r.args[0]
	if err := verdict.LaneValue(v.Name, lane); err != nil {
		return err
	}
	st := laneVerbs.get()
	defer laneVerbs.put(st)
	st.reset()
	if err := laneSetting(&r, st, lane, func(l *verdict.LaneChange) { l.SetPaused, l.PausedTo = true, paused }); err != nil {
		return err
	}
	if st.lanes.v.Effects[0].Before.Paused == paused {
		c.ReplyInt(0)
		return nil
	}
	field := st.lanes.field(protocol.FieldLanePaused, lane)
	var hset, hdel []byte
	if paused {
		hset = field
	} else {
		hdel = field
	}
	if err := laneSettingWrites(&r, st, hset, hdel, "1"); err != nil {
		return err
	}
	c.ReplyInt(1)
	return nil
}

// lane is EMQ.LANE (lua/lane.lua, read-only): one lane's counts and
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
		b.Cmd("HMGET").Arg(info).
			Arg(st.derived(nil, protocol.FieldLaneActive, name, "")).
			Arg(st.derived(nil, protocol.FieldLaneCap, name, "")).
			Arg(st.derived(nil, protocol.FieldLanePaused, name, "")).
			Cmd("ZCARD").Arg(set)
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

// lanes is EMQ.LANES (lua/lanes.lua, read-only): a page of the lanes with
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
	if len(after) > protocol.MaxLaneName {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Lanes.Name, "after"))
	}
	count, ok := grammar.Decimal(r.args[1], 1, protocol.MaxCount)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Lanes.Name, "count"))
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
		b.Cmd("ZRANGE").Arg(registry).Arg(from).Str("+").Str("BYLEX").Str("LIMIT").Str("0").Int(count)
	}
	res := b.RunAll()
	if err := verdict.Fence(fieldAt(res, 0)); err != nil {
		return err
	}
	if deny >= 0 {
		return host.ErrNoPerm
	}
	page := listAt(res, 1, &st.scratch, st.names)
	if page.Err != nil {
		return page.Err
	}
	st.names = page.Val
	// each lane's set: the caller's ACL (read), then per lane HMGET
	// laneinfo active:<l> cap:<l> paused:<l> and ZCARD lane:<l>
	st.keys = st.keys[:0]
	for _, name := range st.names {
		st.keys = append(st.keys, st.derived(r.base, protocol.SuffixLane, name, ""))
	}
	if len(st.names) > 0 {
		deny, err := r.firstDenied(host.KeyRead, st.keys)
		if err != nil {
			return err
		}
		if deny >= 0 {
			return host.ErrNoPerm
		}
		b := c.Read()
		for i, name := range st.names {
			b.Cmd("HMGET").Arg(info).
				Arg(st.derived(nil, protocol.FieldLaneActive, name, "")).
				Arg(st.derived(nil, protocol.FieldLaneCap, name, "")).
				Arg(st.derived(nil, protocol.FieldLanePaused, name, "")).
				Cmd("ZCARD").Arg(st.keys[i])
		}
		res = b.RunAll()
	}
	// the reply: [lane, waiting, active, cap, paused] per lane, its reads
	// taken lane by lane
	st.info, st.wait = st.info[:0], st.wait[:0]
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
	if len(st.names) == 0 {
		c.ReplyArray(0)
	}
	return nil
}

// rate is EMQ.RATE (lua/rate.lua): set or clear the queue's rate limit.
// Crossings: the command, one read batch (the fence and meta's rate fields),
// the guard, one write.
func rate(c *host.Call) error {
	// shape and layout: numkeys 3 (base version meta), ARGV max window_ms
	r, err := prelude(c, protocol.Rate, exactly(2))
	if err != nil {
		return err
	}
	meta := r.keys[2]
	rmax, window, err := verdict.RateValues(r.args[0], r.args[1])
	if err != nil {
		return err
	}
	// GET version, HMGET meta rate_max rate_window (which types meta)
	res := r.fenced().Cmd("HMGET").Arg(meta).Str(protocol.MetaRateMax).Str(protocol.MetaRateWindow).RunAll()
	if err := verdict.Fence(fieldAt(res, 0)); err != nil {
		return err
	}
	var stored [2]verdict.Field
	if err := fieldsAt(res, 1, stored[:]); err != nil {
		return err
	}
	set, del := verdict.RateChange(rmax, stored)
	if set || del {
		w, err := c.BeginWrites()
		if err != nil {
			return err
		}
		b := w.Write()
		if set {
			b.Cmd("HSET").Arg(meta).Str(protocol.MetaRateMax).Int(rmax).Str(protocol.MetaRateWindow).Int(window)
		} else {
			b.Cmd("HDEL").Arg(meta).Str(protocol.MetaRateMax).Str(protocol.MetaRateWindow)
		}
		if _, err := b.Run(); err != nil {
			return wrote(c, err)
		}
	}
	c.ReplyInt(1)
	return nil
}
