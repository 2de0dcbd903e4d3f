package protocol_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/lua"
	"github.com/trafikey/trafikey/internal/protocol"
)

// The registry test holds internal/protocol/errors.go and the Lua scripts to the same
// bytes. A builder is compared by its template: its text with every argument
// replaced by hole. On the Go side the builder is called with hole (a string
// argument) or intHole (an integer argument, then replaced by hole); on the
// Lua side a refusal is a concatenation that starts with a literal, and every
// operand that is not a literal becomes hole.
const (
	hole    = "\x00"
	intHole = 7654321
)

func holed(s string) string { return strings.ReplaceAll(s, strconv.Itoa(intHole), hole) }

// registry is every text of internal/protocol/errors.go, by name.
var registry = map[string]string{
	"ErrWireMissing":          protocol.ErrWireMissing,
	"ErrWireFound":            protocol.ErrWireFound(hole),
	"ErrAddIDExists":          protocol.ErrAddIDExists,
	"ErrAddIDSpace":           protocol.ErrAddIDSpace,
	"ErrAddDuplicateInBatch":  protocol.ErrAddDuplicateInBatch,
	"ErrRemoveActive":         protocol.ErrRemoveActive,
	"ErrCompleteManyRepeated": protocol.ErrCompleteManyRepeated,
	"ErrRequeueNotDead":       protocol.ErrRequeueNotDead,
	"ErrRemoveHasChildren":    protocol.ErrRemoveHasChildren,
	"ErrResultTooLarge":       protocol.ErrResultTooLarge,
	"ErrAddDuplicate":         protocol.ErrAddDuplicate(hole),
	"ErrStale":                protocol.ErrStale(hole),
	"ErrNotActive":            protocol.ErrNotActive(hole),
	"ErrRateLimited":          holed(protocol.ErrRateLimited(intHole)),
	"ErrKind":                 protocol.ErrKind(hole),
	"ErrNumkeys":              holed(protocol.ErrNumkeys(hole, intHole)),
	"ErrArity":                protocol.ErrArity(hole),
	"ErrLayout":               protocol.ErrLayout(hole),
	"ErrBadArg":               protocol.ErrBadArg(hole, hole),
	"ErrNotInteger":           protocol.ErrNotInteger,
	"ErrNumkeysNegative":      protocol.ErrNumkeysNegative,
	"ErrNumkeysTooMany":       protocol.ErrNumkeysTooMany,
	"ErrWrongType":            protocol.ErrWrongType,
	"ErrStreamExhausted":      protocol.ErrStreamExhausted,
	"ErrHashNotInteger":       protocol.ErrHashNotInteger,
	"ErrOverflow":             protocol.ErrOverflow,
	"ErrWritePaused":          protocol.ErrWritePaused,
	"ErrHostReply":            protocol.ErrHostReply,
	"ErrInternal":             protocol.ErrInternal,
	"ErrNoPerm":               protocol.ErrNoPerm,
	"ErrNotAfterTop":          protocol.ErrNotAfterTop(hole),
	"ErrTRAOffset":            protocol.ErrTRAOffset,
	"ErrTRABit":               protocol.ErrTRABit,
	"ErrTRAWrongType":         protocol.ErrTRAWrongType,
	"ErrRetryNotDelayed":      protocol.ErrRetryNotDelayed,
	"ErrCancelled":            protocol.ErrCancelled(hole),
	"ErrCancelState":          protocol.ErrCancelState,
	"ErrRescheduleState":      protocol.ErrRescheduleState,
	"ErrScheduleChanged":      protocol.ErrScheduleChanged,
	"ErrScheduleNotDue":       protocol.ErrScheduleNotDue,
	"ErrScheduleOutside":      protocol.ErrScheduleOutside,
	"ErrScheduleBroken":       protocol.ErrScheduleBroken,
}

// notInLua are the registry texts the Lua scripts never spell, and why. A
// text listed here must not appear in the scripts.
var notInLua = map[string]string{
	"ErrNumkeysNegative": "the server refuses a negative numkeys before the script runs",
	"ErrNumkeysTooMany":  "the server refuses numkeys past the arguments before the script runs",
	"ErrWrongType":       "the scripts return the server's own reply from redis.pcall",
	"ErrWritePaused":     "a host condition of the native executor",
	"ErrHostReply":       "a host condition of the native executor",
	"ErrInternal":        "a host condition of the native executor",
	"ErrTRAOffset":       "the TRA family is native only",
	"ErrTRABit":          "the TRA family is native only",
	"ErrTRAWrongType":    "the TRA family is native only",
}

