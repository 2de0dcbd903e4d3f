// Package lua holds the Lua executor's scripts, one per verb, and the shared
// library every script is prefixed with. The scripts are the oracle: the
// native module is held to what they do (docs/PROTOCOL.md).
package lua

import (
	"embed"
	"regexp"
	"strings"

	"github.com/trafikey/trafikey/protocol"
)

//go:embed *.lua
var files embed.FS

// LibFile is the shared library prepended to every script.
const LibFile = "lib.lua"

// Source returns the full script of verb v: the shebang of its mode, the
// part of the library the verb's file uses, then the file. It panics when
// the file is missing, which a test rules out for every verb of
// protocol.All.
func Source(v *protocol.Verb) string {
	lib, err := files.ReadFile(LibFile)
	if err != nil {
		panic(err)
	}
	body, err := files.ReadFile(v.Script)
	if err != nil {
		panic(err)
	}
	return Shebang(v) + "\n" + Used(string(lib), string(body)) + "\n" + string(body)
}

// Used returns the top-level definitions of lib (each starts with "local"
// at the start of a line and runs to the next) that body uses, directly or
// through other definitions, in lib's order. A script runs its whole text on
// every call, so each definition it carries but never calls costs every
// call a closure or a value: the library grows with the verbs, the cost of
// one verb must not.
func Used(lib, body string) string {
	type chunk struct {
		text  string
		names []string
		used  bool
	}
	var chunks []*chunk
	var head strings.Builder // the text before the first definition
	for _, line := range strings.SplitAfter(lib, "\n") {
		if m := definition.FindStringSubmatch(line); m != nil {
			c := &chunk{text: line}
			for _, n := range strings.Split(m[1]+m[2], ",") {
				c.names = append(c.names, strings.TrimSpace(n))
			}
			chunks = append(chunks, c)
			continue
		}
		if len(chunks) == 0 {
			head.WriteString(line)
			continue
		}
		chunks[len(chunks)-1].text += line
	}
	// comments name other definitions; only code counts
	code := func(text string) string { return comment.ReplaceAllString(text, "") }
	uses := func(text, name string) bool {
		for i := strings.Index(text, name); i >= 0; {
			end := i + len(name)
			if (i == 0 || !identByte(text[i-1])) && (end == len(text) || !identByte(text[end])) {
				return true
			}
			next := strings.Index(text[i+1:], name)
			if next < 0 {
				break
			}
			i += 1 + next
		}
		return false
	}
	// Mark what the body uses, then what the marked definitions use, until
	// nothing is added.
	pending := []string{code(body)}
	for len(pending) > 0 {
		text := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		for _, c := range chunks {
			if c.used {
				continue
			}
			for _, n := range c.names {
				if uses(text, n) {
					c.used = true
					pending = append(pending, code(c.text))
					break
				}
			}
		}
	}
	out := head.String()
	for _, c := range chunks {
		if c.used {
			out += c.text
		}
	}
	return out
}

// definition matches a top-level definition's first line and captures the
// names it defines: "local function f(" or "local a, b = …".
var definition = regexp.MustCompile(`^local (?:function ([A-Za-z_][A-Za-z0-9_]*)\b|([A-Za-z_][A-Za-z0-9_, ]*?)\s*=)`)

// comment matches a Lua line comment, to the end of its line.
var comment = regexp.MustCompile(`--[^\n]*`)

func identByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
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
