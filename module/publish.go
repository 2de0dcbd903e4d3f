package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// publish is EMQ.PUBLISH (internal/lua/publish.lua): append one event to the queue's
// events stream, branded as trafikey's. Crossings: the command, one read
// batch (the fence, EXISTS and XINFO STREAM of events), the guard, one XADD.
func publish(c *host.Call) error {
	// shape: numkeys 3 (base version events), ARGV event id [field value …];
	// layout
	r, err := busPrelude(c, protocol.Publish, func(args [][]byte) error {
		return grammar.PublishArity(protocol.Publish, args)
	})
	if err != nil {
		return err
	}
	events := r.keys[2]
	// values: the event name, the job id
	if n := len(r.args[0]); n < 1 || n > protocol.MaxEventName {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Publish.Name, "event"))
	}
	if !grammar.ID(r.args[1]) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Publish.Name, "id"))
	}
	st := buses.get()
	defer buses.put(st)
	st.reset()
	// the fence, then the stream: its type, its brand, its top
	seen := readStream(&r, events, &st.scratch)
	if err := verdict.Publish(&seen); err != nil {
		return err
	}
	// guard, then XADD events * brand emq event <event> id <id> …; the
	// server replicates it with the id it generated
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	b := w.Write().Cmd("XADD").Arg(events).Str("*").
		Str(protocol.EventBrandField).Str(protocol.EventBrand).
		Str(protocol.EventNameField).Argv(r.argv(0)).
		Str(protocol.EventIDField).Argv(r.argv(1))
	for i := 2; i < len(r.args); i++ {
		b.Argv(r.argv(i))
	}
	v, err := b.Do()
	if err != nil {
		return wrote(c, err)
	}
	id, err := v.Bytes()
	if err != nil {
		return wrote(c, err)
	}
	c.ReplyBulk(id)
	return nil
}
