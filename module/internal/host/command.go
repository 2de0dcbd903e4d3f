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
// (docs/NATIVE.md, "The TRA family"): only outcomes that write nothing,
// read as the command's handler reads them. The handler must give the same
// reply for them; a differential test runs every case through both.
type Preanswer uint8

// The preanswers.
const (
	// NoPreanswer: every call enters Go.
	NoPreanswer Preanswer = iota
	// PreanswerSetBit: TRA.SETBIT key offset value, with a canonical offset
	// below SmallBitOffsets and a value of exactly 0 or 1, on a string
	// whose bit at offset already holds the value: the reply is that bit,
	// and nothing is written or replicated. The key is looked up for
	// writing and the string unshared, as SETBIT does (it is left raw).
	PreanswerSetBit
	// PreanswerGetBit: TRA.GETBIT key offset, with a canonical offset below
	// SmallBitOffsets, on a string or no key: the reply is the bit, as
	// ReadBit reads it.
	PreanswerGetBit
)

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
		case c.Handler == nil:
			return nil, fmt.Errorf("%s: no handler", c.Name)
		case has("getkeys-api"):
			return nil, fmt.Errorf("%s: getkeys-api is added by the host", c.Name)
		case has("deny-oom") && !has("write"):
			// A command that writes unflagged trips the server's assertion
			// during a pause; deny-oom without write says it writes.
			return nil, fmt.Errorf("%s: a deny-oom command must be flagged write", c.Name)
		case has("write") && has("readonly"):
			return nil, fmt.Errorf("%s: flagged both write and readonly", c.Name)
		case c.Keys == WriteKeys && !has("write"):
			return nil, fmt.Errorf("%s: write keys need the write flag", c.Name)
		case c.Keys == ReadKeys && !has("readonly"):
			return nil, fmt.Errorf("%s: read keys need the readonly flag", c.Name)
		case c.Keys == FirstKeyWrite && !has("write"):
			return nil, fmt.Errorf("%s: a written key needs the write flag", c.Name)
		case c.Keys == FirstKeyRead && !has("readonly"):
			return nil, fmt.Errorf("%s: a read key needs the readonly flag", c.Name)
		case c.Keys > FirstKeyWrite:
			return nil, fmt.Errorf("%s: bad key kind %d", c.Name, c.Keys)
		case c.Preanswer == PreanswerSetBit && (c.Keys != FirstKeyWrite || c.Arity != 4):
			return nil, fmt.Errorf("%s: the SETBIT preanswer needs SETBIT's key and arity", c.Name)
		case c.Preanswer == PreanswerGetBit && (c.Keys != FirstKeyRead || c.Arity != 3):
			return nil, fmt.Errorf("%s: the GETBIT preanswer needs GETBIT's key and arity", c.Name)
		case c.Preanswer > PreanswerGetBit:
			return nil, fmt.Errorf("%s: bad preanswer %d", c.Name, c.Preanswer)
		}
		seen[key] = true
		if c.Keys == ReadKeys || c.Keys == WriteKeys {
			flags = append(flags, "getkeys-api")
		}
		out = append(out, command{Command: c, flags: strings.Join(flags, " "), writes: has("write")})
	}
	return out, nil
}
