package verify

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/trafikey/trafikey/internal/protocol"
)

// The differential test: random sequences of calls, run step by step on two
// servers, compared after every step (see pair.run). Budget:
//
//   - in CI, ciChecks sequences per pair (rapid's checks), about a minute
//     for the native pair on an idle 2-core machine, and never more than
//     ciBudgetNative of drawing new ones;
//   - with -short, a fifth of those (rapid's own cut), half as long,
//     within seconds (shortBudget…);
//   - TRAFIKEY_DIFF_CHECKS=N sets N for a long run (and rapid's shrink time
//     to 10 minutes unless -rapid.shrinktime says otherwise), and so does
//     -rapid.checks=N (the environment variable wins);
//   - -rapid.seed=S replays one random run, -rapid.steps the mean length;
//   - TRAFIKEY_DIFF_BUDGET=D lowers each random run's time budget to D
//     (scripts/test-matrix.sh sets it for the builds other than the
//     default one).
//
// A failing sequence is shrunk by rapid and written to
// testdata/corpus/new-<test>.seq; every testdata/corpus/*.seq is replayed
// first by each test, so a divergence once found stays tested.

// Sequences per run in CI. The Lua pair checks the harness itself (it must
// find nothing), so it gets a small share.
const (
	ciChecksLua    = 60
	ciChecksNative = 900
	// ciSteps is the mean number of actions of a sequence (-rapid.steps).
	ciSteps = 50
	// ciBudget… bound each random run in CI, whatever the checks.
	ciBudgetLua    = 15 * time.Second
	ciBudgetNative = 75 * time.Second
	// shortBudget… bound each random run with -short (the fast tier),
	// where rapid itself draws a fifth of the checks, half as long; the
	// corpus is replayed in full either way.
	shortBudgetLua = 2 * time.Second
	shortBudgetNat = 8 * time.Second
)

