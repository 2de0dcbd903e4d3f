package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// laneCap is EMQ.LANECAP (internal/lua/lanecap.lua): set a lane's concurrency cap (0
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
	setSets, sets, err := laneSets(&r, st)
	if err != nil {
		return err
	}
	if err := laneSettingWrites(&r, st, hset, hdel, protocol.FormatInt(capTo), setSets, sets); err != nil {
		return err
	}
	c.ReplyInt(1)
	return nil
}
