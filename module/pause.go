package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// pause is EMQ.PAUSE (internal/lua/pause.lua): stop CLAIM from handing out jobs.
// Crossings: the command, one read batch (the fence and the flag); when the
// queue was not paused, the guard and one write.
func pause(c *host.Call) error {
	// shape and layout: numkeys 3 (base version meta), no ARGV
	r, err := prelude(c, protocol.Pause, exactly(0))
	if err != nil {
		return err
	}
	meta := r.keys[2]
	// fence and domain read, one batch: GET version, HGET meta paused (which
	// types meta, the key HSET writes)
	var s verdict.PauseSeen
	step, err := drive(func() verdict.PauseStep { return verdict.Pause(&s) }, func(step verdict.PauseStep) error {
		switch step.Need {
		case verdict.PauseFirst:
			res := r.fenced().Cmd(host.HGET).Arg(meta).Str(protocol.MetaPaused).RunAll()
			s.Version, s.Paused = fieldAt(res, 0), fieldAt(res, 1)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !step.Verdict.Change {
		c.ReplyInt(0)
		return nil
	}
	// guard, then the write
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if _, err := w.Write().Cmd("HSET").Arg(meta).Str(protocol.MetaPaused).Str("1").Run(); err != nil {
		return wrote(c, err)
	}
	c.ReplyInt(1)
	return nil
}
