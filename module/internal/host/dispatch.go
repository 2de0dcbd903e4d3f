package host

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/trafikey/trafikey/internal/protocol"
)

const (
	maxDepth    = C.EMQ_MAX_DEPTH
	maxCommands = C.EMQ_MAX_COMMANDS
)

// level is the Go scratch of one nesting depth, reused by every command that
// runs at that depth, so a command allocates nothing of its own.
type level struct {
	call  Call
	batch Batch
	arena arena
	argv  [][]byte
}

// levels are indexed by nesting depth: a command calling a command through
// the host (or through a script) runs one level deeper, with its own scratch,
// while the outer one waits inside its host call.
var levels [maxDepth]level

// serial numbers every command run, so a Batch, Writes or Results kept from
// an earlier command at the same depth is recognised.
var serial uint64

// Call is one run of a command: its arguments, its host calls and its reply.
// A handler gets it from the dispatcher; it and everything taken from it
// (argument bytes, Batch, Results, Value, Writes) are valid only until the
// handler returns.
type Call struct {
	ctx    uintptr // ValkeyModuleCtx*
	argv   uintptr // ValkeyModuleString**
	args   []C.emq_arg
	io     *C.emq_io
	lv     *level
	cmd    *command
	nowUS  int64
	serial uint64
	active bool
	// avoid is AvoidReplicaTraffic as the command started: the guard's
	// input, read in C without a crossing of its own
	avoid bool
	// rerun: a blocked command run again (emqRerun); blocked: the handler
	// asked to block (BlockOnKey)
	rerun, blocked bool
	// ready is the keys to signal ready after the command (emq_io.ready)
	ready writer
	rep   replyWriter
}

func (c *Call) check() {
	if !c.active {
		panic("host: Call used after its handler returned")
	}
}

// Name returns the command's registered name, e.g. "EMQ.CLAIM".
func (c *Call) Name() string { return c.cmd.Name }

// Argc returns the number of arguments, counting the command name.
func (c *Call) Argc() int { return len(c.args) }

// Arg returns argument i (0 is the command name as the client spelled it)
// without a copy: a read-only view of the server's string, valid until the
// handler returns. It panics when i is out of range (answered as
// ErrInternal).
func (c *Call) Arg(i int) []byte {
	a := c.args[i]
	return cbytes(unsafe.Pointer(a.p), int(a.n))
}

// Argv returns every argument as views (see Arg), in a slice the next command
// at the same depth reuses.
func (c *Call) Argv() [][]byte {
	c.lv.argv = c.lv.argv[:0]
	for i := range c.args {
		c.lv.argv = append(c.lv.argv, c.Arg(i))
	}
	return c.lv.argv
}

// NowMillis returns the server's clock in Unix milliseconds as it was when the
// command started: the same cached clock the TIME command answers with, so a
// deadline computed here equals the Lua executor's (TIME seconds * 1000 +
// microseconds / 1000), and it stays fixed for the whole command.
func (c *Call) NowMillis() int64 { return c.nowUS / 1000 }

// yieldEveryUS is how often, in the server's clock, a command of a busy
// server yields to the Go scheduler before it runs. The server's thread
// enters Go for every command and never passes through the scheduler
// otherwise, so the P it holds keeps one scheduling tick forever; Go's
// monitor thread then takes that P for "running too long" (10 ms) at every
// one of its rounds, waking a thread to spin and park each time, some 10 µs
// of CPU per command on the server's core. A yield now and then starts a new
// tick and keeps the monitor quiet. A yield costs a thread handoff (two
// wake-ups), so it is only taken while commands come less than busyGapUS
// apart: after a pause the monitor's work happens beside the server's
// thread, where a yield would delay the command that pays for it.
//
// The handoff is the command's own time: the server's thread waits until
// another thread has run the scheduler and handed the goroutine back, a few
// µs on an idle machine and up to a scheduling slice of the OS on a busy
// one, which INFO commandstats shows spread over the commands between two
// yields (EMQ.VERSION at one client on a loaded two-core machine: 7 to 52
// µs per call with the yield, 0.4 to 0.7 without). So the yield is as rare
// as keeps the tick young: the monitor counts 10 ms from the round it first
// sees a tick, which is after the yield that started it, so one yield every
// 9 ms of busy time is enough.
const (
	yieldEveryUS = 9000
	busyGapUS    = 1000
)

// lastYieldUS is when the last yield ran and prevCommandUS when the last
// top-level command started (server clock, µs).
var lastYieldUS, prevCommandUS int64

// emqDispatch runs the handler of one command: the one crossing from C into
// Go per command. The reply is left encoded in the depth's reply buffer for
// the trampoline to emit.
//
//export emqDispatch
func emqDispatch(f *C.emq_frame) { dispatch(f, false) }

// emqRerun runs a blocked command's handler again, on the client's
// arguments, when a key it blocks on was signalled ready (the server's reply
// callback, shim.c "blocking commands"): its reply ends the block, and a
// handler that asks to block again (Call.BlockOnKey) leaves the client
// blocked.
//
//export emqRerun
func emqRerun(f *C.emq_frame) { dispatch(f, true) }

