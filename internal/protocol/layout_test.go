package protocol_test

import (
	"bufio"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/repo"
)

// A verb's pieces are named after it, so `git ls-files '*<verb>*'` finds
// them all: its Lua script, its native handler, its verdict and its
// conformance scenarios. What several verbs share lives in files named for
// what it is (verb.go, laneacct.go, schedule.go, ...).
var pieces = []struct{ name, dir, ext string }{
	{"lua", "internal/lua", ".lua"},
	{"handler", "module", ".go"},
	{"verdict", "module/internal/verdict", ".go"},
	{"conformance", "internal/conformance", ".go"},
}

// TestVerbLayout holds every registered verb to its four pieces, each in
// the file named for the verb.
func TestVerbLayout(t *testing.T) {
	t.Parallel()
	root, err := repo.Root()
	require.NoError(t, err)
	for _, v := range protocol.All {
		for _, p := range pieces {
			path := filepath.Join(root, p.dir, v.Name+p.ext)
			_, err := os.Stat(path)
			require.NoError(t, err, "%s: its %s belongs in %s", v.Name, p.name, filepath.Join(p.dir, v.Name+p.ext))
		}
	}
}

// TestVerdictTestsBesideFiles holds each verdict test file beside the file
// it tests: <name>_test.go beside <name>.go, so a verb's verdict tests are
// <verb>_test.go.
func TestVerdictTestsBesideFiles(t *testing.T) {
	t.Parallel()
	root, err := repo.Root()
	require.NoError(t, err)
	dir := filepath.Join(root, "module", "internal", "verdict")
	tests, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	require.NoError(t, err)
	require.NotEmpty(t, tests)
	for _, f := range tests {
		require.FileExists(t, strings.TrimSuffix(f, "_test.go")+".go", "a test file without the file it tests")
	}
}

// heading is a heading of docs/PROTOCOL.md.
type heading struct {
	level  int
	text   string
	anchor string
}

// readProtocol reads docs/PROTOCOL.md's lines.
func readProtocol(t *testing.T) []string {
	t.Helper()
	root, err := repo.Root()
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(root, "docs", "PROTOCOL.md"))
	require.NoError(t, err)
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(t, sc.Err())
	return lines
}

// headings lists the document's headings outside code blocks, each with
// its GitHub anchor (a repeated anchor gets -1, -2, ... as GitHub gives it).
func headings(lines []string) []heading {
	var out []heading
	seen := map[string]int{}
	fence := false
	for _, l := range lines {
		if strings.HasPrefix(l, "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		level := len(l) - len(strings.TrimLeft(l, "#"))
		text := strings.TrimSpace(l[level:])
		a := anchor(text)
		if n := seen[a]; n > 0 {
			seen[a] = n + 1
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		out = append(out, heading{level, text, a})
	}
	return out
}

// anchor is GitHub's anchor of a heading's text: lower case, the
// punctuation dropped but for - and _, spaces as -. A dotted verb's anchor
// drops its dot: SCHEDULE.FIRE is #schedulefire.
func anchor(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var verbHeading = regexp.MustCompile(`^[A-Z][A-Z0-9._]*$`)

// TestProtocolDocVerbs holds docs/PROTOCOL.md to the registry: one section
// per registered verb, its heading the verb in capitals so its anchor is
// the verb's (#cancel, #schedulefire), and no section for a verb the
// registry lacks. EMQ.VERSION, the keyless probe, is not a keyed verb but
// has its section too.
func TestProtocolDocVerbs(t *testing.T) {
	t.Parallel()
	hs := headings(readProtocol(t))
	var doc []string
	for _, h := range hs {
		if h.level == 3 && verbHeading.MatchString(h.text) {
			doc = append(doc, h.text)
		}
	}
	want := []string{protocol.VersionCommand}
	for _, v := range protocol.All {
		want = append(want, strings.ToUpper(v.Name))
	}
	slices.Sort(doc)
	slices.Sort(want)
	require.Equal(t, want, doc, "the verb sections of docs/PROTOCOL.md (### VERB)")
	anchors := map[string]bool{}
	for _, h := range hs {
		anchors[h.anchor] = true
	}
	for _, v := range protocol.All {
		require.True(t, anchors[anchor(v.Name)], "%s: no section with anchor #%s", v.Name, anchor(v.Name))
	}
}

var docLink = regexp.MustCompile(`\]\(#([^)]+)\)`)

// TestProtocolDocLinks holds the document's links to its own sections to
// the headings it has, so renaming a section cannot leave a link behind.
func TestProtocolDocLinks(t *testing.T) {
	t.Parallel()
	lines := readProtocol(t)
	anchors := map[string]bool{}
	for _, h := range headings(lines) {
		anchors[h.anchor] = true
	}
	for i, l := range lines {
		for _, m := range docLink.FindAllStringSubmatch(l, -1) {
			require.True(t, anchors[m[1]], "docs/PROTOCOL.md:%d links to #%s, which no heading has", i+1, m[1])
		}
	}
}

var (
	docCode        = regexp.MustCompile("`([^`]+)`")
	docPlaceholder = regexp.MustCompile(`<[a-z]+>`)
)

// TestProtocolDocRefusals holds the table of docs/PROTOCOL.md's "Refusal
// texts" to the registry (internal/protocol/errors.go, the registry table
// of registry_test.go): every registry text is in it as a template (each
// argument written <name>), and every text in it is a registry text or an
// instance of one (ERR EMQ add bad options is ErrBadArg's).
func TestProtocolDocRefusals(t *testing.T) {
	t.Parallel()
	lines := readProtocol(t)
	start := slices.Index(lines, "## Refusal texts")
	require.GreaterOrEqual(t, start, 0, "no section Refusal texts")
	doc := map[string]bool{}
	for _, l := range lines[start+1:] {
		if strings.HasPrefix(l, "## ") {
			break
		}
		cols := strings.Split(l, "|")
		if !strings.HasPrefix(l, "| ") || len(cols) < 4 {
			continue
		}
		for _, m := range docCode.FindAllStringSubmatch(cols[2], -1) {
			doc[docPlaceholder.ReplaceAllString(m[1], hole)] = true
		}
	}
	require.NotEmpty(t, doc)
	for name, text := range registry {
		require.True(t, doc[text], "%s (%q) is not in docs/PROTOCOL.md's refusal texts", name, strings.ReplaceAll(text, hole, "<…>"))
	}
	for text := range doc {
		require.True(t, slices.ContainsFunc(slices.Collect(maps.Values(registry)), func(tmpl string) bool { return instance(text, tmpl) }),
			"docs/PROTOCOL.md lists %q, which is no registry text", strings.ReplaceAll(text, hole, "<…>"))
	}
}

// instance reports whether text is tmpl, or tmpl with each hole filled by
// some non-empty text.
func instance(text, tmpl string) bool {
	if text == tmpl {
		return true
	}
	parts := strings.Split(tmpl, hole)
	if len(parts) == 1 {
		return false
	}
	re := "^"
	for i, p := range parts {
		if i > 0 {
			re += ".+"
		}
		re += regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(re + "$").MatchString(text)
}
