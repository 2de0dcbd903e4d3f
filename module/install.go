package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// install is EMQ.INSTALL (internal/lua/install.lua): stamp the queue's wire version.
// It runs no fence; its one read is the check the fence makes.
func install(c *host.Call) error {
	// shape and layout: numkeys 2, no ARGV, KEYS[2] is the base's version
	r, err := prelude(c, protocol.Install, exactly(0))
	if err != nil {
		return err
	}
	// domain read: GET version (a key of another type answers WRONGTYPE here,
	// which also types the key SET is about to write)
	var seen verdict.InstallSeen
	step, err := drive(func() verdict.InstallStep { return verdict.Install(&seen) }, func(step verdict.InstallStep) error {
		switch step.Need {
		case verdict.InstallVersion:
			seen.Version = fieldAt(c.Read().Cmd(host.GET).Arg(r.version()).RunAll(), 0)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !step.Stamp {
		c.ReplyInt(0)
		return nil
	}
	// guard, then the write
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if _, err := w.Write().Cmd("SET").Arg(r.version()).Str(protocol.WireString).Run(); err != nil {
		return err
	}
	c.ReplyInt(1)
	return nil
}
