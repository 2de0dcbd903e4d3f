package verify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
)

// A step is one thing a sequence does, on both servers alike.
type step struct {
	// Kind is kindCall, kindCmd or kindSleep.
	Kind string
	// Verb is the protocol verb of a call.
	Verb *protocol.Verb
	// Numkeys is a call's numkeys exactly as sent ("3", "03", "-1"…); Args
	// are the keys and arguments after it (a call), or a whole command
	// (kindCmd).
	Numkeys string
	Args    []string
	// Sleep is how long a kindSleep step waits.
	Sleep time.Duration
}

// Step kinds.
const (
	// kindCall runs a verb on each server's executor: EVALSHA on the Lua
	// side, EMQ.<VERB> on the native side.
	kindCall = "call"
	// kindCmd runs a plain server command on both servers: planting a key of
	// another type, a corrupt counter, a foreign member.
	kindCmd = "cmd"
	// kindSleep waits on the test's side, between two steps.
	kindSleep = "sleep"
	// kindResp switches the calls that follow to RESP2 ("resp 2": a
	// connection of each side that sends no HELLO) or back to RESP3 ("resp
	// 3", valkey-go's connection). A null bulk and a null array are the same
	// null in RESP3, different bytes in RESP2.
	kindResp = "resp"
	// kindAs makes the next call run as the ACL user named ("as u3"), on a
	// connection of each side that user logged in; a step "cmd ACL SETUSER"
	// made it before. The call after that one is the default user's again.
	kindAs = "as"
)

// call is a well-formed call of v: numkeys is the number of keys.
func call(v *protocol.Verb, keys, args []string) step {
	return step{Kind: kindCall, Verb: v, Numkeys: strconv.Itoa(len(keys)), Args: append(slices.Clone(keys), args...)}
}

// raw is a call of v with numkeys spelled as given.
func raw(v *protocol.Verb, numkeys string, rest []string) step {
	return step{Kind: kindCall, Verb: v, Numkeys: numkeys, Args: rest}
}

// cmd is a plain command.
func cmd(args ...string) step { return step{Kind: kindCmd, Args: args} }

// verbByName finds a job-core verb by its lower-case name.
func verbByName(name string) *protocol.Verb {
	for _, v := range protocol.All {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// String is the step's line in a corpus file:
//
//	call <verb> <numkeys> <arg>…   every string Go-quoted, or rep("x",n)
//	cmd <arg>…
//	sleep <ms>
//	resp 2|3
//	as <user>
//
// A string of more than 32 copies of one byte is written rep("<byte>",<n>)
// so that the 64 KiB texts of the domain bounds keep the files readable.
func (s step) String() string {
	var b strings.Builder
	b.WriteString(s.Kind)
	switch s.Kind {
	case kindCall:
		b.WriteString(" " + s.Verb.Name + " " + quote(s.Numkeys))
	case kindSleep:
		b.WriteString(" " + strconv.FormatInt(s.Sleep.Milliseconds(), 10))
	case kindResp, kindAs:
		return s.Kind + " " + s.Args[0]
	}
	for _, a := range s.Args {
		b.WriteString(" " + quote(a))
	}
	return b.String()
}

// short is String with every argument cut to 40 bytes, for test logs.
func (s step) short() string {
	c := s
	c.Args = make([]string, len(s.Args))
	for i, a := range s.Args {
		if len(a) > 40 && !repeated(a) {
			a = a[:40] + "…(" + strconv.Itoa(len(a)) + " bytes)"
		}
		c.Args[i] = a
	}
	return c.String()
}

func repeated(s string) bool {
	return len(s) > 32 && strings.Count(s, s[:1]) == len(s)
}

func quote(s string) string {
	if repeated(s) {
		return "rep(" + strconv.Quote(s[:1]) + "," + strconv.Itoa(len(s)) + ")"
	}
	return strconv.Quote(s)
}

// parseStep reads one line written by String.
func parseStep(line string) (step, error) {
	word, rest, _ := strings.Cut(line, " ")
	var s step
	s.Kind = word
	switch word {
	case kindCall:
		name, tail, _ := strings.Cut(rest, " ")
		if s.Verb = verbByName(name); s.Verb == nil {
			return s, fmt.Errorf("unknown verb %q", name)
		}
		rest = tail
	case kindCmd:
	case kindResp:
		if v := strings.TrimSpace(rest); v != "2" && v != "3" {
			return s, fmt.Errorf("bad resp %q", rest)
		}
		s.Args = []string{strings.TrimSpace(rest)}
		return s, nil
	case kindAs:
		name := strings.TrimSpace(rest)
		if name == "" || strings.ContainsAny(name, " \"") {
			return s, fmt.Errorf("bad user %q", rest)
		}
		s.Args = []string{name}
		return s, nil
	case kindSleep:
		ms, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		if err != nil || ms < 0 {
			return s, fmt.Errorf("bad sleep %q", rest)
		}
		s.Sleep = time.Duration(ms) * time.Millisecond
		return s, nil
	default:
		return s, fmt.Errorf("unknown step kind %q", word)
	}
	args, err := parseStrings(rest)
	if err != nil {
		return s, err
	}
	if s.Kind == kindCall {
		if len(args) == 0 {
			return s, errors.New("call without numkeys")
		}
		s.Numkeys, args = args[0], args[1:]
	}
	if s.Kind == kindCmd && len(args) == 0 {
		return s, errors.New("empty command")
	}
	s.Args = args
	return s, nil
}

// parseStrings reads space-separated Go-quoted strings and rep("x",n) forms.
func parseStrings(text string) ([]string, error) {
	var out []string
	for {
		text = strings.TrimLeft(text, " ")
		if text == "" {
			return out, nil
		}
		if body, ok := strings.CutPrefix(text, "rep("); ok {
			q, err := strconv.QuotedPrefix(body)
			if err != nil {
				return nil, fmt.Errorf("rep: %w", err)
			}
			c, _ := strconv.Unquote(q)
			num, tail, ok := strings.Cut(body[len(q):], ")")
			n, err := strconv.Atoi(strings.TrimPrefix(num, ","))
			if !ok || err != nil || n < 0 || len(c) != 1 {
				return nil, fmt.Errorf("bad rep(%s", body)
			}
			out = append(out, strings.Repeat(c, n))
			text = tail
			continue
		}
		q, err := strconv.QuotedPrefix(text)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", text, err)
		}
		s, _ := strconv.Unquote(q)
		out = append(out, s)
		text = text[len(q):]
	}
}

// sequence is a corpus file: a name and its steps.
type sequence struct {
	Name  string
	Steps []step
}

// corpusDir holds the replayed sequences.
const corpusDir = "testdata/corpus"

// loadCorpus reads every *.seq file of dir. Lines starting with '#' and
// blank lines are comments.
func loadCorpus(dir string) ([]sequence, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.seq"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []sequence
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		seq := sequence{Name: strings.TrimSuffix(filepath.Base(f), ".seq")}
		for n, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line == "" || line[0] == '#' {
				continue
			}
			s, err := parseStep(line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", f, n+1, err)
			}
			seq.Steps = append(seq.Steps, s)
		}
		out = append(out, seq)
	}
	return out, nil
}

// writeSequence writes steps as a corpus file, the header lines as comments.
func writeSequence(path string, header []string, steps []step) error {
	var b strings.Builder
	for _, h := range header {
		for _, line := range strings.Split(h, "\n") {
			b.WriteString("# " + line + "\n")
		}
	}
	for _, s := range steps {
		b.WriteString(s.String() + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
