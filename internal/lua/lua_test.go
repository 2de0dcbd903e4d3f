package lua_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/lua"
	"github.com/trafikey/trafikey/internal/protocol"
)

// TestScripts checks each verb's script against the verb table:
// the header lists the declared keys in order, and the shape and layout
// calls use the verb's name, key count and suffixes.
func TestScripts(t *testing.T) {
	t.Parallel()
	files := lua.Files()
	for _, v := range protocol.All {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			body, ok := files[v.Script]
			require.True(t, ok, "lua/%s is missing", v.Script)
			require.NotPanics(t, func() { lua.Source(v) })
			require.Equal(t, lua.Shebang(v)+"\n"+lua.Fold(lua.Used(files[lua.LibFile], body)+"\n"+body), lua.Source(v))
			require.True(t, strings.HasPrefix(lua.Shebang(v), "#!lua"))

			require.True(t, strings.HasPrefix(body, "-- "+v.Script+": "+v.Command+", "),
				"the header starts with the file and the command")
			var header []string
			for line := range strings.Lines(body) {
				if m := regexp.MustCompile(`^-- KEYS\[(\d+)\] -> (\S+)`).FindStringSubmatch(line); m != nil {
					header = append(header, m[1]+" "+m[2])
				}
			}
			want := []string{"1 emq:{q}:"}
			for i, s := range v.Keys {
				if v.Named != "" && i == len(v.Keys)-1 {
					s = v.Named + "<name>" // a named key: the prefix and a bus name
				}
				want = append(want, strconv.Itoa(i+2)+" emq:{q}:"+s)
			}
			require.Equal(t, want, header, "the header's KEYS lines")
			require.Contains(t, body, "\n-- ARGV", "the header lists ARGV")
			require.Contains(t, body, "\n-- Reply: ", "the header states the reply")
			require.Contains(t, body, "\n-- Refusals, in order: ", "the header lists the refusals")

			require.Contains(t, body, "\nlocal VERB = '"+v.Name+"'\n")
			m := regexp.MustCompile(`(?:shape|counted)\(VERB, (\d+)`).FindStringSubmatch(body)
			require.NotNil(t, m, "the script calls shape or counted")
			require.Equal(t, strconv.Itoa(v.NumKeys()), m[1], "shape's key count")
			quoted := make([]string, len(v.Keys))
			for i, s := range v.Keys {
				quoted[i] = "'" + s + "'"
			}
			if v.Named != "" {
				// bus.layout checks the fixed keys, then the named one
				require.Contains(t, body, "bus.layout(VERB, '"+v.Named+"')")
			} else {
				require.Contains(t, body, "layout(VERB, {"+strings.Join(quoted, ", ")+"})")
			}
			if v != protocol.Install {
				require.Contains(t, body, "refusal = fence()", "every verb but INSTALL runs the fence")
			}
		})
	}
}

// TestNoStrayFiles keeps lua/ to the library and one script per verb.
func TestNoStrayFiles(t *testing.T) {
	t.Parallel()
	want := map[string]bool{lua.LibFile: true}
	for _, v := range protocol.All {
		want[v.Script] = true
	}
	for name := range lua.Files() {
		require.True(t, want[name], "lua/%s is neither the library nor a verb's script", name)
	}
}

// TestScriptHabits rules out what the scripts must not do: replication
// switches (scripts replicate their effects), tostring (it rounds numbers to
// 14 digits), and redis.* spelled outside the library's locals (rcall for
// writes, rpcall for reads that return the server's error reply unchanged).
// The server itself refuses a global, so the conformance suite catches one.
func TestScriptHabits(t *testing.T) {
	t.Parallel()
	for name, src := range lua.Files() {
		for i, line := range strings.Split(src, "\n") {
			where := fmt.Sprintf("lua/%s:%d", name, i+1)
			code, _, _ := strings.Cut(line, "--")
			for _, banned := range []string{"replicate_commands", "set_repl", "tostring", "redis.call", "redis.pcall", "redis.error_reply"} {
				if name == lua.LibFile && strings.HasPrefix(banned, "redis.") && strings.HasPrefix(code, "local rcall, rpcall") {
					continue
				}
				require.NotContains(t, code, banned, where)
			}
		}
	}
}

// Used keeps the definitions a body uses, and the ones they use, in the
// library's order, and nothing else.
func TestUsed(t *testing.T) {
	t.Parallel()
	lib := "-- the library\nlocal a, b = 1, 2\nlocal function f()\n  return a\nend\n" +
		"-- g calls f\nlocal function g()\n  return f() + 1\nend\nlocal function h()\n  return b -- not g\nend\nlocal gx = 3\n"
	require.Equal(t, "-- the library\nlocal a, b = 1, 2\nlocal function f()\n  return a\nend\n-- g calls f\nlocal function g()\n  return f() + 1\nend\n",
		lua.Used(lib, "return g() -- h"))
	require.Equal(t, "-- the library\nlocal a, b = 1, 2\nlocal function h()\n  return b -- not g\nend\nlocal gx = 3\n", lua.Used(lib, "return h() + gx"))
	require.Equal(t, "-- the library\n", lua.Used(lib, "return 1"))
}

// Fold replaces a constant's name in code with its value and drops its
// line; strings, comments, fields, keys and a name bound, assigned or
// defined twice keep theirs.
func TestFold(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"local MAX = 10 -- the bound\nlocal E_X = 'ERR x'\nreturn MAX + 1, {err = E_X}\n",
			"return 10 + 1, {err = 'ERR x'}\n"},
		{"local MAX = 10\nlocal s = 'MAX' -- MAX\nreturn t.MAX, t:MAX(), {MAX}, [[MAX]], \"MAX\" --[[MAX]]\n",
			"local s = 'MAX' -- MAX\nreturn t.MAX, t:MAX(), {10}, [[MAX]], \"MAX\" --[[MAX]]\n"},
		{"local MAX = 10\nlocal t = {MAX = 1}\nreturn MAX\n", "local MAX = 10\nlocal t = {MAX = 1}\nreturn MAX\n"},
		{"local MAX = 10\nlocal function f(a, MAX) return MAX end\nreturn MAX\n",
			"local MAX = 10\nlocal function f(a, MAX) return MAX end\nreturn MAX\n"},
		{"local N = 0\nfor i = 1, 3 do N = N + i end\nreturn N\n", "local N = 0\nfor i = 1, 3 do N = N + i end\nreturn N\n"},
		{"local N = 0\nlocal a\na, N = 1, 2\nreturn N\n", "local N = 0\nlocal a\na, N = 1, 2\nreturn N\n"},
		{"local N = 0\nif x then\n  local N = 1\nend\nreturn N\n", "local N = 0\nif x then\n  local N = 1\nend\nreturn N\n"},
		{"local N = 1\nlocal N = 2\nreturn N\n", "local N = 1\nlocal N = 2\nreturn N\n"},
		{"local N = 1\nlocal S = 'a'\nreturn N..'x', S:upper(), #S, N == 1\n", "return (1)..'x', ('a'):upper(), #'a', 1 == 1\n"},
		{"local N = 1\nlocal x = N -- not a constant: lower case\nreturn x\n", "local x = 1 -- not a constant: lower case\nreturn x\n"},
	} {
		require.Equal(t, c.want, lua.Fold(c.in), c.in)
	}
}
