package main

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// BenchmarkPlainVerbs measures what a plain job (a 64-byte payload, no
// option) costs each verb of its lifecycle, the way the Go client sends
// them: ADD of 100 jobs a call, CLAIM of 25 a call with ext 1, COMPLETEMANY
// of 16 a call. It runs on two servers side by side, this tree's module and
// the one TRAFIKEY_MODULE_BEFORE names, in chunks alternating between them,
// and measures the CPU time of each server's main thread per job
// (/proc/<pid>/schedstat: time the thread ran, so a shared machine's
// preemptions do not count, as they do in INFO commandstats). It reports
// each verb's median over the chunks on both servers and the median of the
// per-chunk ratios. Run it by hand, on Linux:
//
//	TRAFIKEY_MODULE_BEFORE=/tmp/before/trafikey.so go test ./module -run '^$' -bench PlainVerbs -benchtime 1x -v
//
// TRAFIKEY_BEFORE_ARGS=0ffcc06 sends the other server the argument forms of
// the module before ADD's option columns, CLAIM's ext and COMPLETEMANY's
// results (ADD without its option count, CLAIM of two arguments,
// COMPLETEMANY of id and token pairs). TRAFIKEY_PLAIN_CHUNKS and
// TRAFIKEY_PLAIN_JOBS set the chunks (20) and the jobs per chunk (5000).
// TRAFIKEY_PLAIN_EVENTS=<bound> turns job events on for every queue of both
// servers (EVENTS <bound> after INSTALL), to compare the events' path;
// TRAFIKEY_PLAIN_EVENTS_BEFORE=<bound>, or off, sets the before server's
// apart, so that one module named twice gives the events' own cost per
// verb, on against off in alternating chunks.
// TRAFIKEY_PLAIN_BATCH=<n> sends every verb n jobs a call instead, to
// compare what a call costs beside its jobs (1: one job a call).
// TRAFIKEY_PLAIN_LUA=1 sends the three verbs as their scripts (EVALSHA) to
// both servers instead.
func BenchmarkPlainVerbs(b *testing.B) {
	before := os.Getenv("TRAFIKEY_MODULE_BEFORE")
	if before == "" {
		b.Skip("TRAFIKEY_MODULE_BEFORE names no module to compare with")
	}
	chunks, jobs := envInt(b, "TRAFIKEY_PLAIN_CHUNKS", 20), envInt(b, "TRAFIKEY_PLAIN_JOBS", 5000)
	addN, claimN, completeN := 100, 25, 16
	if os.Getenv("TRAFIKEY_PLAIN_BATCH") != "" {
		n := envInt(b, "TRAFIKEY_PLAIN_BATCH", 1)
		addN, claimN, completeN = n, n, n
	}
	type side struct {
		*abSide
		old bool                 // the argument forms of 0ffcc06
		us  map[string][]float64 // µs per job of each verb, one per chunk
	}
	sides := []*side{
		{abSide: startSide(b, "before", before), old: os.Getenv("TRAFIKEY_BEFORE_ARGS") == "0ffcc06"},
		{abSide: startSide(b, "after", valkeytest.ModulePath(b))},
	}
	for _, sd := range sides {
		sd.us = map[string][]float64{}
		if _, err := threadCPU(sd.s); err != nil {
			b.Skip("no /proc/<pid>/schedstat: ", err)
		}
	}
	script := os.Getenv("TRAFIKEY_PLAIN_LUA") == "1"
	run := func(sd *side, lines [][]string) []any {
		e := &benchExec{b: b, c: sd.c, native: true}
		return e.run(lines)
	}
	// measure runs lines on sd and records the main thread's µs per job
	measure := func(sd *side, verb string, lines [][]string) []any {
		t0, err := threadCPU(sd.s)
		if err != nil {
			b.Fatal(err)
		}
		out := run(sd, lines)
		t1, err := threadCPU(sd.s)
		if err != nil {
			b.Fatal(err)
		}
		sd.us[verb] = append(sd.us[verb], (t1-t0)/float64(jobs))
		return out
	}
	payload := strings.Repeat("x", 64)
	b.ResetTimer()
	for k := range chunks {
		for j := range sides {
			sd := sides[(j+k)%len(sides)]
			q := "plain" + strconv.Itoa(k)
			e := &benchExec{b: b, c: sd.c, q: q, native: !script, shas: sd.shas}
			run(sd, [][]string{verbArgs(protocol.Install, q)})
			bound := os.Getenv("TRAFIKEY_PLAIN_EVENTS")
			if v, ok := os.LookupEnv("TRAFIKEY_PLAIN_EVENTS_BEFORE"); ok && sd == sides[0] {
				bound = v
			}
			if bound != "" && bound != "off" {
				run(sd, [][]string{verbArgs(protocol.Events, q, bound)})
			}
			var adds [][]string
			for n := 0; n < jobs; n += addN {
				args := []string{strconv.Itoa(min(addN, jobs-n))}
				if !sd.old {
					args = append(args, "0") // no option column
				}
				for range min(addN, jobs-n) {
					args = append(args, job(payload)...)
				}
				adds = append(adds, e.line(protocol.Add, args))
			}
			measure(sd, "add", adds)
			claim := []string{"600000", strconv.Itoa(claimN)}
			if !sd.old {
				claim = append(claim, protocol.ClaimExtended)
			}
			var lines [][]string
			for range (jobs + claimN - 1) / claimN {
				lines = append(lines, e.line(protocol.Claim, claim))
			}
			var leases [][2]string
			for _, r := range measure(sd, "claim", lines) {
				for _, j := range r.([]any) {
					f := j.([]any)
					leases = append(leases, [2]string{f[0].(string), strconv.FormatInt(f[2].(int64), 10)})
				}
			}
			if len(leases) != jobs {
				b.Fatalf("%s: claimed %d jobs of %d", sd.name, len(leases), jobs)
			}
			lines = lines[:0]
			for i := 0; i < len(leases); i += completeN {
				part := leases[i:min(i+completeN, len(leases))]
				args := []string{strconv.Itoa(len(part))}
				for _, l := range part {
					args = append(args, l[0], l[1])
					if !sd.old {
						args = append(args, "") // no result
					}
				}
				lines = append(lines, e.line(protocol.CompleteMany, args))
			}
			measure(sd, "completemany", lines)
		}
	}
	b.StopTimer()
	for _, verb := range []string{"add", "claim", "completemany"} {
		bef, aft := sides[0].us[verb], sides[1].us[verb]
		ratios := make([]float64, len(bef))
		for i := range bef {
			ratios[i] = aft[i] / bef[i]
		}
		mb, ma, mr := median(bef), median(aft), median(ratios)
		b.Logf("%-12s before %.3f (%.3f–%.3f)  after %.3f (%.3f–%.3f)  after/before %.3f (chunk ratios %.3f–%.3f)",
			verb, mb, slices.Min(bef), slices.Max(bef), ma, slices.Min(aft), slices.Max(aft), mr, slices.Min(ratios), slices.Max(ratios))
		b.ReportMetric(mb, verb+"-before-µs/job")
		b.ReportMetric(ma, verb+"-after-µs/job")
		b.ReportMetric(mr, verb+"-after/before")
	}
}

// threadCPU is the µs the server's main thread has run (the first field of
// /proc/<pid>/schedstat, in ns).
func threadCPU(s *valkeyserver.Server) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(s.PID()) + "/schedstat")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, strconv.ErrSyntax
	}
	ns, err := strconv.ParseFloat(f[0], 64)
	return ns / 1000, err
}

// envInt is the positive integer in the environment variable name, or def.
func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