// checks sets rapid's number of checks for the next rapid.Check: the
// environment's TRAFIKEY_DIFF_CHECKS, else -rapid.checks when given, else ci.
// rapid.nofailfile defaults to true: the corpus files replace rapid's own
// fail files, which do not survive a change of the generator.
func checks(t *testing.T, ci int) int {
	t.Helper()
	given := givenFlags()
	n := ci
	if given["rapid.checks"] {
		n, _ = strconv.Atoi(flag.Lookup("rapid.checks").Value.String())
	}
	if s := os.Getenv("TRAFIKEY_DIFF_CHECKS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("TRAFIKEY_DIFF_CHECKS=%q: want a positive number", s)
		}
		n = v
		if !given["rapid.shrinktime"] {
			// a long run is worth a thorough shrink of what it finds
			if err := flag.Set("rapid.shrinktime", "10m"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := flag.Set("rapid.checks", strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	if !given["rapid.steps"] {
		if err := flag.Set("rapid.steps", strconv.Itoa(ciSteps)); err != nil {
			t.Fatal(err)
		}
	}
	if !given["rapid.nofailfile"] {
		if err := flag.Set("rapid.nofailfile", "true"); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// givenFlags are the flags set on the command line: those flag.Visit saw
// before checks first set any.
var givenFlags = sync.OnceValue(func() map[string]bool {
	given := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
})

// TestDifferentialLua runs the harness on two servers with the Lua executor:
// it must find no divergence, and shows the harness's own normalisations
// hold.
func TestDifferentialLua(t *testing.T) {
	f := repeatFailures(t)
	if testing.Short() {
		t.Logf("-short: %d random sequences, half as long, within %v; the full run (go test ./verify, as scripts/test.sh runs it) draws %d within %v",
			ciChecksLua/5, shortBudgetLua, ciChecksLua, ciBudgetLua)
		differential(t, f, newLuaPair(t), ciChecksLua, shortBudgetLua)
		return
	}
	differential(t, f, newLuaPair(t), ciChecksLua, ciBudgetLua)
}

// TestDifferentialNative compares the module with the Lua scripts.
func TestDifferentialNative(t *testing.T) {
	f := repeatFailures(t)
	if testing.Short() {
		t.Logf("-short: %d random sequences, half as long, within %v; the full run (go test ./verify, as scripts/test.sh runs it) draws %d within %v",
			ciChecksNative/5, shortBudgetNat, ciChecksNative, ciBudgetNative)
		differential(t, f, newNativePair(t), ciChecksNative, shortBudgetNat)
		return
	}
	differential(t, f, newNativePair(t), ciChecksNative, ciBudgetNative)
}

// failures are the messages a test failed with, kept to be logged again
// when it ends, after the servers' logs (their cleanups run first): a log
// that only shows its last lines still shows why it failed.
type failures struct{ msgs []string }

// repeatFailures returns the failures of t's subtests wrapped by wrap, and
// logs the last of them when t ends. Call it before t starts a server.
func repeatFailures(t *testing.T) *failures {
	f := &failures{}
	t.Cleanup(func() {
		if len(f.msgs) == 0 {
			return
		}
		// the last two: the shrunk case's failure and rapid's report of
		// it (its seed), in either order
		last := strings.Join(f.msgs[max(0, len(f.msgs)-2):], "\n")
		if len(last) > 8000 {
			last = last[:8000] + "…"
		}
		t.Logf("the failure above, again after the servers' logs (the last of %d messages):\n%s", len(f.msgs), last)
	})
	return f
}

// wrap returns t, keeping the messages it fails with in f.
func (f *failures) wrap(t *testing.T) *failureT { return &failureT{T: t, f: f} }

// failureT is a *testing.T whose failure messages are kept.
type failureT struct {
	*testing.T
	f *failures
}

func (t *failureT) Errorf(format string, args ...any) {
	t.Helper()
	t.f.msgs = append(t.f.msgs, fmt.Sprintf(format, args...))
	t.T.Errorf(format, args...)
}

func (t *failureT) Error(args ...any) {
	t.Helper()
	t.f.msgs = append(t.f.msgs, fmt.Sprint(args...))
	t.T.Error(args...)
}

func (t *failureT) Fatalf(format string, args ...any) {
	t.Helper()
	t.f.msgs = append(t.f.msgs, fmt.Sprintf(format, args...))
	t.T.Fatalf(format, args...)
}

func (t *failureT) Fatal(args ...any) {
	t.Helper()
	t.f.msgs = append(t.f.msgs, fmt.Sprint(args...))
	t.T.Fatal(args...)
}

func differential(t *testing.T, f *failures, p *pair, ci int, ciBudget time.Duration) {
	t.Run("corpus", func(t *testing.T) { replayCorpus(t, f, p) })
	if t.Failed() {
		return
	}
	t.Run("random", func(t *testing.T) {
		n := checks(t, ci)
		// In CI the run also stops drawing new sequences after budget
		// (those left pass at once, unrun), so that a loaded machine keeps
		// to the time; a sequence that failed is still shrunk in full.
		budget := time.Duration(0)
		if os.Getenv("TRAFIKEY_DIFF_CHECKS") == "" && !givenFlags()["rapid.checks"] {
			budget = ciBudget
			// the server matrix draws fewer: its builds differ from the
			// default one in the server, which the corpus and a shorter
			// run meet, not in the verbs, which the full run covers
			if d, err := time.ParseDuration(os.Getenv("TRAFIKEY_DIFF_BUDGET")); err == nil && d > 0 && d < budget {
				budget = d
			}
		}
		p.record = filepath.Join(corpusDir, "new-"+regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "_")+".seq")
		defer func() { p.record = "" }()
		if testing.Verbose() {
			defer p.logOutcomes(t)
		}
		start, ran, failed := time.Now(), 0, false
		rapid.Check(f.wrap(t), func(rt *rapid.T) {
			if budget > 0 && !failed && time.Since(start) > budget {
				return
			}
			defer func() {
				if rt.Failed() {
					failed = true
				}
			}()
			if !failed {
				ran++
			}
			p.reset(rt)
			g := &gen{t: rt, p: p}
			g.start()
			rt.Repeat(g.actions())
			p.checkReplicas(rt)
		})
		t.Logf("ran %d of %d sequences in %v (TRAFIKEY_DIFF_CHECKS or -rapid.checks for more, without the %v budget)",
			ran, n, time.Since(start).Round(time.Millisecond), ciBudget)
	})
}

// replayCorpus runs every corpus sequence on the pair, each as a subtest.
func replayCorpus(t *testing.T, f *failures, p *pair) {
	seqs, err := loadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range seqs {
		t.Run(seq.Name, func(t *testing.T) {
			ft := f.wrap(t)
			p.reset(ft)
			for _, s := range seq.Steps {
				p.run(ft, s)
			}
			p.checkReplicas(ft)
		})
	}
}

// TestCorpusFormat: every step kind survives a write and a read, bytes and
// long repeats included.
func TestCorpusFormat(t *testing.T) {
	steps := []step{
		raw(verbByName("claim"), " 5", []string{"emq:{q}:", "\x00\xff\r\n\"", textTooLong}),
		cmd("SET", "k", ""),
		{Kind: kindSleep, Sleep: 3e6},
		{Kind: kindResp, Args: []string{"2"}},
	}
	path := filepath.Join(t.TempDir(), "x.seq")
	if err := writeSequence(path, []string{"two\nlines"}, steps); err != nil {
		t.Fatal(err)
	}
	seqs, err := loadCorpus(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 1 || len(seqs[0].Steps) != len(steps) {
		t.Fatalf("read back %#v", seqs)
	}
	for i, s := range seqs[0].Steps {
		if s.String() != steps[i].String() {
			t.Errorf("step %d: %s, want %s", i, s, steps[i])
		}
	}
}

// TestDifferentialEventEntries runs the calls that publish several job
// events at once on both pairs, in a fixed sequence: an ADD of as many
// events as an entry holds, a CLAIM of the children, a COMPLETEMANY of
// them that releases their parents (more events than an entry holds, so
// two entries), a PROMOTE of several, a REMOVE cascade and a PUBLISH
// between them. Their entries (of one event, of several, split at
// protocol.MaxEntryEvents) must be the same on both servers, as the random
// sequences reach them only in small calls.
func TestDifferentialEventEntries(t *testing.T) {
	for name, newPair := range map[string]func(*testing.T) *pair{"lua": newLuaPair, "native": newNativePair} {
		t.Run(name, func(t *testing.T) {
			p := newPair(t)
			p.reset(t)
			k := protocol.KeysOf("q")
			run := func(v *protocol.Verb, args ...string) { p.run(t, call(v, v.KeyNames(k), args)) }
			add := func(n int, delay, parent string) {
				args := []string{strconv.Itoa(n), "1", protocol.AddOptionParent}
				for i := range n {
					p := ""
					if parent != "" && i > 0 {
						p = parent
					}
					args = append(args, "d"+strconv.Itoa(i), "0", delay, "1", "fixed", "0", "", "0", p)
				}
				run(protocol.Add, args...)
			}
			// n parents, each followed by its one child
			pairs := func(n int) {
				args := []string{strconv.Itoa(2 * n), "1", protocol.AddOptionParent}
				for i := range n {
					args = append(args, "p", "0", "0", "1", "fixed", "0", "", "0", "",
						"k", "0", "0", "1", "fixed", "0", "", "0", strconv.Itoa(2*i+1))
				}
				run(protocol.Add, args...)
			}
			run(protocol.Install)
			run(protocol.Events, "1000")
			half := protocol.MaxEntryEvents / 2
			pairs(half) // jobs 1 to 2·half: an entry of MaxEntryEvents events
			pairs(1)
			run(protocol.Publish, "custom", "1", protocol.EventNameField, "x", protocol.EventCountField, "2")
			run(protocol.Claim, "600000", strconv.Itoa(protocol.MaxCount)) // the half+1 children
			// the children complete and release their parents; a parent,
			// not active, publishes nothing
			many := []string{strconv.Itoa(half + 2), "1", "1", ""}
			for i := range half + 1 {
				many = append(many, strconv.Itoa(2*i+2), "1", "")
			}
			run(protocol.CompleteMany, many...)
			first := 2*half + 3
			add(3, "1", "")
			p.run(t, step{Kind: kindSleep, Sleep: 5 * time.Millisecond})
			run(protocol.Promote, "10")
			add(4, "0", "1")
			run(protocol.Remove, strconv.Itoa(first+3), "1")
			run(protocol.RemoveDead, "10", "", "", "0", strconv.Itoa(protocol.MaxScore), "", "")
			// a full call of jobs with kinds, every other one: entries split
			// at protocol.MaxEntryArgs, the ADD's and the CLAIM's
			kinds := []string{strconv.Itoa(protocol.MaxCount), "1", protocol.AddOptionKind}
			for i := range protocol.MaxCount {
				kinds = append(kinds, "k", "0", "0", "1", "fixed", "0", "", "0", []string{"email", ""}[i%2])
			}
			run(protocol.Add, kinds...)
			run(protocol.Claim, "600000", strconv.Itoa(protocol.MaxCount), "1")

			// the sequence reached what it is for: entries of several, a full one
			entries, err := p.a.do("XRANGE", k.Fixed(protocol.SuffixEvents), "-", "+")
			if err != nil {
				t.Fatal(err)
			}
			list, _ := entries.([]any)
			items := strings.Join(eventItems(list), "\n")
			for _, want := range []string{"an entry of " + strconv.Itoa(protocol.MaxEntryEvents) + " events", "an entry of 2 events",
				"an entry of 857 events", "an entry of 143 events", "kind email",
				"an entry of 3 events", "an entry of 4 events", "[brand emq event custom id 1 event x n 2]"} {
				if !strings.Contains(items, want) {
					t.Errorf("no %q in the events stream:\n%s", want, items)
				}
			}
		})
	}
}
