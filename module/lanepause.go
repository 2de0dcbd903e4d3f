package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// lanePause is EMQ.LANEPAUSE (internal/lua/lanepause.lua): stop CLAIM from serving a
// lane. Crossings as LANECAP's.
func lanePause(c *host.Call) error {
	return lanePaused(c, protocol.LanePause, verdict.LanePausing, verdict.LanePauseChange)
}

// lanePaused sets a lane's paused flag (LANEPAUSE, LANERESUME): set gives
// the lane's change in the lane accounting, and change the verb's verdict
// on the lane as read. Reply 1 when the state changed (HSET paused:<l> 1
// when paused after the call, else HDEL), 0 when it already was so.
func lanePaused(c *host.Call, v *protocol.Verb, set func(*verdict.LaneChange), change func(verdict.LaneSettings) bool) error {
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
	if err := laneSetting(&r, st, lane, set); err != nil {
		return err
	}
	e := &st.lanes.v.Effects[0]
	if !change(e.Before.LaneSettings) {
		c.ReplyInt(0)
		return nil
	}
	field := st.lanes.field(protocol.FieldLanePaused, lane)
	var hset, hdel []byte
	if e.After.Paused {
		hset = field
	} else {
		hdel = field
	}
	setSets, sets, err := laneSets(&r, st)
	if err != nil {
		return err
	}
	if err := laneSettingWrites(&r, st, hset, hdel, "1", setSets, sets); err != nil {
		return err
	}
	c.ReplyInt(1)
	return nil
}
