package host

import (
	"fmt"
	"slices"
	"strings"
)

// Keys says where a command's keys are and how it uses them.
type Keys uint8

// The key kinds of a command.
const (
	// NoKeys: the command declares no keys.
	NoKeys Keys = iota
	// ReadKeys: EVAL-style keys (numkeys at argv[1], the keys right after
	// it) that the command only reads (key-spec RO|ACCESS).
	ReadKeys
	// WriteKeys: EVAL-style keys the command may write (key-spec
	// RW|ACCESS|UPDATE).
	WriteKeys
	// FirstKeyRead: one key at argv[1] that the command only reads, as
	// GETBIT declares it (the TRA family: no numkeys).
	FirstKeyRead
	// FirstKeyWrite: one key at argv[1] that the command may write, as
	// SETBIT declares it.
	FirstKeyWrite
)

// Preanswer names the calls of a command that C answers without entering Go
// (docs/NATIVE.md, "The TRA family"), as the command's handler answers them:
// the same reply, the same effects. The handler stays the reference, which
// runs every call with NoPreanswer; a differential test runs every case
// through both.
type Preanswer uint8

// The preanswers.
const (
	// NoPreanswer: every call enters Go.
	NoPreanswer Preanswer = iota
	// PreanswerSetBit: every call of TRA.SETBIT key offset value, decided
	// by the handler's verdict and worded with its refusals (Command.Bit):
	// the offset and the value parsed as the handler parses them, the key
	// looked up for writing and its string unshared as SETBIT does, the
	// bit written exactly when the verdict's plan says so for what was
	// seen, as Writes.SetBit writes it (grown, set, signalled, notified,
	// replicated verbatim), or nothing at all; a paused server reads as
	// ReadBit does and refuses a write with ErrWritePaused; an offset past
	// the server's bound is refused in the server's words, as the
	// handler's GETBIT refuses it. A call whose host reply C cannot read
	// enters Go.
	PreanswerSetBit
	// PreanswerGetBit: TRA.GETBIT key offset, with a canonical offset below
	// SmallBitOffsets, on a string or no key: the reply is the bit, as
	// ReadBit reads it. Every other call enters Go.
	PreanswerGetBit
)

// BitAnswer is what C needs of the handler to answer TRA.SETBIT itself
// (PreanswerSetBit): its verdict, as the write plans it decides for each
// value, and its refusal texts.
type BitAnswer struct {
	// Plans are the handler's write plans (a verdict.SetBitPlan each, bit
	// 2·previous+inside set for a write) for the value 0 and the value 1.
	Plans [2]uint8
	// Offset, Bit and WrongType are the handler's refusals of an offset
	// that is not a canonical decimal in 0..2^32−1, of a value that is
	// not 0 or 1, and of a key of another type.
	Offset, Bit, WrongType string
}

// Handler runs one command. It reads its arguments from c, calls the server
// through c, and either writes one complete reply with c's Reply methods and
// returns nil, or returns an error, whose text is the error reply (see
// Error). A panic is recovered and answered as ErrInternal.
type Handler func(c *Call) error

// Command is one entry of the module's command table.
type Command struct {
	// Name is the command name, e.g. "EMQ.CLAIM".
	Name string
	// Flags are the server's command flags: "write" for a command that can
	// write (the server then holds it during CLIENT PAUSE WRITE and
	// failover), with "deny-oom" when it can grow the dataset (the server
	// then refuses it at maxmemory), "readonly" for a reader, plus "fast"
	// where it applies. The host adds "getkeys-api" to EVAL-style keyed commands.
	Flags string
	// Keys is where the command's keys are.
	Keys Keys
	// Arity is the server's arity: N exactly, or -N for at least N
	// (counting the command name). 0 leaves the server's default (-1).
	Arity int
	// Summary is shown by COMMAND DOCS.
	Summary string
	// Handler runs the command.
	Handler Handler
	// Preanswer is what C answers without entering Go, NoPreanswer for
	// nothing.
	Preanswer Preanswer
	// Bit is what C answers TRA.SETBIT with (PreanswerSetBit only).
	Bit BitAnswer
	// Debug marks a debug command, registered for tests only: it may read
	// by any command name (Call.DebugRead).
	Debug bool
}

// Module is what the host registers when the server loads the module.
type Module struct {
	// Name is the module's name (MODULE LIST).
	Name string
	// Version is the module's version (MODULE LIST).
	Version int
	// Load receives the module arguments (loadmodule path arg…) and returns
	// the command table; an error fails the load and is logged. It runs once
	// per load, on the server thread, before any command.
	Load func(args []string) ([]Command, error)
}

