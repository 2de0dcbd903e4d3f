package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// failuresIncr is EMQ.FAILURES.INCR (internal/lua/failures.incr.lua): count one
// failure of a downstream in a window that starts with its first failure.
// Crossings: the command, one read batch (the fence, GET and PTTL of the
// counter), the guard, one write batch (INCR, and PEXPIRE when the counter
// had no TTL).
func failuresIncr(c *host.Call) error {
	// shape and layout: numkeys 3 (base version failures:<name>), ARGV ttl_ms
	r, err := prelude(c, protocol.FailuresIncr, exactly(1))
	if err != nil {
		return err
	}
	counter := r.keys[2]
	// values: the TTL, within our domain and so inside PEXPIRE's bound
	// (LLONG_MAX − now) for any clock: PEXPIRE cannot refuse after INCR
	if _, ok := grammar.Decimal(r.args[0], 1, protocol.MaxFailuresTTL); !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.FailuresIncr.Name, "ttl"))
	}
	// the fence and the counter, one batch: GET (types it), PTTL
	res := r.fenced().Cmd(host.GET).Arg(counter).Cmd(host.PTTL).Arg(counter).RunAll()
	v, err := verdict.FailuresIncr(&verdict.FailuresSeen{Version: fieldAt(res, 0), Counter: fieldAt(res, 1), PTTL: intAt(res, 2)})
	if err != nil {
		return err
	}
	// guard, then INCR (predicted) and PEXPIRE, replicated as PEXPIREAT
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	b := w.Write().Cmd("INCR").Arg(counter)
	if v.Expire {
		b.Cmd("PEXPIRE").Arg(counter).Argv(r.argv(0))
	}
	out, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	if got := intAt(out, 0); got.Err != nil || got.Val != v.Count {
		return wrote(c, host.ErrHostReply)
	}
	c.ReplyInt(v.Count)
	return nil
}
