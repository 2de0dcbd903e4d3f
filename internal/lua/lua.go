// Package lua holds the Lua executor's scripts, one per verb, and the shared
// library every script is prefixed with. The scripts are the oracle: the
// native module is held to what they do (docs/PROTOCOL.md).
package lua

import (
	"embed"
	"regexp"
	"slices"
	"strings"

	"github.com/trafikey/trafikey/internal/protocol"
)

//go:embed *.lua
var files embed.FS

// LibFile is the shared library prepended to every script.
const LibFile = "lib.lua"

// Source returns the full script of verb v: the shebang of its mode, the
// part of the library the verb's file uses, then the file, with the
// library's constants folded in (Fold). It panics when the file is
// missing, which a test rules out for every verb of protocol.All.
func Source(v *protocol.Verb) string {
	lib, err := files.ReadFile(LibFile)
	if err != nil {
		panic(err)
	}
	body, err := files.ReadFile(v.Script)
	if err != nil {
		panic(err)
	}
	return Shebang(v) + "\n" + Fold(Used(string(lib), string(body))+"\n"+string(body))
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

// Fold replaces the library's constants in script with their values: each
// top-level "local NAME = <value>" whose NAME is upper case and whose value
// is a decimal integer or a single-quoted string without escapes is
// dropped, and NAME in the code (not in strings or comments) becomes the
// value. A local a function captures is an upvalue, which each call makes
// and closes again for every closure defined: a literal costs nothing. A
// name also bound elsewhere (a local, a parameter, a loop variable), written
// or used as a table field's key is left as it is.
func Fold(script string) string {
	values := map[string]string{}
	var order []string
	for _, line := range strings.SplitAfter(script, "\n") {
		if m := constant.FindStringSubmatch(line); m != nil {
			if _, dup := values[m[1]]; dup {
				values[m[1]] = "" // defined twice: not a constant
				continue
			}
			values[m[1]] = m[2]
			order = append(order, m[1])
		}
	}
	if len(order) == 0 {
		return script
	}
	// occurrences of each name in code, and the names that cannot fold
	type use struct{ at, end int }
	uses := map[string][]use{}
	keep := map[string]bool{}
	for name, v := range values {
		if v == "" {
			keep[name] = true
		}
	}
	scan(script, func(at, end int) {
		name := script[at:end]
		if _, ok := values[name]; !ok {
			return
		}
		if at > 0 && (script[at-1] == '.' || script[at-1] == ':') {
			return // a field or a method of a table
		}
		rest := strings.TrimLeft(script[end:], " \t")
		if strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "==") {
			// the definition itself, or an assignment or a table key
			if !definedAt(script, at) {
				keep[name] = true
			}
			return
		}
		if bound(script, at) || assigned(script, at) {
			keep[name] = true
			return
		}
		uses[name] = append(uses[name], use{at, end})
	})
	type edit struct {
		at, end int
		text    string
	}
	var edits []edit
	for _, name := range order {
		if keep[name] {
			continue
		}
		for _, u := range uses[name] {
			v := values[name]
			// a literal cannot be indexed, called on or followed by ..
			// without a space as a name can
			if next := strings.TrimLeft(script[u.end:], " \t"); next != "" && strings.ContainsAny(next[:1], ".:[") {
				v = "(" + v + ")"
			}
			edits = append(edits, edit{u.at, u.end, v})
		}
	}
	// the definitions of the folded names go
	pos := 0
	for _, line := range strings.SplitAfter(script, "\n") {
		if m := constant.FindStringSubmatch(line); m != nil && !keep[m[1]] {
			edits = append(edits, edit{pos, pos + len(line), ""})
		}
		pos += len(line)
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.at - b.at })
	var out strings.Builder
	last := 0
	for _, e := range edits {
		out.WriteString(script[last:e.at])
		out.WriteString(e.text)
		last = e.end
	}
	out.WriteString(script[last:])
	return out.String()
}

// constant matches a top-level constant's line: its name and value.
var constant = regexp.MustCompile(`^local ([A-Z][A-Z0-9_]*) = ([0-9]+|'[^'\\\n]*')[ \t]*(?:--[^\n]*)?\n?$`)

// definedAt reports whether the name at offset at is the one a constant's
// line defines.
func definedAt(script string, at int) bool {
	start := strings.LastIndexByte(script[:at], '\n') + 1
	end := strings.IndexByte(script[at:], '\n')
	line := script[start:]
	if end >= 0 {
		line = script[start : at+end+1]
	}
	return at-start == len("local ") && constant.MatchString(line)
}

// bound reports whether the name at offset at is bound there: in a local
// list, a parameter list or a for loop's names.
func bound(script string, at int) bool {
	start := strings.LastIndexByte(script[:at], '\n') + 1
	return boundBefore.MatchString(script[start:at])
}

// assigned reports whether the name at offset at is in the names of an
// assignment: the line's statement up to it is a list of targets, and an
// = (not ==) follows the list.
func assigned(script string, at int) bool {
	start := strings.LastIndexByte(script[:at], '\n') + 1
	end := strings.IndexByte(script[at:], '\n')
	if end < 0 {
		end = len(script) - at
	}
	m := targets.FindStringSubmatchIndex(script[start : at+end])
	return m != nil && at-start < m[3]
}

// targets matches a line that assigns to a list of names and fields.
var targets = regexp.MustCompile(`^(\s*(?:[A-Za-z_][A-Za-z0-9_.]*(?:\[[^\]]*\])?\s*,\s*)*[A-Za-z_][A-Za-z0-9_.]*(?:\[[^\]]*\])?\s*(?:,\s*[A-Za-z_][A-Za-z0-9_.]*(?:\[[^\]]*\])?\s*)*)=(?:[^=]|$)`)

// boundBefore matches a line's text before a name the line binds.
var boundBefore = regexp.MustCompile(`(?:\blocal\s+(?:function\s+)?|\bfor\s+|\bfunction\b[^(]*\()\s*(?:[A-Za-z_][A-Za-z0-9_]*\s*,\s*)*$`)

// scan calls f with the bounds of every identifier in Lua code, outside
// strings and comments.
func scan(src string, f func(at, end int)) {
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			if n := longBracket(src[i+2:]); n >= 0 {
				i = skipLong(src, i+2, n)
				continue
			}
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				return
			}
			i += j + 1
		case c == '[' && longBracket(src[i:]) >= 0:
			i = skipLong(src, i, longBracket(src[i:]))
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case identByte(c) && (c < '0' || c > '9'):
			j := i
			for j < len(src) && identByte(src[j]) {
				j++
			}
			f(i, j)
			i = j
		case c >= '0' && c <= '9':
			// a number, with its exponent or hex digits: not a name
			j := i
			for j < len(src) && (identByte(src[j]) || src[j] == '.') {
				j++
			}
			i = j
		default:
			i++
		}
	}
}

// longBracket is the level of the long bracket s starts with ([[ is 0,
// [=[ is 1), or -1.
func longBracket(s string) int {
	if len(s) < 2 || s[0] != '[' {
		return -1
	}
	n := 1
	for n < len(s) && s[n] == '=' {
		n++
	}
	if n < len(s) && s[n] == '[' {
		return n - 1
	}
	return -1
}

// skipLong is the offset after the long string or comment of level n that
// opens at src[i].
func skipLong(src string, i, n int) int {
	closing := "]" + strings.Repeat("=", n) + "]"
	j := strings.Index(src[i+n+2:], closing)
	if j < 0 {
		return len(src)
	}
	return i + n + 2 + j + len(closing)
}

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
