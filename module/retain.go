package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// retain is EMQ.RETAIN (internal/lua/retain.lua): set how long and how many
// completed and dead jobs are kept, and the queue's bound on a result.
// Crossings: the command, one read batch (the fence and HGET meta seq, which
// types meta), the guard, one write.
func retain(c *host.Call) error {
	// shape and layout: numkeys 3 (base version meta), ARGV keep_done_ms
	// keep_done_max keep_dead_ms keep_dead_max result_max
	r, err := prelude(c, protocol.Retain, exactly(5))
	if err != nil {
		return err
	}
	meta := r.keys[2]
	vals, err := verdict.RetainValues(r.args)
	if err != nil {
		return err
	}
	res := r.fenced().Cmd(host.HGET).Arg(meta).Str(protocol.MetaSeq).RunAll()
	if err := verdict.Fence(fieldAt(res, 0)); err != nil {
		return err
	}
	if f := fieldAt(res, 1); f.Err != nil {
		return f.Err
	}
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	b := w.Write().Cmd("HSET").Arg(meta)
	for i, name := range verdict.RetainFields {
		b.Str(name).Int(vals[i])
	}
	if _, err := b.Run(); err != nil {
		return wrote(c, err)
	}
	c.ReplyInt(1)
	return nil
}
