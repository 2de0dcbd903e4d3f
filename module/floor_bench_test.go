package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/repo"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// BenchmarkFloor sets each native single-job verb against its floor: the
// minimal module command of bench/floor/floor.c (built here with cc, never
// part of the module) that takes the verb's keys and arguments, opens the
// same keys and makes the same writes through the same module API calls
// (the key API's writes, each key signalled, its event fired and the
// command replicated; DEL through RM_Call), reading only what its writes
// and its reply need. Both modules are loaded into one server; the verb's
// fixture is built twice, once per queue, and the EMQ.* and FLOOR.* calls
// alternate in one pipeline, so both meet the same load on the machine.
// Run it by hand:
//
//	go test ./module -run '^$' -bench Floor -benchtime 5000x
//
// TRAFIKEY_VALKEY_SERVER picks the server build; TRAFIKEY_BENCH_SERVERS, as
// BenchmarkServers reads it, runs several builds side by side, the rounds
// alternating between them. Each case runs TRAFIKEY_BENCH_ROUNDS rounds (5)
// of b.N calls per command and server, INFO commandstats reset before each
// and the server's data flushed after it. Metrics are labelled by the
// server's version (v9.1): the median over the rounds of the server µs per
// call of the verb (native) and of its floor, native/floor (the median of
// the rounds' ratios) and fixed (the median of the rounds' differences:
// what the verb costs beyond the least a module command can do for the same
// writes: the call into Go, the parsing, the fence's GET through RM_Call,
// the reads the verdict asks for, the ACL check of the keys it derives, the
// verdict and the reply). The log gives each median's min–max.
func BenchmarkFloor(b *testing.B) {
	so := buildFloor(b)
	rounds := envInt(b, "TRAFIKEY_BENCH_ROUNDS", 5)
	bins := []string{""}
	if list := os.Getenv(envBenchServers); list != "" {
		bins = strings.FieldsFunc(list, func(r rune) bool { return r == ':' || r == ',' })
	}
	var servers []*benchBuild
	for _, bin := range bins {
		sv := startBuild(b, bin, servers)
		valkeytest.Do(b, sv.s, "MODULE", "LOAD", so)
		servers = append(servers, sv)
	}
	queue := 0
	for _, bc := range jobCoreBenches {
		if bc.name != "add" && bc.name != "claim" && bc.name != "complete" {
			continue
		}
		floor := "FLOOR." + strings.ToUpper(bc.name)
		b.Run(bc.name, func(b *testing.B) {
			b.StopTimer()
			b.ResetTimer()
			// per server, per round: the verb's and the floor's µs per call
			us := make([][2][]float64, len(servers))
			for k := range rounds {
				for j := range servers {
					i := (j + k) % len(servers)
					sv := servers[i]
					// both queues' fixtures are built by the module; the
					// second queue's calls then go to the floor
					var ex [2]*benchExec
					var calls [2][][]string
					for x := range ex {
						queue++
						ex[x] = &benchExec{b: b, c: sv.c, q: "floor" + strconv.Itoa(queue), native: true, shas: sv.shas}
						ex[x].must(protocol.Install)
						calls[x] = bc.setup(ex[x], b.N)
					}
					lines := make([][]string, 0, 2*b.N)
					for n := range calls[0] {
						f := ex[1].line(bc.verb, calls[1][n])
						f[0] = floor
						lines = append(lines, ex[0].line(bc.verb, calls[0][n]), f)
					}
					valkeytest.Do(b, sv.s, "CONFIG", "RESETSTAT")
					b.StartTimer()
					ex[0].run(lines)
					b.StopTimer()
					us[i][0] = append(us[i][0], serverMicros(b, sv.s, bc.verb.Command))
					us[i][1] = append(us[i][1], serverMicros(b, sv.s, floor))
					valkeytest.Do(b, sv.s, "FLUSHALL", "SYNC")
				}
			}
			for i, sv := range servers {
				ratios := make([]float64, rounds)
				fixed := make([]float64, rounds)
				for k := range ratios {
					ratios[k] = us[i][0][k] / us[i][1][k]
					fixed[k] = us[i][0][k] - us[i][1][k]
				}
				b.ReportMetric(median(us[i][0]), sv.label+"-native-µs/call")
				b.ReportMetric(median(us[i][1]), sv.label+"-floor-µs/call")
				b.ReportMetric(median(ratios), sv.label+"-native/floor")
				b.ReportMetric(median(fixed), sv.label+"-fixed-µs/call")
				b.Logf("%s (%s), %d rounds of %d calls: native %s, floor %s µs/call; native/floor %s; fixed %s µs/call",
					sv.label, sv.version, rounds, b.N, spread(us[i][0]), spread(us[i][1]), spread(ratios), spread(fixed))
			}
		})
	}
}

// buildFloor builds bench/floor/floor.c into a shared object in a
// temporary directory and returns its path; without a C compiler (cc) it
// skips tb.
func buildFloor(tb testing.TB) string {
	tb.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		tb.Skip("no C compiler (cc) to build bench/floor/floor.c")
	}
	root, err := repo.Root()
	if err != nil {
		tb.Fatal(err)
	}
	so := filepath.Join(tb.TempDir(), "floor.so")
	if out, err := exec.Command(cc, "-O2", "-Wall", "-Werror", "-fPIC", "-shared", "-o", so,
		filepath.Join(root, "bench", "floor", "floor.c")).CombinedOutput(); err != nil {
		tb.Fatalf("build bench/floor/floor.c: %v\n%s", err, out)
	}
	return so
}
