package host

/*
#include "shim.h"
int emq_exec(uintptr_t ctx, uintptr_t argv, int argc, uintptr_t io, int write, int stop_on_error);
void emq_set_key_writes(int on);
int emq_key_writes(void);
size_t emq_embed_max(void);
int emq_scripts_hold_args(void);
int emq_module_options(void);
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"unsafe"
)

// This file and call.c are the call adapter: the only code that sends a
// command to the server (RM_Call, or the key API for the reads it answers in
// RM_Call's place; see the package rules). A read batch uses the format "vEW"
// ('W': the server refuses a write command) and replicates nothing; a write
// batch, reachable only through Writes, uses "v!E" and is replicated as its
// effects. A test keeps both formats, the call
// function and the key API out of every other file.

// Batch collects host commands and runs them in one crossing into C: the
// command names and arguments are encoded into C memory as they are added, and
// the replies come back decoded without allocation. Get one from
// Writes.Write, or a read batch (ReadBatch) from Call.Read; each command has
// one batch per nesting depth, so starting a new batch discards one still
// being built.
//
//	res, err := w.Write().
//		Cmd("HINCRBY").Arg(metrics).Str("count").Int(1).
//		Cmd("ZREM").Arg(active).Arg(id).
//		Run()
type Batch struct {
	c      *Call
	w      writer
	write  bool
	nested bool   // a debug command's nested call (Call.DebugNested)
	serial uint64 // the command the batch belongs to (Call.serial)
	ncmds  uint32
	head   int    // offset of the current command's argument count
	nargs  uint32 // arguments of the current command so far
}

// maxRefScan bounds the search for an argument of the command itself in Arg:
// beyond it, use Argv.
const maxRefScan = 16

func (b *Batch) start(c *Call, write bool) *Batch {
	c.check()
	b.c, b.write, b.nested, b.serial = c, write, false, c.serial
	b.ncmds, b.head, b.nargs = 0, -1, 0
	b.w.reset(&c.io.req)
	b.w.u32(0) // command count, patched by run
	return b
}

func (b *Batch) own() {
	if b.c == nil || b.serial != b.c.serial || b.head == -2 {
		panic("host: Batch used outside the command that built it, or after it ran")
	}
}

func (b *Batch) endCmd() {
	if b.head >= 0 {
		b.w.patch32(b.head, b.nargs)
	}
}

// Cmd starts the next command of the batch; its arguments follow.
func (b *Batch) Cmd(name string) *Batch {
	b.own()
	if name == "" || strings.IndexByte(name, 0) >= 0 {
		panic("host: bad command name " + strconv.Quote(name))
	}
	b.endCmd()
	b.ncmds++
	b.head, b.nargs = b.w.n, 0
	b.w.u32(0) // argument count, patched by the next Cmd or by run
	b.w.u32(uint32(len(name)))
	b.w.string(name)
	b.w.byte(0)
	return b
}

func (b *Batch) inline(n int) { b.inlineKind(0, n) }

// inlineKind starts an argument of n bytes in the request: kind 0 for bytes,
// 2 for a string of the program's own (Str), which C may answer a field
// read with from strings it keeps (see intern in call.c).
func (b *Batch) inlineKind(kind byte, n int) {
	b.own()
	if b.head < 0 {
		panic("host: argument before Cmd")
	}
	b.nargs++
	b.w.byte(kind)
	b.w.u32(uint32(n))
}

// Arg adds a binary-safe argument, copied now, so p may be a Value's bytes
// from an earlier call. When p is exactly one of the command's own arguments
// (Call.Arg) and the command has at most 16, it is passed by reference
// without a copy; for more, use Argv.
func (b *Batch) Arg(p []byte) *Batch {
	if c := b.c; c != nil && len(p) > 0 && len(c.args) <= maxRefScan {
		d := unsafe.Pointer(unsafe.SliceData(p))
		for i := range c.args {
			if unsafe.Pointer(c.args[i].p) == d && int(c.args[i].n) == len(p) {
				return b.Argv(i)
			}
		}
	}
	b.inline(len(p))
	b.w.bytes(p)
	return b
}

// Str adds a string argument: meant for the program's own strings (field
// names, options), which a read's fast path may reuse across commands.
func (b *Batch) Str(s string) *Batch {
	b.inlineKind(2, len(s))
	b.w.string(s)
	return b
}

// Word adds a binary-safe argument, copied now, whose bytes recur across
// commands (a job's attempt or kind in its event): it passes as a Str
// passes, so C may pass a string it keeps instead of making one.
func (b *Batch) Word(p []byte) *Batch {
	b.inlineKind(2, len(p))
	b.w.bytes(p)
	return b
}

// Words is a run of the program's own string arguments encoded once
// (NewWords), which a batch adds with one copy (Batch.Words): each passes
// as Str passes it. Meant for runs a verb sends many times in a call, such
// as each job event's names in an XADD.
type Words struct {
	enc []byte
	n   uint32
}

// NewWords encodes ss, in order, as Str would add them.
func NewWords(ss ...string) Words {
	var w Words
	for _, s := range ss {
		w.enc = append(w.enc, 2)
		w.enc = binary.NativeEndian.AppendUint32(w.enc, uint32(len(s)))
		w.enc = append(w.enc, s...)
	}
	w.n = uint32(len(ss))
	return w
}

// Len is the number of arguments of w.
func (w Words) Len() int { return int(w.n) }

// Words adds the arguments of w, as that many Str would.
func (b *Batch) Words(w Words) *Batch {
	b.own()
	if b.head < 0 {
		panic("host: argument before Cmd")
	}
	b.nargs += w.n
	b.w.bytes(w.enc)
	return b
}

// Int adds an integer argument in decimal.
func (b *Batch) Int(v int64) *Batch {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], v, 10)
	b.inline(len(d))
	b.w.bytes(d)
	return b
}

// Argv adds the command's own i-th argument (0 is the command name) by
// reference: the server's string is passed on without a copy, whatever its
// size (a write copies one the server may hold embedded, EmbedMax, where
// the server's scripts pass fresh copies).
func (b *Batch) Argv(i int) *Batch {
	b.own()
	if b.head < 0 {
		panic("host: argument before Cmd")
	}
	if i < 0 || i >= len(b.c.args) {
		panic("host: Argv index out of range")
	}
	b.nargs++
	b.w.byte(1)
	b.w.u32(uint32(i))
	return b
}

// Do runs a batch of exactly one command and returns its reply or its error
// (see Results.At).
func (b *Batch) Do() (Value, error) {
	if b.ncmds != 1 {
		panic("host: Do needs exactly one command; use Run for a batch")
	}
	return b.run(true).At(0)
}

// Run runs the batch in one crossing, stopping at the first command that
// fails, and returns the replies with that command's error (nil when all
// succeeded). A write batch always runs this way: a write after a failed one
// is never attempted.
func (b *Batch) Run() (Results, error) {
	r := b.run(true)
	return r, r.firstError()
}

// run is the one function that sends host commands: one crossing for the
// whole batch, its replies decoded into the depth's arena.
func (b *Batch) run(stopOnError bool) Results {
	b.own()
	c := b.c
	c.check()
	b.endCmd()
	b.w.patch32(0, b.ncmds)
	b.w.done()
	b.head = -2 // ran: reuse needs a new Read or Write
	write, stop := 0, 0
	if b.write {
		write = 1
	} else if b.nested {
		write = 2
	}
	if stopOnError || b.write {
		stop = 1
	}
	io := c.io
	n := C.emq_exec(C.uintptr_t(c.ctx), C.uintptr_t(c.argv), C.int(len(c.args)),
		C.uintptr_t(uintptr(unsafe.Pointer(io))), C.int(write), C.int(stop))
	a := &c.lv.arena
	a.decode(cbytes(unsafe.Pointer(io.out.p), int(io.out.len)), int(n))
	return Results{a: a, gen: a.gen}
}

// SetKeyWrites turns the key-API writes on or off: with them on (the
// default) a write batch's HSET, HINCRBY, ZADD and ZREM change the
// data through the server's key API, with each command's keyspace events,
// key signal, reply and replicated effect (call.c, "the write fast path");
// off, every write goes through RM_Call, the reference the tests compare
// them with. Outside a cluster only, like the reads the key API answers.
// Call it from Module.Load.
func SetKeyWrites(on bool) {
	v := 0
	if on {
		v = 1
	}
	C.emq_set_key_writes(C.int(v))
}

// KeyWrites reports whether writes take the key API (SetKeyWrites).
func KeyWrites() bool { return C.emq_key_writes() != 0 }

// EmbedMax is the longest string value the server may hold embedded (or as
// an integer), asked of it at load (call.c, embed_max): a bit inside a
// string of at most this many bytes is read through GETBIT by RM_Call, and
// a write copies an argument of at most this many bytes.
func EmbedMax() uint64 { return uint64(C.emq_embed_max()) }

// ModuleOptions is the module options declared at load
// (VALKEYMODULE_OPTIONS_* bits): those of trafikey that the server knows.
func ModuleOptions() int { return int(C.emq_module_options()) }

// ScriptsHoldArgs reports whether the server's scripts call commands with
// arguments they hold (Lua as a module of the server, 9.1 on), so a write
// passes every argument as a held string too (call.c, scripts_hold_args).
func ScriptsHoldArgs() bool { return C.emq_scripts_hold_args() != 0 }

// SmallBitOffsets bounds the bit offsets that are valid whatever
// proto-max-bulk-len says: below 8·2^20 (its least is 1 MB, and SETBIT's
// and GETBIT's bound is 8 bits a byte of it). A bit call checks a larger
// one against the server's setting (CONFIG GET), as the SETBIT preanswer
// does; the GETBIT preanswer takes only smaller ones.
const SmallBitOffsets = C.EMQ_SMALL_BIT_OFFSETS

// ErrBitUnanswered is a bit call's error when it did not answer and did
// not write: the offset is past the server's bound, or the server did not
// answer a read. The handler then runs the server's own commands (GETBIT,
// SETBIT), which answer in their words. It is not a reply text.
var ErrBitUnanswered = errors.New("host: the bit call did not answer")

// BitSeen is what a TRA bit call found at the command's key (argv[1]) and
// did.
type BitSeen struct {
	// Bit is the bit at the offset before the call: 0 past the end of the
	// string or with no key.
	Bit int64
	// Len is the string's length, 0 with no key.
	Len int64
	// Wrote says Writes.SetBit wrote the bit.
	Wrote bool
}

// ReadBit reads the bit at offset (0 to 2^32−1) of the command's key,
// argv[1], as GETBIT reads it, in one crossing: the key API, or GETBIT
// through RM_Call for a bit inside a string of at most EmbedMax bytes (see
// the package rules). It returns ErrWrongType for a key of another type, and
// ErrBitUnanswered (see there).
func (c *Call) ReadBit(offset int64) (BitSeen, error) { return c.bit(offset, false, 0) }

// bit is the one function that runs a bit call. write is only set by
// Writes.SetBit.
func (c *Call) bit(offset int64, write bool, plan uint8) (BitSeen, error) {
	c.check()
	if c.cmd.Keys != FirstKeyRead && c.cmd.Keys != FirstKeyWrite {
		panic("host: a bit call in " + c.cmd.Name + ", which has no key at argv[1]")
	}
	if offset < 0 || offset > 1<<32-1 {
		panic("host: bit offset " + strconv.FormatInt(offset, 10) + " out of range")
	}
	w := 0
	if write {
		w = 1
	}
	io := c.io
	st := C.emq_bit(C.uintptr_t(c.ctx), C.uintptr_t(c.argv), C.uintptr_t(uintptr(unsafe.Pointer(io))),
		C.longlong(offset), C.int(w), C.int(plan))
	s := io.seen
	switch st {
	case C.EMQ_BIT_OK:
		return BitSeen{Bit: int64(s.bit), Len: int64(s.len), Wrote: s.wrote != 0}, nil
	case C.EMQ_BIT_WRONGTYPE:
		return BitSeen{}, ErrWrongType
	default:
		return BitSeen{}, ErrBitUnanswered
	}
}