func dispatch(f *C.emq_frame, rerun bool) {
	lv := &levels[f.depth]
	c := &lv.call
	serial++
	if now := int64(f.now_us); f.depth == 0 {
		// only while commands come back to back: after a pause the yield
		// would sit on the path of the one command waiting for it
		if now-prevCommandUS < busyGapUS && now-lastYieldUS >= yieldEveryUS {
			lastYieldUS = now
			runtime.Gosched()
		}
		prevCommandUS = now
	}
	*c = Call{
		ctx:    uintptr(f.ctx),
		argv:   uintptr(unsafe.Pointer(f.argv)),
		args:   unsafe.Slice(f.args, int(f.argc)),
		io:     f.io,
		lv:     lv,
		cmd:    &commands[f.id],
		nowUS:  int64(f.now_us),
		avoid:  f.avoid_replica_traffic != 0,
		serial: serial,
		active: true,
		rerun:  rerun,
		rep:    c.rep,
	}
	lv.arena.refs = lv.arena.refs[:0]
	c.ready.reset(&f.io.ready)
	var w writer
	w.reset(&f.io.rep)
	c.rep.reset(w)
	defer c.end()
	c.finish(c.cmd.Handler(c))
}

// finish turns the handler's outcome into the reply.
func (c *Call) finish(err error) {
	if c.blocked {
		if err == nil && c.rep.w.n == 0 {
			return // no reply: the client blocks (or stays blocked)
		}
		c.unblock()
		if err == nil {
			Logf(LogWarning, "%s: replied and asked to block; answered %q", c.cmd.Name, protocol.ErrInternal)
			c.rep.replace(protocol.ErrInternal)
			return
		}
	}
	if err != nil {
		text, ok := replyText(err)
		if !ok {
			Logf(LogWarning, "%s: unexpected error %q; answered %q", c.cmd.Name, err.Error(), protocol.ErrInternal)
			text = protocol.ErrInternal
		}
		c.rep.replace(text)
		return
	}
	if why := c.rep.check(); why != "" {
		Logf(LogWarning, "%s: %s; answered %q", c.cmd.Name, why, protocol.ErrInternal)
		c.rep.replace(protocol.ErrInternal)
	}
}

// end runs last in every dispatch: a panic becomes ErrInternal and a warning,
// never a crash of the server, and the reply's length is handed to C.
func (c *Call) end() {
	if r := recover(); r != nil {
		Logf(LogWarning, "%s: panic: %v (at %s); answered %q", c.cmd.Name, r, panicSite(), protocol.ErrInternal)
		c.unblock()
		c.rep.replace(protocol.ErrInternal)
	}
	c.ready.done()
	c.rep.w.done()
	c.active = false
}

// panicSite names the function and line that panicked, skipping the runtime.
func panicSite() string {
	var pcs [32]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && f.Function != "" {
			return fmt.Sprintf("%s %s:%d", f.Function, f.File, f.Line)
		}
		if !more {
			return "unknown"
		}
	}
}

// emqModule fills the module's name and version and the internal-error text
// for C. It returns 0, or 1 with the reason in t.err.
//
//export emqModule
func emqModule(t *C.emq_table) C.int {
	if module == nil {
		setLoadError(t, "no module declared (host.Init)")
		return 1
	}
	// These C strings live as long as the server: the library is never
	// unloaded.
	t.name = C.CString(module.Name)
	t.version = C.int(module.Version)
	t.internal_error = C.CString(protocol.ErrInternal)
	return 0
}

// emqLoad parses the module arguments through Module.Load and fills the C
// command table. It returns 0, or 1 with the reason in t.err.
//
//export emqLoad
func emqLoad(args *C.emq_arg, argc C.int, t *C.emq_table) (rc C.int) {
	defer func() {
		if r := recover(); r != nil {
			setLoadError(t, fmt.Sprintf("panic while loading: %v", r))
			rc = 1
		}
	}()
	strs := make([]string, int(argc))
	for i, a := range unsafe.Slice(args, int(argc)) {
		strs[i] = string(cbytes(unsafe.Pointer(a.p), int(a.n)))
	}
	table, err := module.Load(strs)
	var cmds []command
	if err == nil {
		cmds, err = compile(table)
	}
	if err != nil {
		setLoadError(t, err.Error())
		return 1
	}
	commands = cmds
	for i, c := range commands {
		e := &t.cmds[i]
		e.name = C.CString(c.Name)
		e.flags = C.CString(c.flags)
		e.summary = nil
		if c.Summary != "" {
			e.summary = C.CString(c.Summary)
		}
		e.keys = C.int(c.Keys)
		e.arity = C.int(c.Arity)
		e.preanswer = C.int(c.Preanswer)
		if c.Preanswer == PreanswerSetBit {
			e.setbit_plans = [2]C.uchar{C.uchar(c.Bit.Plans[0]), C.uchar(c.Bit.Plans[1])}
			e.setbit_offset = C.CString(c.Bit.Offset)
			e.setbit_bit = C.CString(c.Bit.Bit)
			e.setbit_wrongtype = C.CString(c.Bit.WrongType)
			e.setbit_paused = C.CString(ErrWritePaused.Error())
		}
	}
	t.ncmds = C.int(len(commands))
	return 0
}

func setLoadError(t *C.emq_table, msg string) {
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&t.err[0])), len(t.err))
	n := copy(buf[:len(buf)-1], msg)
	buf[n] = 0
}