// command is a validated table entry.
type command struct {
	Command
	flags  string // as registered, with getkeys-api for keyed commands
	writes bool   // flagged write: the only commands that may pass the guard
}

var (
	module   *Module
	commands []command
)

// Init declares the module. Call it once, from an init function of package
// main: the server calls the module's entry point only after the library's
// Go initialisation has run.
func Init(m Module) {
	if module != nil {
		panic("host: Init called twice")
	}
	module = &m
}

// compile checks a command table against the rules the server and the write
// guard rely on, and adds the flags the host needs.
func compile(cmds []Command) ([]command, error) {
	if len(cmds) > maxCommands {
		return nil, fmt.Errorf("%d commands, at most %d", len(cmds), maxCommands)
	}
	out := make([]command, 0, len(cmds))
	seen := map[string]bool{}
	for _, c := range cmds {
		flags := strings.Fields(c.Flags)
		has := func(f string) bool { return slices.Contains(flags, f) }
		key := strings.ToLower(c.Name)
		switch {
		case c.Name == "" || strings.ContainsAny(c.Name, " \t\r\n\x00"):
			return nil, fmt.Errorf("bad command name %q", c.Name)
		case seen[key]:
			return nil, fmt.Errorf("%s: registered twice", c.Name)
		}
		if err := checkFlags(c, has); err != nil {
			return nil, err
		}
		if err := checkPreanswer(c); err != nil {
			return nil, err
		}
		seen[key] = true
		if c.Keys == ReadKeys || c.Keys == WriteKeys {
			flags = append(flags, "getkeys-api")
		}
		out = append(out, command{Command: c, flags: strings.Join(flags, " "), writes: has("write")})
	}
	return out, nil
}

// checkFlags checks a command's handler, flags (has) and keys.
func checkFlags(c Command, has func(string) bool) error {
	switch {
	case c.Handler == nil:
		return fmt.Errorf("%s: no handler", c.Name)
	case has("getkeys-api"):
		return fmt.Errorf("%s: getkeys-api is added by the host", c.Name)
	case has("deny-oom") && !has("write"):
		// A command that writes unflagged trips the server's assertion
		// during a pause; deny-oom without write says it writes.
		return fmt.Errorf("%s: a deny-oom command must be flagged write", c.Name)
	case has("write") && has("readonly"):
		return fmt.Errorf("%s: flagged both write and readonly", c.Name)
	case c.Keys == WriteKeys && !has("write"):
		return fmt.Errorf("%s: write keys need the write flag", c.Name)
	case c.Keys == ReadKeys && !has("readonly"):
		return fmt.Errorf("%s: read keys need the readonly flag", c.Name)
	case c.Keys == FirstKeyWrite && !has("write"):
		return fmt.Errorf("%s: a written key needs the write flag", c.Name)
	case c.Keys == FirstKeyRead && !has("readonly"):
		return fmt.Errorf("%s: a read key needs the readonly flag", c.Name)
	case c.Keys > FirstKeyWrite:
		return fmt.Errorf("%s: bad key kind %d", c.Name, c.Keys)
	}
	return nil
}

// checkPreanswer checks a command's preanswer against its keys, arity and
// bit answer.
func checkPreanswer(c Command) error {
	switch {
	case c.Preanswer == PreanswerSetBit && (c.Keys != FirstKeyWrite || c.Arity != 4):
		return fmt.Errorf("%s: the SETBIT preanswer needs SETBIT's key and arity", c.Name)
	case c.Preanswer == PreanswerGetBit && (c.Keys != FirstKeyRead || c.Arity != 3):
		return fmt.Errorf("%s: the GETBIT preanswer needs GETBIT's key and arity", c.Name)
	case c.Preanswer == PreanswerSetBit && (c.Bit.Plans[0] > 0xf || c.Bit.Plans[1] > 0xf || !bitText(c.Bit.Offset) || !bitText(c.Bit.Bit) || !bitText(c.Bit.WrongType)):
		return fmt.Errorf("%s: the SETBIT preanswer needs the handler's plans and refusal texts", c.Name)
	case c.Preanswer != PreanswerSetBit && c.Bit != (BitAnswer{}):
		return fmt.Errorf("%s: a bit answer without the SETBIT preanswer", c.Name)
	case c.Preanswer > PreanswerGetBit:
		return fmt.Errorf("%s: bad preanswer %d", c.Name, c.Preanswer)
	}
	return nil
}

// bitText reports whether s can be an error reply C sends as it is: not
// empty, one line, no NUL (C passes it NUL-terminated).
func bitText(s string) bool { return s != "" && !strings.ContainsAny(s, "\r\n\x00") }
