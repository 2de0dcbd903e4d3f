// Command module is trafikey's native executor: a Valkey module, built with
//
//	go build -buildmode=c-shared -o trafikey.so ./module
//	chmod 0755 trafikey.so # the server refuses a module without the execute bit
//
// and loaded with "loadmodule /path/trafikey.so [name value]…". It registers
// the EMQ.* commands of the table below; each verb lives in its own file, and
// internal/host is the only code that talks to the server.
//
// Module arguments (the Go runtime inside the server sees no environment
// variables, so its settings come here):
//
//	gomaxprocs N          Go's P count (default 2: the server thread holds one
//	                      P; with a second one idle, Go's monitor leaves the
//	                      first alone between commands, where with a single P
//	                      it takes it and wakes a thread after every command
//	                      of a lightly loaded server; see internal/host)
//	gcpercent N           GOGC (default 100; -1 turns the collector off)
//	memlimit BYTES        the Go heap's soft limit (default none)
//	debug-commands yes|no register the EMQ.DEBUG.* commands (default no)
//	tra-c yes|no          answer the TRA calls in the module's C part,
//	                      without entering Go: every TRA.SETBIT, and the
//	                      TRA.GETBIT of a small offset on a string or no
//	                      key (default yes; no runs every call through its
//	                      Go handler, the reference the tests compare with)
//	key-writes yes|no     write through the server's key API: a verb's
//	                      HSET, HINCRBY, ZADD and ZREM change the data
//	                      directly, with each command's events, signal and
//	                      replicated effect (default yes, outside a cluster;
//	                      no sends every write through RM_Call, the
//	                      reference the tests compare with)
//
// An unknown or malformed argument fails the load with a line in the log.
package main

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
)

// main is never run: the server loads the library and calls its entry point.
func main() {}

// moduleName and moduleVersion are what MODULE LIST shows.
const (
	moduleName    = "trafikey"
	moduleVersion = 1
)

func init() {
	host.Init(host.Module{Name: moduleName, Version: moduleVersion, Load: load})
}

// table is the command table. Writers are flagged "write", with "deny-oom"
// when they can grow the dataset (verbCommand), and readers "readonly";
// keyed commands take EVAL-style keys (numkeys, then the keys); the TRA
// family comes last, with SETBIT-style keys (tra.go).
func table(traC bool) []host.Command {
	return append(append([]host.Command{
		{
			Name: protocol.VersionCommand, Flags: "readonly fast", Keys: host.NoKeys, Arity: 1,
			Summary: "Returns the wire version of the loaded trafikey module.", Handler: version,
		},
	}, verbs()...), traCommands(traC)...)
}

// load applies the module arguments and returns the commands to register.
func load(args []string) ([]host.Command, error) {
	o, err := parseArgs(args)
	if err != nil {
		return nil, err
	}
	o.apply()
	cmds := table(o.traC)
	if o.debugCommands {
		cmds = append(cmds, debugTable()...)
	}
	memlimit := "none"
	if o.memlimit != math.MaxInt64 {
		memlimit = strconv.FormatInt(o.memlimit, 10)
	}
	host.SetKeyWrites(o.keyWrites)
	host.Logf(host.LogNotice, "wire %d, %d commands, gomaxprocs %d, gcpercent %d, memlimit %s, debug-commands %v, tra-c %v, key-writes %v, embed-max %d, scripts-hold-args %v, options %#x",
		protocol.Wire, len(cmds), o.gomaxprocs, o.gcpercent, memlimit, o.debugCommands, o.traC, host.KeyWrites(),
		host.EmbedMax(), host.ScriptsHoldArgs(), host.ModuleOptions())
	return cmds, nil
}

// options are the module arguments.
type options struct {
	gomaxprocs    int
	gcpercent     int
	memlimit      int64
	debugCommands bool
	traC          bool
	keyWrites     bool
}

// parseArgs reads "name value" pairs. Each name may appear once.
func parseArgs(args []string) (options, error) {
	o := options{gomaxprocs: 2, gcpercent: 100, memlimit: math.MaxInt64, traC: true, keyWrites: true}
	if len(args)%2 != 0 {
		return o, fmt.Errorf("module arguments come as name value pairs, got %q", args)
	}
	seen := map[string]bool{}
	for i := 0; i < len(args); i += 2 {
		name, value := args[i], args[i+1]
		if seen[name] {
			return o, fmt.Errorf("module argument %q given twice", name)
		}
		seen[name] = true
		var err error
		switch name {
		case "gomaxprocs":
			o.gomaxprocs, err = integer(value, 1, 1024)
		case "gcpercent":
			o.gcpercent, err = integer(value, -1, math.MaxInt32)
		case "memlimit":
			var n int
			n, err = integer(value, 1, math.MaxInt64)
			o.memlimit = int64(n)
		case "debug-commands":
			o.debugCommands, err = yesNo(value)
		case "tra-c":
			o.traC, err = yesNo(value)
		case "key-writes":
			o.keyWrites, err = yesNo(value)
		default:
			return o, fmt.Errorf("unknown module argument %q (known: gomaxprocs, gcpercent, memlimit, debug-commands, tra-c, key-writes)", name)
		}
		if err != nil {
			return o, fmt.Errorf("module argument %s %q: %v", name, value, err)
		}
	}
	return o, nil
}

// yesNo parses yes or no.
func yesNo(s string) (bool, error) {
	switch s {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, errors.New("want yes or no")
}

// integer parses a plain decimal within [lo, hi].
func integer(s string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || (s[0] == '+') || n < lo || n > hi {
		return 0, fmt.Errorf("want an integer from %d to %d", lo, hi)
	}
	return n, nil
}

// apply sets the Go runtime from the options.
func (o options) apply() {
	runtime.GOMAXPROCS(o.gomaxprocs)
	debug.SetGCPercent(o.gcpercent)
	debug.SetMemoryLimit(o.memlimit)
}
