package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// rate is EMQ.RATE (internal/lua/rate.lua): set or clear the queue's rate limit.
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
	res := r.fenced().Cmd(host.HMGET).Arg(meta).Str(protocol.MetaRateMax).Str(protocol.MetaRateWindow).RunAll()
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
