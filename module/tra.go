package main

import (
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
	"github.com/trafikey/trafikey/protocol"
)

// The TRA family (docs/PROTOCOL.md, "The TRA family"): the contrast to the
// EMQ grammar. No numkeys (the key is argv[1], declared like SETBIT's), no
// fence, arity enforced by the server, its own three texts; and its one
// write, TRA.SETBIT, is replicated verbatim, as the client sent it, and not
// at all when it changed nothing. This is the only file of handlers that
// replicates verbatim (the adapter test holds every EMQ handler to effects).

// traCommands registers TRA.SETBIT and TRA.GETBIT.
func traCommands() []host.Command {
	return []host.Command{
		{Name: protocol.TRASetBit, Flags: "write deny-oom", Keys: host.FirstKeyWrite, Arity: 4, Summary: "Sets one bit of a string and replies the previous one; replicated verbatim.", Handler: traSetBit},
		{Name: protocol.TRAGetBit, Flags: "readonly fast", Keys: host.FirstKeyRead, Arity: 3, Summary: "Replies one bit of a string.", Handler: traGetBit},
	}
}

// traBits reads GETBIT <key> <offset> and STRLEN <key>: the bit and the
// string's length, or ERR TRA wrong type for a key of another type.
func traBits(c *host.Call, key, offset []byte) (bit, strlen int64, err error) {
	res := c.Read().Cmd("GETBIT").Arg(key).Arg(offset).Cmd("STRLEN").Arg(key).RunAll()
	b := intAt(res, 0)
	if b.Err != nil {
		if isWrongType(b.Err) {
			return 0, 0, grammar.Refusal(protocol.ErrTRAWrongType)
		}
		return 0, 0, b.Err
	}
	n := intAt(res, 1)
	if n.Err != nil {
		return 0, 0, n.Err
	}
	return b.Val, n.Val, nil
}

// isWrongType reports whether a host error is the server's WRONGTYPE text.
func isWrongType(err error) bool { return err.Error() == protocol.ErrWrongType }

// traSetBit is TRA.SETBIT key offset value: the previous bit.
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
// absent key).
func traGetBit(c *host.Call) error {
	key, rawOffset := c.Arg(1), c.Arg(2)
	if _, err := grammar.BitOffset(rawOffset); err != nil {
		return err
	}
	res := c.Read().Cmd("GETBIT").Arg(key).Arg(rawOffset).RunAll()
	bit := intAt(res, 0)
	if bit.Err != nil {
		if isWrongType(bit.Err) {
			return grammar.Refusal(protocol.ErrTRAWrongType)
		}
		return bit.Err
	}
	c.ReplyInt(bit.Val)
	return nil
}
