package host

/*
#include "shim.h"
*/
import "C"

// Blocking commands: a handler that finds nothing to answer may block its
// client on one key instead of replying (BlockOnKey), and the server runs
// it again each time that key is signalled ready (shim.c, "blocking
// commands"). Writes that can give a blocked command something to answer
// signal its key (Batch.SignalReady).

// Place is what the server says of the context a command runs in, as far
// as blocking its client goes (the module API's context flags).
type Place struct {
	// Script: inside a script (EVAL, FCALL).
	Script bool
	// Multi: inside MULTI/EXEC.
	Multi bool
	// DenyBlocking: the caller may not be blocked (a script's client, a
	// module's call, …).
	DenyBlocking bool
	// Subscribed: the caller is subscribed to a channel (a RESP3 client
	// may send any command so). Valkey 9.1 answers nothing to such a
	// client's module command that blocks, and runs its next command at
	// once, so its replies fall out of step with its commands.
	Subscribed bool
}

// Place reads the command's context flags and whether its client is
// subscribed: two crossings.
func (c *Call) Place() Place {
	c.check()
	f := C.emq_context_flags(C.uintptr_t(c.ctx))
	return Place{
		Script:       f&C.EMQ_CTX_LUA != 0,
		Multi:        f&C.EMQ_CTX_MULTI != 0,
		DenyBlocking: f&C.EMQ_CTX_DENY_BLOCKING != 0,
		Subscribed:   C.emq_client_subscribed(C.uintptr_t(c.ctx)) != 0,
	}
}

// Rerun reports whether this run is a blocked command's, run again because
// a key it blocks on was signalled ready: its reply ends the block.
func (c *Call) Rerun() bool { return c.rerun }

// BlockOnKey asks to block the client on key for ms milliseconds (> 0) in
// place of a reply: the handler then replies nothing and returns nil. The
// server runs the handler again (Rerun) each time key is signalled ready,
// whether it exists or not; a rerun that asks to block again leaves the
// client blocked, one that replies ends the block. At the timeout (and on
// CLIENT UNBLOCK … TIMEOUT) the client gets the empty array, and nothing
// runs. A handler that replies or fails after BlockOnKey is answered that
// way, not blocked. Only a context Place allows may block: the caller
// checks.
func (c *Call) BlockOnKey(key []byte, ms int64) {
	c.check()
	if ms <= 0 {
		panic("host: BlockOnKey with a block time of 0 or less")
	}
	var w writer
	w.reset(&c.io.block)
	w.bytes(key)
	w.done()
	c.io.block_ms = C.longlong(ms)
	c.blocked = true
}

// unblock drops a block asked for: the handler answered after all.
func (c *Call) unblock() {
	c.blocked = false
	c.io.block_ms = 0
}

// SignalReady marks the key base+suffix ready for the clients blocked on it
// (RM_SignalKeyAsReady), after the command: each is then run again. Only a
// write batch signals, since only a write can give a blocked command
// something to answer; a signal with no client blocked costs the server
// almost nothing.
func (b *Batch) SignalReady(base []byte, suffix string) {
	b.own()
	if !b.write {
		panic("host: SignalReady on a read batch")
	}
	w := &b.c.ready
	w.u32(uint32(len(base) + len(suffix)))
	w.bytes(base)
	w.string(suffix)
}
