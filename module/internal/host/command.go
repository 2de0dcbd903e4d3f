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
		}
		seen[key] = true
		if c.Keys == ReadKeys || c.Keys == WriteKeys {
			flags = append(flags, "getkeys-api")
		}
		out = append(out, command{Command: c, flags: strings.Join(flags, " "), writes: has("write")})
	}
	return out, nil
}
