package main

import (
	"errors"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// The TRA family (docs/PROTOCOL.md, "The TRA family"): the contrast to the
// EMQ grammar. No numkeys (the key is argv[1], declared like SETBIT's), no
// fence, arity enforced by the server, its own three texts; and its one
// write, TRA.SETBIT, is replicated verbatim, as the client sent it, and not
// at all when it changed nothing. This is the only file of handlers that
// replicates verbatim (the adapter test holds every EMQ handler to effects).

// traCommands registers TRA.SETBIT and TRA.GETBIT; with inC, C answers
// every TRA.SETBIT and the TRA.GETBIT calls that need no RM_Call reply read
// in Go, without entering Go (host.PreanswerSetBit and PreanswerGetBit):
// TRA.SETBIT with this handler's verdict, as its write plans, and its
// refusal texts; the handlers stay the reference, which a differential
// test holds C to.
func traCommands(inC bool) []host.Command {
	set, get := host.NoPreanswer, host.NoPreanswer
	var bit host.BitAnswer
	if inC {
		set, get = host.PreanswerSetBit, host.PreanswerGetBit
		// the refusals as the handler's own parsers and type check word them
		_, offset := grammar.BitOffset(nil)
		_, value := grammar.Bit(nil)
		bit = host.BitAnswer{
			Plans:     [2]uint8{uint8(verdict.SetBitPlanFor(0)), uint8(verdict.SetBitPlanFor(1))},
			Offset:    offset.Error(),
			Bit:       value.Error(),
			WrongType: traTyped(host.ErrWrongType).Error(),
		}
	}
	return []host.Command{
		{Name: protocol.TRASetBit, Flags: "write deny-oom", Keys: host.FirstKeyWrite, Arity: 4, Summary: "Sets one bit of a string and replies the previous one; replicated verbatim.", Handler: traSetBit, Preanswer: set, Bit: bit},
		{Name: protocol.TRAGetBit, Flags: "readonly fast", Keys: host.FirstKeyRead, Arity: 3, Summary: "Replies one bit of a string.", Handler: traGetBit, Preanswer: get},
	}
}

// traBits reads GETBIT <key> <offset> and STRLEN <key> through the
// server's commands, for a call the bit call did not answer (an offset
// past the server's bound, which GETBIT refuses in its words): the bit and
// the string's length, or ERR TRA wrong type for a key of another type.
func traBits(c *host.Call, key, offset []byte) (bit, strlen int64, err error) {
	res := c.Read().Cmd(host.GETBIT).Arg(key).Arg(offset).Cmd(host.STRLEN).Arg(key).RunAll()
	b := intAt(res, 0)
	if b.Err != nil {
		return 0, 0, traTyped(b.Err)
	}
	n := intAt(res, 1)
	if n.Err != nil {
		return 0, 0, n.Err
	}
	return b.Val, n.Val, nil
}

// traTyped turns the server's WRONGTYPE into the TRA family's text.
func traTyped(err error) error {
	if isWrongType(err) {
		return grammar.Refusal(protocol.ErrTRAWrongType)
	}
	return err
}

// isWrongType reports whether a host error is the server's WRONGTYPE text.
func isWrongType(err error) bool { return err.Error() == protocol.ErrWrongType }

// traSetBit is TRA.SETBIT key offset value: the previous bit. It is one host
// call, Writes.SetBit, which reads the bit and the string's length and
// writes as the verdict's plan, decided before the call, says for what it
// finds; past the guard only (a paused server reads with ReadBit, and
// refuses when the verdict writes). With tra-c yes, C answers every call
// as this handler does (traCommands); it is the reference C is tested
// against, and runs every call with tra-c no.
func traSetBit(c *host.Call) error {
	key, rawOffset, rawValue := c.Arg(1), c.Arg(2), c.Arg(3)
	offset, err := grammar.BitOffset(rawOffset)
	if err != nil {
		return err
	}
	value, err := grammar.Bit(rawValue)
	if err != nil {
		return err
	}
	plan := verdict.SetBitPlanFor(value)
	w, guard := c.BeginWrites()
	var seen host.BitSeen
	if guard == nil {
		seen, err = w.SetBit(offset, value, uint8(plan))
	} else {
		seen, err = c.ReadBit(offset)
	}
	if errors.Is(err, host.ErrBitUnanswered) {
		return traSetBitCommands(c, key, rawOffset, rawValue, offset, value)
	}
	if err != nil {
		return traTyped(err)
	}
	v := verdict.SetBit(offset, value, seen.Bit, seen.Len)
	switch {
	case guard != nil && v.Write:
		return guard
	case guard == nil && v.Write != seen.Wrote:
		host.Logf(host.LogWarning, "%s: the bit call wrote %v, the verdict %v; answered %q", c.Name(), seen.Wrote, v.Write, protocol.ErrHostReply)
		return host.ErrHostReply
	}
	c.ReplyInt(v.Previous)
	return nil
}

// traSetBitCommands is TRA.SETBIT through the server's commands, for a
// call the bit call did not answer: GETBIT and STRLEN, then SETBIT
// replicating nothing and the command replicated verbatim.
func traSetBitCommands(c *host.Call, key, rawOffset, rawValue []byte, offset, value int64) error {
	prev, strlen, err := traBits(c, key, rawOffset)
	if err != nil {
		return err
	}
	v := verdict.SetBit(offset, value, prev, strlen)
	if v.Write {
		w, err := c.BeginWrites()
		if err != nil {
			return err
		}
		// SETBIT replicating nothing, then the command line itself
		if _, err := w.WriteVerbatim().Cmd("SETBIT").Arg(key).Arg(rawOffset).Arg(rawValue).Run(); err != nil {
			return wrote(c, err)
		}
		w.ReplicateVerbatim()
	}
	c.ReplyInt(v.Previous)
	return nil
}

// traGetBit is TRA.GETBIT key offset: the bit (0 past the end or for an
// absent key), one host call, ReadBit.
func traGetBit(c *host.Call) error {
	key, rawOffset := c.Arg(1), c.Arg(2)
	offset, err := grammar.BitOffset(rawOffset)
	if err != nil {
		return err
	}
	seen, err := c.ReadBit(offset)
	if errors.Is(err, host.ErrBitUnanswered) {
		res := c.Read().Cmd(host.GETBIT).Arg(key).Arg(rawOffset).RunAll()
		bit := intAt(res, 0)
		if bit.Err != nil {
			return traTyped(bit.Err)
		}
		seen.Bit = bit.Val
	} else if err != nil {
		return traTyped(err)
	}
	c.ReplyInt(seen.Bit)
	return nil
}
