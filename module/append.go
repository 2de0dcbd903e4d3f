package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// appendEntries is EMQ.APPEND (internal/lua/append.lua): write a batch of stream
// entries with explicit ids to a bus stream, all of them or none.
// Crossings: the command, one read batch (the fence, EXISTS and XINFO STREAM
// of the bus), the guard, one write batch of n XADDs.
func appendEntries(c *host.Call) error {
	st := buses.get()
	defer buses.put(st)
	st.reset()
	// shape: numkeys 3 (base version bus:<name>), then the entries walked;
	// layout: the bus key is the base, bus: and a bus name
	r, err := busPrelude(c, protocol.Append, func(args [][]byte) error {
		var err error
		st.starts, err = grammar.EntriesArity(protocol.Append, args, st.starts)
		return err
	})
	if err != nil {
		return err
	}
	bus := r.keys[2]
	// values: each entry's id, in call order
	st.ids = st.ids[:0]
	for _, s := range st.starts {
		ms, seq, ok := grammar.StreamID(r.args[s])
		if !ok {
			return grammar.Refusal(protocol.ErrBadArg(protocol.Append.Name, "id"))
		}
		st.ids = append(st.ids, verdict.StreamID{Ms: ms, Seq: seq})
	}
	// the fence and the bus's top, one batch; XINFO types the bus
	seen := readStream(&r, bus, &st.scratch)
	if err := verdict.Append(st.ids, &seen); err != nil {
		return err
	}
	// guard, then every XADD; each id is after the one before it, so none
	// can fail on the data
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	b := w.Write()
	for _, s := range st.starts {
		// XADD <bus> <id> <field> <value> …: the entry's arguments by
		// reference, without its field count
		nf, _ := grammar.Decimal(r.args[s+1], 1, protocol.MaxEntryFields)
		b.Cmd("XADD").Arg(bus).Argv(r.argv(s))
		for i := s + 2; i < s+2+2*int(nf); i++ {
			b.Argv(r.argv(i))
		}
	}
	if _, err := b.Run(); err != nil {
		return wrote(c, err)
	}
	c.ReplyInt(int64(len(st.starts)))
	return nil
}