// TestRegistryCoversErrorsGo fails when internal/protocol/errors.go gains or loses a
// text the registry table above does not list.
func TestRegistryCoversErrorsGo(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	require.NoError(t, err)
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.IsExported() {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					for _, n := range vs.Names {
						if n.IsExported() {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	slices.Sort(names)
	require.Equal(t, slices.Sorted(maps.Keys(registry)), names)
	for name := range notInLua {
		require.Contains(t, registry, name)
	}
}

// TestRegistryMatchesLua compares the refusal texts of the Lua scripts with
// the registry, byte for byte, in both directions.
func TestRegistryMatchesLua(t *testing.T) {
	t.Parallel()
	byText := map[string]string{}
	classes := map[string]bool{}
	for name, text := range registry {
		byText[text] = name
		class, _, _ := strings.Cut(text, " ")
		classes[class] = true
	}

	found := map[string][]string{} // registry name -> where the scripts spell it
	for file, src := range lua.Files() {
		texts, err := luaTexts(src, classes)
		require.NoError(t, err, file)
		for _, tx := range texts {
			where := fmt.Sprintf("lua/%s:%d", file, tx.line)
			name, ok := byText[tx.template]
			if !ok {
				t.Errorf("%s: %q is not a text of internal/protocol/errors.go", where, tx.template)
				continue
			}
			found[name] = append(found[name], where)
		}
	}
	for name, text := range registry {
		where := found[name]
		if reason, exempt := notInLua[name]; exempt {
			if len(where) > 0 {
				t.Errorf("%s (%q) is listed as not in the scripts (%s) but %v spells it", name, text, reason, where)
			}
			continue
		}
		switch len(where) {
		case 0:
			t.Errorf("%s (%q) is in internal/protocol/errors.go but no script spells it", name, text)
		case 1:
		default:
			t.Errorf("%s (%q) is spelled more than once: %v; spell it once, in internal/lua/lib.lua", name, text, where)
		}
	}
}

// luaText is a refusal text found in a script: its template and line.
type luaText struct {
	template string
	line     int
}

// luaTexts returns the refusal texts of a Lua source: every string
// literal or concatenation starting with a literal whose first word is a
// class of the registry (or starts with EMQ), as a template.
func luaTexts(src string, classes map[string]bool) ([]luaText, error) {
	toks, err := lexLua(src)
	if err != nil {
		return nil, err
	}
	isText := func(s string) bool {
		word, _, _ := strings.Cut(s, " ")
		return classes[word] || strings.HasPrefix(word, "EMQ")
	}
	var out []luaText
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		if tk.kind != tokString || !isText(tk.text) {
			continue
		}
		if i > 0 && toks[i-1].kind == tokConcat {
			return nil, fmt.Errorf("line %d: refusal text %q must start its concatenation", tk.line, tk.text)
		}
		var b strings.Builder
		b.WriteString(tk.text)
		j := i + 1
		for j < len(toks) && toks[j].kind == tokConcat {
			j++
			if j < len(toks) && toks[j].kind == tokString {
				b.WriteString(toks[j].text)
				j++
				continue
			}
			next, err := skipOperand(toks, j)
			if err != nil {
				return nil, err
			}
			b.WriteString(hole)
			j = next
		}
		out = append(out, luaText{template: b.String(), line: tk.line})
		i = j - 1
	}
	return out, nil
}

type tokKind int

const (
	tokString tokKind = iota // a string literal, text holds its value
	tokConcat                // ..
	tokName                  // a name or number
	tokOther                 // any other punctuation, text holds it
)

type luaToken struct {
	kind tokKind
	text string
	line int
}

// skipOperand returns the index after the operand of a concatenation that
// starts at toks[i]: a name or number followed by field accesses, indexes
// and calls, or a parenthesised expression.
func skipOperand(toks []luaToken, i int) (int, error) {
	if i >= len(toks) {
		return i, fmt.Errorf("concatenation ends the source")
	}
	switch {
	case toks[i].kind == tokName:
		i++
	case toks[i].kind == tokOther && toks[i].text == "(":
		i = skipBalanced(toks, i)
	default:
		return i, fmt.Errorf("line %d: unexpected %q in a concatenation", toks[i].line, toks[i].text)
	}
	for i < len(toks) && toks[i].kind == tokOther {
		switch toks[i].text {
		case ".", ":":
			i += 2
		case "[", "(":
			i = skipBalanced(toks, i)
		default:
			return i, nil
		}
	}
	return i, nil
}

func skipBalanced(toks []luaToken, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		if toks[i].kind != tokOther {
			continue
		}
		switch toks[i].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// lexLua splits Lua 5.1 source into the tokens the registry test needs;
// comments are dropped.
func lexLua(src string) ([]luaToken, error) {
	var toks []luaToken
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "--"):
			i += 2
			if level, ok := longBracket(src[i:]); ok {
				body, n, err := longString(src[i:], level)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", line, err)
				}
				line += strings.Count(body, "\n")
				i += n
				continue
			}
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '\'' || c == '"':
			s, n, err := quotedString(src[i:])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			toks = append(toks, luaToken{tokString, s, line})
			i += n
		case c == '[':
			if level, ok := longBracket(src[i:]); ok {
				body, n, err := longString(src[i:], level)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", line, err)
				}
				toks = append(toks, luaToken{tokString, strings.TrimPrefix(body, "\n"), line})
				line += strings.Count(body, "\n")
				i += n
				continue
			}
			toks = append(toks, luaToken{tokOther, "[", line})
			i++
		case strings.HasPrefix(src[i:], "..."):
			toks = append(toks, luaToken{tokName, "...", line})
			i += 3
		case strings.HasPrefix(src[i:], ".."):
			toks = append(toks, luaToken{tokConcat, "..", line})
			i += 2
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' ||
				src[j] >= '0' && src[j] <= '9' || c >= '0' && c <= '9' && src[j] == '.') {
				j++
			}
			toks = append(toks, luaToken{tokName, src[i:j], line})
			i = j
		default:
			toks = append(toks, luaToken{tokOther, string(c), line})
			i++
		}
	}
	return toks, nil
}

