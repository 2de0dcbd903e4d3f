package main

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/lua"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// benchServer starts a server build (bin, a binary or wrapper; "" is
// valkeyserver.DefaultBin) with the module loaded for a benchmark, its main
// thread pinned to CPU 0 when taskset exists (the module's Go threads,
// sysmon and the collector, stay free to run beside it), and returns a
// connection to it, closed at cleanup, with the scripts of verbs loaded.
func benchServer(b *testing.B, bin string, verbs ...*protocol.Verb) (*valkeyserver.Server, *valkeyserver.Conn, map[*protocol.Verb]string) {
	s := valkeytest.Start(b, valkeyserver.Options{Bin: bin, Module: valkeytest.ModulePath(b)})
	if ts, err := exec.LookPath("taskset"); err == nil {
		_ = exec.Command(ts, "-cp", "0", strconv.Itoa(s.PID())).Run()
	}
	c, err := s.Dial(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	shas := map[*protocol.Verb]string{}
	for _, v := range verbs {
		sha, err := c.Do(context.Background(), "SCRIPT", "LOAD", lua.Source(v))
		if err != nil {
			b.Fatal(err)
		}
		shas[v] = sha.(string)
	}
	return s, c, shas
}

// BenchmarkJobCore measures each job-core verb of part one on both executors
// against one server with the module loaded: the native EMQ.* command, and
// the verb's Lua script through EVALSHA. Calls go over one connection,
// pipelined 128 at a time. Run it by hand:
//
//	go test ./module -run '^$' -bench JobCore -benchtime 20000x
//
// Each verb runs three ways: interleaved (native and Lua calls alternating in
// one pipeline, so both meet the same load on the machine: native/lua is the
// figure to quote), then each executor alone.
//
// It reports the server's own time per call from INFO commandstats
// (server-µs/call: cmdstat_EMQ.<VERB> or cmdstat_evalsha, which other load
// on the machine disturbs least) and calls/s as the client saw them. A
// verb's fixture (the jobs to claim, the leases to complete) is built before
// the timer starts and before CONFIG RESETSTAT, so only the measured calls
// count.
func BenchmarkJobCore(b *testing.B) {
	s, c, shas := benchServer(b, "", protocol.Install, protocol.Add, protocol.Claim, protocol.Extend, protocol.Complete, protocol.CompleteMany, protocol.Fail)
	queue := 0
	for _, bc := range jobCoreBenches {
		// interleaved: native and Lua calls alternate in one pipeline, so
		// both meet the same load on the machine; the ratio is the figure
		// to quote when other work shares it
		b.Run(bc.name+"/interleaved", func(b *testing.B) {
			var ex [2]*benchExec
			for i, native := range []bool{true, false} {
				queue++
				ex[i] = &benchExec{b: b, c: c, q: "bench" + strconv.Itoa(queue), native: native, shas: shas}
				ex[i].must(protocol.Install)
			}
			interleave(b, s, ex, bc.verb, bc.jobs, bc.setup)
		})
		for _, native := range []bool{true, false} {
			name := bc.name + "/lua"
			if native {
				name = bc.name + "/native"
			}
			b.Run(name, func(b *testing.B) {
				queue++
				e := &benchExec{b: b, c: c, q: "bench" + strconv.Itoa(queue), native: native, shas: shas}
				e.must(protocol.Install)
				calls := bc.setup(e, b.N)
				valkeytest.Do(b, s, "CONFIG", "RESETSTAT")
				b.ResetTimer()
				start := time.Now()
				e.pipeline(calls)
				elapsed := time.Since(start)
				b.StopTimer()
				reportAlone(b, s, bc.verb, native, len(calls), elapsed)
			})
		}
	}
}

// BenchmarkJobCoreLargeQueue runs the cases of BenchmarkJobCore,
// interleaved, on two queues (one per executor) that each hold a million
// pending jobs before the first case, and keep about as many: a case's
// fixture adds its jobs behind them, and the claims take the head. What a
// large queue changes is the size of the sets a verb reads and writes and
// of the keyspace its row lookups search. Run it by hand (it adds two
// million jobs first, about 700 MB of server memory):
//
//	go test ./module -run '^$' -bench JobCoreLargeQueue -benchtime 2000x
//
// TRAFIKEY_LARGE_QUEUE sets the jobs per queue (1000000).
// TRAFIKEY_BENCH_ROUNDS (1) runs each case that many times on the same
// queues: the metrics are then the medians over the rounds (native/lua the
// median of the rounds' ratios) and the log gives their min–max, which a
// machine shared with other work needs more than one pass for.
func BenchmarkJobCoreLargeQueue(b *testing.B) {
	size := envInt(b, "TRAFIKEY_LARGE_QUEUE", 1000000)
	rounds := envInt(b, "TRAFIKEY_BENCH_ROUNDS", 1)
	s, c, shas := benchServer(b, "", protocol.Install, protocol.Add, protocol.Claim, protocol.Extend, protocol.Complete, protocol.CompleteMany, protocol.Fail)
	var ex [2]*benchExec
	for i, native := range []bool{true, false} {
		ex[i] = &benchExec{b: b, c: c, q: "large" + strconv.Itoa(i), native: native, shas: shas}
		ex[i].must(protocol.Install)
		ex[i].fill(size)
	}
	for _, bc := range jobCoreBenches {
		b.Run(bc.name, func(b *testing.B) {
			for i := range ex {
				ex[i].b = b
			}
			if rounds == 1 {
				interleave(b, s, ex, bc.verb, bc.jobs, bc.setup)
				return
			}
			b.StopTimer()
			b.ResetTimer()
			var native, script, ratios []float64
			for range rounds {
				runInterleaved(b, s, ex, b.N, bc.setup)
				n, l := executorMicros(b, s, bc.verb)
				native, script, ratios = append(native, n), append(script, l), append(ratios, n/l)
			}
			b.ReportMetric(median(native), "native-µs/call")
			b.ReportMetric(median(script), "lua-µs/call")
			b.ReportMetric(median(ratios), "native/lua")
			if bc.jobs > 1 {
				b.ReportMetric(median(native)/float64(bc.jobs), "native-µs/job")
				b.ReportMetric(median(script)/float64(bc.jobs), "lua-µs/job")
			}
			b.Logf("%d rounds of %d calls: native %s, lua %s µs/call; native/lua %s", rounds, b.N, spread(native), spread(script), spread(ratios))
		})
	}
}

// interleave builds b.N calls of a case on each executor (native first),
// runs them alternating in one pipeline, so both meet the same load on the
// machine, and reports each one's server µs per call (and per job when a
// call does jobs of them) and their ratio.
func interleave(b *testing.B, s *valkeyserver.Server, ex [2]*benchExec, verb *protocol.Verb, jobs int, setup func(e *benchExec, n int) [][]string) {
	b.StopTimer()
	b.ResetTimer()
	runInterleaved(b, s, ex, b.N, setup)
	native, script := reportInterleaved(b, s, verb)
	if jobs > 1 {
		b.ReportMetric(native/float64(jobs), "native-µs/job")
		b.ReportMetric(script/float64(jobs), "lua-µs/job")
	}
}

// runInterleaved builds n calls of a case on each executor (native first)
// and, after CONFIG RESETSTAT, runs them alternating in one pipeline, the
// benchmark's timer running for that pipeline only.
func runInterleaved(b *testing.B, s *valkeyserver.Server, ex [2]*benchExec, n int, setup func(e *benchExec, n int) [][]string) {
	var calls [2][][]string
	for i := range ex {
		calls[i] = setup(ex[i], n)
	}
	lines := make([][]string, 0, 2*n)
	for k := range calls[0] {
		lines = append(lines, ex[0].line(ex[0].verb, calls[0][k]), ex[1].line(ex[1].verb, calls[1][k]))
	}
	valkeytest.Do(b, s, "CONFIG", "RESETSTAT")
	b.StartTimer()
	ex[0].run(lines)
	b.StopTimer()
}

// jobCoreBenches are the measured calls, one case per verb (and batch size).
// setup builds the fixture and returns n calls' ARGV. A case of a verb that
// does jobs (more than one) per call also reports the µs per job, to set
// beside the per-job verb's µs per call.
var jobCoreBenches = []struct {
	name  string
	verb  *protocol.Verb
	jobs  int
	setup func(e *benchExec, n int) [][]string
}{
	{"add", protocol.Add, 1, addCalls(1)},
	{"add-10", protocol.Add, 10, addCalls(10)},
	{"add-100", protocol.Add, 100, addCalls(100)},
	{"claim", protocol.Claim, 1, claimCalls(1)},
	{"claim-10", protocol.Claim, 10, claimCalls(10)},
	{"claim-100", protocol.Claim, 100, claimCalls(100)},
	// the extended rows (ext 1) of plain jobs, as the client claims them
	{"claim-10-ext", protocol.Claim, 10, claimCalls(10, protocol.ClaimExtended)},
	{"extend", protocol.Extend, 1, func(e *benchExec, n int) [][]string {
		leases := e.leases(1)
		e.verb = protocol.Extend
		return repeat(n, []string{leases[0][0], leases[0][1], "60000"})
	}},
	{"complete", protocol.Complete, 1, func(e *benchExec, n int) [][]string {
		leases := e.leases(n)
		e.verb = protocol.Complete
		for i := range leases {
			leases[i] = append(leases[i], "")
		}
		return leases
	}},
	{"completemany-10", protocol.CompleteMany, 10, func(e *benchExec, n int) [][]string {
		return e.many(n, 10)
	}},
	{"completemany-100", protocol.CompleteMany, 100, func(e *benchExec, n int) [][]string {
		return e.many(n, 100)
	}},
	{"fail", protocol.Fail, 1, func(e *benchExec, n int) [][]string {
		leases := e.leases(n)
		e.verb = protocol.Fail
		for i := range leases {
			leases[i] = append(leases[i], "1", "boom")
		}
		return leases
	}},
}

// addCalls is the setup of ADD calls of k jobs each.
func addCalls(k int) func(e *benchExec, n int) [][]string {
	return func(e *benchExec, n int) [][]string {
		e.verb = protocol.Add
		jobs := make([][]string, k)
		for i := range jobs {
			jobs[i] = job("payload-of-some-bytes")
		}
		return repeat(n, addArgs(jobs...))
	}
}

// claimCalls is the setup of CLAIM calls of k jobs each (k jobs a call
// added first); ext is the ARGV after lease and count.
func claimCalls(k int, ext ...string) func(e *benchExec, n int) [][]string {
	return func(e *benchExec, n int) [][]string {
		e.fill(k * n)
		e.verb = protocol.Claim
		return repeat(n, append([]string{"60000", strconv.Itoa(k)}, ext...))
	}
}

// benchExec runs one verb on one queue, natively or through EVALSHA.
type benchExec struct {
	b      *testing.B
	c      *valkeyserver.Conn
	q      string
	native bool
	shas   map[*protocol.Verb]string
	verb   *protocol.Verb
}

func (e *benchExec) line(v *protocol.Verb, args []string) []string {
	l := verbArgs(v, e.q, args...)
	if !e.native {
		l = append([]string{"EVALSHA", e.shas[v]}, l[1:]...)
	}
	return l
}

func (e *benchExec) must(v *protocol.Verb, args ...string) any {
	r, err := e.c.Do(context.Background(), e.line(v, args)...)
	if err != nil {
		e.b.Fatalf("%s %q: %v", v.Command, args, err)
	}
	return r
}

// pipeline runs e.verb once per ARGV, 128 calls per round trip, and fails on
// any error reply.
func (e *benchExec) pipeline(calls [][]string) []any {
	lines := make([][]string, len(calls))
	for i, a := range calls {
		lines[i] = e.line(e.verb, a)
	}
	return e.run(lines)
}

// run sends command lines, 128 per round trip, and fails on any error reply.
func (e *benchExec) run(lines [][]string) []any {
	const depth = 128
	out := make([]any, 0, len(lines))
	for i := 0; i < len(lines); i += depth {
		replies, err := e.c.DoMulti(context.Background(), lines[i:min(i+depth, len(lines))]...)
		if err != nil {
			e.b.Fatal(err)
		}
		for j, r := range replies {
			if re, ok := r.(valkeyserver.ReplyError); ok {
				e.b.Fatalf("%q: %v", lines[i+j][:2], re)
			}
		}
		out = append(out, replies...)
	}
	return out
}

// reportInterleaved reports the server µs per call of verb on both
// executors (native and Lua calls interleaved in one run) and their ratio,
// and returns the two.
func reportInterleaved(b *testing.B, s *valkeyserver.Server, verb *protocol.Verb) (native, script float64) {
	native, script = executorMicros(b, s, verb)
	b.ReportMetric(native, "native-µs/call")
	b.ReportMetric(script, "lua-µs/call")
	b.ReportMetric(native/script, "native/lua")
	return native, script
}

// executorMicros is the server µs per call of verb natively (its EMQ.*
// command) and through EVALSHA since the last CONFIG RESETSTAT.
func executorMicros(b *testing.B, s *valkeyserver.Server, verb *protocol.Verb) (native, script float64) {
	return serverMicros(b, s, verb.Command), serverMicros(b, s, "evalsha")
}

// reportAlone reports calls/s as the client saw them and the server µs per
// call of verb on one executor.
func reportAlone(b *testing.B, s *valkeyserver.Server, verb *protocol.Verb, native bool, calls int, elapsed time.Duration) {
	b.ReportMetric(float64(calls)/elapsed.Seconds(), "calls/s")
	stat := "evalsha"
	if native {
		stat = verb.Command
	}
	b.ReportMetric(serverMicros(b, s, stat), "server-µs/call")
}

// fill adds n jobs to the queue, 100 per call.
func (e *benchExec) fill(n int) { e.fillDelayed(n, "0") }

// fillDelayed adds n jobs with a delay of delayMS, 100 per call.
func (e *benchExec) fillDelayed(n int, delayMS string) {
	e.addJobs(n, job("payload-of-some-bytes", "0", delayMS, "1000000"))
}

// addJobs adds n jobs of ADD group j (job's arguments), 100 per call.
func (e *benchExec) addJobs(n int, j []string) {
	e.verb = protocol.Add
	var calls [][]string
	for n > 0 {
		k := min(n, 100)
		jobs := make([][]string, k)
		for i := range jobs {
			jobs[i] = j
		}
		calls = append(calls, addArgs(jobs...))
		n -= k
	}
	e.pipeline(calls)
}

// leases adds and claims n jobs and returns [id, token] of each.
func (e *benchExec) leases(n int) [][]string {
	e.fill(n)
	e.verb = protocol.Claim
	var out [][]string
	for len(out) < n {
		for _, r := range e.pipeline([][]string{{"600000", strconv.Itoa(min(n-len(out), protocol.MaxCount))}}) {
			for _, j := range r.([]any) {
				f := j.([]any)
				out = append(out, []string{f[0].(string), strconv.FormatInt(f[2].(int64), 10)})
			}
		}
	}
	return out
}

// many adds and claims n·k jobs and returns n COMPLETEMANY ARGVs of k leases
// each.
func (e *benchExec) many(n, k int) [][]string {
	leases := e.leases(n * k)
	e.verb = protocol.CompleteMany
	out := make([][]string, n)
	for i := range out {
		args := []string{strconv.Itoa(k)}
		for _, l := range leases[i*k : (i+1)*k] {
			args = append(args, l[0], l[1], "")
		}
		out[i] = args
	}
	return out
}

func repeat(n int, args []string) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = args
	}
	return out
}

// serverMicros is usec_per_call of command in INFO commandstats.
func serverMicros(b *testing.B, s *valkeyserver.Server, command string) float64 {
	stats := valkeytest.Do(b, s, "INFO", "commandstats").(string)
	for l := range strings.Lines(stats) {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok || !strings.EqualFold(k, "cmdstat_"+command) {
			continue
		}
		for field := range strings.SplitSeq(v, ",") {
			if us, ok := strings.CutPrefix(field, "usec_per_call="); ok {
				f, _ := strconv.ParseFloat(us, 64)
				return f
			}
		}
	}
	b.Fatalf("no cmdstat_%s in INFO commandstats", command)
	return 0
}
