// Package lua holds the Lua executor's scripts, one per verb, and the shared
// library every script is prefixed with. The scripts are the oracle: the
// native module is held to what they do (docs/PROTOCOL.md).
package lua

import (
	"embed"

	"github.com/trafikey/trafikey/protocol"
)

//go:embed *.lua
var files embed.FS

// LibFile is the shared library prepended to every script.
const LibFile = "lib.lua"

// Source returns the full script of verb v: the shebang of its mode, the
// library, then the verb's file. It panics when the file is missing, which a
// test rules out for every verb of protocol.All.
func Source(v *protocol.Verb) string {
	lib, err := files.ReadFile(LibFile)
	if err != nil {
		panic(err)
	}
	body, err := files.ReadFile(v.Script)
	if err != nil {
		panic(err)
	}
	return Shebang(v) + "\n" + string(lib) + "\n" + string(body)
}

// Shebang is the first line of verb v's script. Its flags make the server
// treat the script as the native command is flagged: a verb that grows the
// dataset ("#!lua", no allow-oom) is refused at maxmemory before it runs,
// with the server's own OOM text; one that moves or shrinks runs
// (allow-oom); a read verb may write nothing and runs with EVALSHA_RO
// (no-writes).
func Shebang(v *protocol.Verb) string {
	switch v.Mode {
	case protocol.Reads:
		return "#!lua flags=no-writes"
	case protocol.Keeps:
		return "#!lua flags=allow-oom"
	}
	return "#!lua"
}

// Files returns the embedded script sources by file name, for the registry
// test that compares refusal texts with protocol.
func Files() map[string]string {
	out := map[string]string{}
	entries, _ := files.ReadDir(".")
	for _, e := range entries {
		b, err := files.ReadFile(e.Name())
		if err == nil {
			out[e.Name()] = string(b)
		}
	}
	return out
}
