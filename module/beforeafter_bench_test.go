package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/lua"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// BenchmarkBeforeAfter compares the module of this tree with another build
// (TRAFIKEY_MODULE_BEFORE, a trafikey.so built from the tree to compare
// with) on two servers side by side: every measurement runs in chunks that
// alternate between the two servers, so both meet the same load on a
// shared machine, and reports the median and the min–max over the chunks
// of the server time per call (INFO commandstats, reset before each chunk).
// Run it by hand:
//
//	TRAFIKEY_MODULE_BEFORE=/tmp/before/trafikey.so go test ./module -run '^$' -bench BeforeAfter -benchtime 1x
//
// Cases: single-job ADD, CLAIM and COMPLETE, and ADD, CLAIM and
// COMPLETEMANY of 100 jobs a call (verb µs, the µs of the
// commands it ran through RM_Call, and the µs of the same verb's commands
// as its Lua script runs them, reads included, on a third server);
// the TRA calls against the server's own commands (bitCases); and a
// job's lifecycle (ADD, CLAIM, COMPLETE of one job each) with payloads of
// 64 B to 1 MB, natively on both servers and, on the second, through
// EVALSHA and as the raw commands (see BenchmarkPayload).
func BenchmarkBeforeAfter(b *testing.B) {
	before := os.Getenv("TRAFIKEY_MODULE_BEFORE")
	if before == "" {
		b.Skip("TRAFIKEY_MODULE_BEFORE names no module to compare with")
	}
	sides := []*abSide{startSide(b, "before", before), startSide(b, "after", valkeytest.ModulePath(b))}
	// the verbs' Lua scripts run on a server of their own: on one of the
	// two compared, their rows would make its keyspace the larger one
	scripts := startSide(b, "lua", valkeytest.ModulePath(b))
	queue := 0
	next := func() string { queue++; return "ab" + strconv.Itoa(queue) }
	const chunks, chunk = 20, 1000
	for _, bc := range beforeAfterCases() {
		chunk := chunk / bc.jobs
		b.Run(bc.name, func(b *testing.B) {
			// per side the native verb, and the Lua script on a third server
			type run struct {
				side   *abSide
				e      *benchExec
				calls  [][]string
				verb   []float64 // µs per call, one per chunk
				nested []float64
			}
			var runs []*run
			for i, sd := range append(sides, scripts) {
				e := &benchExec{b: b, c: sd.c, q: next(), native: i < 2, shas: sd.shas}
				e.must(protocol.Install)
				runs = append(runs, &run{side: sd, e: e, calls: bc.setup(e, chunks*chunk)})
			}
			for k := range chunks {
				for j := range runs {
					r := runs[(j+k)%len(runs)]
					verb, nested := r.side.chunk(b, r.e, r.calls[k*chunk:(k+1)*chunk])
					r.verb, r.nested = append(r.verb, verb), append(r.nested, nested)
				}
			}
			commands := median(runs[2].nested)
			for _, r := range runs[:2] {
				fixed := make([]float64, len(r.verb))
				for i := range fixed {
					fixed[i] = r.verb[i] - r.nested[i]
				}
				b.ReportMetric(median(r.verb), r.side.name+"-verb-µs/call")
				b.ReportMetric(median(r.verb)-commands, r.side.name+"-fixed-vs-commands-µs/call")
				b.Logf("%s: verb %s, nested %s, fixed %s, commands (Lua) %s, verb/commands %.2f", r.side.name,
					spread(r.verb), spread(r.nested), spread(fixed), spread(runs[2].nested), median(r.verb)/commands)
			}
			// the Lua script's own time, beside the native verb's
			b.Logf("lua: verb %s; native/lua: before %.2f, after %.2f", spread(runs[2].verb),
				median(runs[0].verb)/median(runs[2].verb), median(runs[1].verb)/median(runs[2].verb))
		})
	}
	for _, bc := range bitCases {
		b.Run(bc.name, func(b *testing.B) {
			p := next() + ":"
			var tra, raw [2][]float64
			for _, sd := range sides {
				(&benchExec{b: b, c: sd.c}).run(bc.prepare(p))
			}
			for k := range chunks {
				for j := range 4 {
					i, isTRA := (j+k)%2, (j/2+k)%2 == 0
					sd := sides[i]
					lines := make([][]string, 0, chunk)
					for n := k * chunk; n < (k+1)*chunk; n++ {
						lines = append(lines, bc.line(p, n, isTRA))
					}
					valkeytest.Do(b, sd.s, "CONFIG", "RESETSTAT")
					(&benchExec{b: b, c: sd.c}).run(lines)
					st := commandStats(b, sd.s)
					if isTRA {
						t := st[strings.ToLower(bc.tra)]
						tra[i] = append(tra[i], t.usec/float64(t.calls))
					} else {
						r := st[strings.ToLower(bc.raw)]
						raw[i] = append(raw[i], r.usec/float64(r.calls))
					}
				}
			}
			for i, sd := range sides {
				b.ReportMetric(median(tra[i])/median(raw[i]), sd.name+"-tra/raw")
				b.Logf("%s: %s %s, %s %s, ratio of medians %.2f", sd.name, bc.tra, spread(tra[i]), bc.raw, spread(raw[i]), median(tra[i])/median(raw[i]))
			}
		})
	}
	for _, size := range []int{64, 4 << 10, 256 << 10, 1 << 20} {
		b.Run("payload-"+strconv.Itoa(size), func(b *testing.B) {
			payload := strings.Repeat("p", size)
			jobs := 200
			if size > 64<<10 {
				jobs = 20
			}
			names := []string{"before native", "after native", "after lua", "after raw"}
			on := []*abSide{sides[0], sides[1], sides[1], sides[1]}
			per := make([][]float64, len(names))
			for k := range chunks / 2 {
				for j := range names {
					i := (j + k) % len(names)
					sd := on[i]
					e := &benchExec{b: b, c: sd.c, q: next(), native: i < 2, shas: sd.shas}
					if _, err := sd.c.Do(context.Background(), "FLUSHALL"); err != nil {
						b.Fatal(err)
					}
					var usec float64
					if names[i] == "after raw" {
						usec = rawLifecycle(b, sd.s, e, payload, jobs)
					} else {
						usec = verbLifecycle(b, sd.s, e, payload, jobs)
					}
					per[i] = append(per[i], usec/float64(jobs))
				}
			}
			for i, n := range names {
				b.ReportMetric(median(per[i]), strings.ReplaceAll(n, " ", "-")+"-µs/job")
				b.Logf("%s: %s µs/job", n, spread(per[i]))
			}
		})
	}
}