// longBracket reports whether s opens a long bracket [[ or [=*[ and its level.
func longBracket(s string) (int, bool) {
	if !strings.HasPrefix(s, "[") {
		return 0, false
	}
	level := 1
	for level < len(s) && s[level] == '=' {
		level++
	}
	if level < len(s) && s[level] == '[' {
		return level - 1, true
	}
	return 0, false
}

func longString(s string, level int) (string, int, error) {
	open := level + 2
	closing := "]" + strings.Repeat("=", level) + "]"
	end := strings.Index(s[open:], closing)
	if end < 0 {
		return "", 0, fmt.Errorf("unfinished long bracket")
	}
	return s[open : open+end], open + end + len(closing), nil
}

// quotedString decodes the Lua 5.1 string literal at the start of s and
// returns its value and length in the source.
func quotedString(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), i + 1, nil
		case c == '\n':
			return "", 0, fmt.Errorf("unfinished string")
		case c != '\\':
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			break
		}
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n', '\n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		default:
			if e >= '0' && e <= '9' {
				v, n := 0, 0
				for n < 3 && i+n < len(s) && s[i+n] >= '0' && s[i+n] <= '9' {
					v = v*10 + int(s[i+n]-'0')
					n++
				}
				if v > 255 {
					return "", 0, fmt.Errorf("escape \\%d out of range", v)
				}
				b.WriteByte(byte(v))
				i += n - 1
			} else {
				b.WriteByte(e)
			}
		}
	}
	return "", 0, fmt.Errorf("unfinished string")
}

// TestLexLua checks the lexer on the forms the scripts could use.
func TestLexLua(t *testing.T) {
	t.Parallel()
	classes := map[string]bool{"EMQSTALE": true, "ERR": true}
	src := `-- 'EMQSTALE in a comment' is not a text
--[[ 'ERR nor in' a long comment ]]
local a = 'EMQSTALE ' .. verb .. " token\110" .. ' mismatch'
local b = {err = 'ERR x ' .. f(a, 'y') .. t.k[1] .. (n + 1)}
local c = [[ERR long]]
local d = 'plain' .. 'ERR not a start'
`
	_, err := luaTexts(src, classes)
	require.ErrorContains(t, err, "must start its concatenation")
	texts, err := luaTexts(strings.TrimSuffix(src, "local d = 'plain' .. 'ERR not a start'\n"), classes)
	require.NoError(t, err)
	require.Equal(t, []luaText{
		{"EMQSTALE " + hole + " tokenn mismatch", 3},
		{"ERR x " + hole + hole + hole, 4},
		{"ERR long", 5},
	}, texts)
}