// abSide is one server of the comparison.
type abSide struct {
	name string
	s    *valkeyserver.Server
	c    *valkeyserver.Conn
	shas map[*protocol.Verb]string
}

// startSide starts a server with module, its main thread pinned to CPU 0 as
// benchServer pins it, and loads the scripts of the compared verbs.
func startSide(b *testing.B, name, module string) *abSide {
	s := valkeytest.Start(b, valkeyserver.Options{Module: module})
	if ts, err := exec.LookPath("taskset"); err == nil {
		_ = exec.Command(ts, "-cp", "0", strconv.Itoa(s.PID())).Run()
	}
	c, err := s.Dial(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	shas := map[*protocol.Verb]string{}
	for _, v := range []*protocol.Verb{protocol.Install, protocol.Add, protocol.Claim, protocol.Complete, protocol.CompleteMany} {
		sha, err := c.Do(context.Background(), "SCRIPT", "LOAD", lua.Source(v))
		if err != nil {
			b.Fatal(err)
		}
		shas[v] = sha.(string)
	}
	return &abSide{name: name, s: s, c: c, shas: shas}
}

// beforeAfterCases are the single-job verbs and the batches of 100 of
// BenchmarkJobCore, with the jobs per call (a batch case runs 1000/jobs
// calls a chunk, and its µs are per call of 100 jobs).
func beforeAfterCases() []struct {
	name  string
	jobs  int
	setup func(e *benchExec, n int) [][]string
} {
	type abCase = struct {
		name  string
		jobs  int
		setup func(e *benchExec, n int) [][]string
	}
	var out []abCase
	for _, c := range singleJobCases {
		out = append(out, abCase{c.name, 1, c.setup})
	}
	for _, c := range jobCoreBenches {
		// the batches, and the extended rows a worker claims
		if c.jobs == 100 || c.name == "claim-10-ext" {
			out = append(out, abCase{c.name, c.jobs, c.setup})
		}
	}
	return out
}

// chunk runs calls of e's verb after CONFIG RESETSTAT and returns the
// verb's µs per call and that of every other command (nested) per call.
func (sd *abSide) chunk(b *testing.B, e *benchExec, calls [][]string) (verb, nested float64) {
	valkeytest.Do(b, sd.s, "CONFIG", "RESETSTAT")
	e.pipeline(calls)
	st := commandStats(b, sd.s)
	top := strings.ToLower(e.verb.Command)
	if !e.native {
		top = "evalsha"
	}
	v := st[top]
	if v.calls == 0 {
		b.Fatalf("no calls of %s in commandstats", top)
	}
	for name, cs := range st {
		if name != top {
			nested += cs.usec
		}
	}
	return v.usec / float64(v.calls), nested / float64(v.calls)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is "median (min–max)".
func spread(v []float64) string {
	return fmt.Sprintf("%.3g (%.3g–%.3g)", median(v), slices.Min(v), slices.Max(v))
}
