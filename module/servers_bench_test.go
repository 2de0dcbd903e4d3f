package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// envBenchServers names the environment variable that lists the server
// builds BenchmarkServers compares: binaries or wrappers (as
// scripts/fetch-server.sh prints them), colon- or comma-separated.
const envBenchServers = "TRAFIKEY_BENCH_SERVERS"

// BenchmarkServers runs the job-core cases of BenchmarkJobCore and the
// native-add case of BenchmarkRowMemory on several server builds side by
// side in one run: one server per build named in TRAFIKEY_BENCH_SERVERS,
// each with this tree's module loaded and its main thread pinned as
// benchServer pins it. Run it by hand from the repository's root, with
// Valkey 8.0 and 9.1 as scripts/fetch-server.sh provides them:
//
//	TRAFIKEY_BENCH_SERVERS=$(bash scripts/fetch-server.sh valkey-8.0),$(bash scripts/fetch-server.sh valkey-9.1) go test ./module -run '^$' -bench Servers -benchtime 5000x
//
// A name without a slash is looked up in PATH; a relative path is taken
// from ./module, where go test runs the benchmark.
//
// Each case runs in rounds (TRAFIKEY_BENCH_ROUNDS, 5) that alternate
// between the servers, the first server of a round rotating, so every
// server meets the same load on a shared machine. A server's turn in a
// round is BenchmarkJobCore's interleaved run: b.N calls on each executor,
// native and Lua alternating in one pipeline, the server's data flushed
// after it. Metrics are labelled by the server's version from INFO server
// (v8.0, v9.1): per server and executor the median over the rounds of the
// server µs per call from INFO commandstats (and per job for a case of more
// than one job a call), and native/lua, the median of each round's ratio.
// The log gives each figure's median (min–max) over the rounds, and each
// server's medians over the first server's.
//
// The memory case writes TRAFIKEY_BENCH_MEMORY_JOBS (100000) plain jobs of
// 64 bytes per round, server and executor, with native ADD and with its Lua
// script, which write the same keys and rows, and reports the bytes each
// pending job costs beyond its payload (B/job, as BenchmarkRowMemory
// measures it). It measures on the case's first run only: the figure does
// not depend on -benchtime.
func BenchmarkServers(b *testing.B) {
	list := os.Getenv(envBenchServers)
	if list == "" {
		b.Skip(envBenchServers + " names no server builds to compare (binaries or wrappers, colon- or comma-separated)")
	}
	rounds := envInt(b, "TRAFIKEY_BENCH_ROUNDS", 5)
	memJobs := envInt(b, "TRAFIKEY_BENCH_MEMORY_JOBS", 100000)
	var servers []*benchBuild
	for _, bin := range strings.FieldsFunc(list, func(r rune) bool { return r == ':' || r == ',' }) {
		servers = append(servers, startBuild(b, bin, servers))
	}
	queue := 0
	// executors returns a fresh queue on sv for each executor, native first
	executors := func(b *testing.B, sv *benchBuild) [2]*benchExec {
		var ex [2]*benchExec
		for i, native := range []bool{true, false} {
			queue++
			ex[i] = &benchExec{b: b, c: sv.c, q: "servers" + strconv.Itoa(queue), native: native, shas: sv.shas}
		}
		return ex
	}
	for _, bc := range jobCoreBenches {
		b.Run(bc.name, func(b *testing.B) {
			b.StopTimer()
			b.ResetTimer()
			// per server, per round: native and Lua µs per call
			us := make([][2][]float64, len(servers))
			for k := range rounds {
				for j := range servers {
					i := (j + k) % len(servers)
					sv := servers[i]
					ex := executors(b, sv)
					for _, e := range ex {
						e.must(protocol.Install)
					}
					runInterleaved(b, sv.s, ex, b.N, bc.setup)
					native, script := executorMicros(b, sv.s, bc.verb)
					us[i][0], us[i][1] = append(us[i][0], native), append(us[i][1], script)
					// a server holds only the jobs of the turn it runs
					valkeytest.Do(b, sv.s, "FLUSHALL", "SYNC")
				}
			}
			for i, sv := range servers {
				ratios := make([]float64, rounds)
				for k := range ratios {
					ratios[k] = us[i][0][k] / us[i][1][k]
				}
				for x, name := range []string{"native", "lua"} {
					b.ReportMetric(median(us[i][x]), sv.label+"-"+name+"-µs/call")
					if bc.jobs > 1 {
						b.ReportMetric(median(us[i][x])/float64(bc.jobs), sv.label+"-"+name+"-µs/job")
					}
				}
				b.ReportMetric(median(ratios), sv.label+"-native/lua")
				b.Logf("%s (%s), %d rounds of %d calls: native %s, lua %s µs/call; native/lua %s", sv.label, sv.version, rounds, b.N, spread(us[i][0]), spread(us[i][1]), spread(ratios))
				if i > 0 {
					b.Logf("%s/%s: native %.3f, lua %.3f (ratio of medians)", sv.label, servers[0].label,
						median(us[i][0])/median(us[0][0]), median(us[i][1])/median(us[0][1]))
				}
			}
		})
	}
	// per server, per round: native and Lua bytes per job, measured on the
	// first run of the memory case (they do not depend on b.N)
	var bytes [][2][]float64
	b.Run("memory", func(b *testing.B) {
		if bytes == nil {
			payload := strings.Repeat("x", 64)
			bytes = make([][2][]float64, len(servers))
			for k := range rounds {
				for j := range servers {
					i := (j + k) % len(servers)
					sv := servers[i]
					for x, e := range executors(b, sv) {
						bytes[i][x] = append(bytes[i][x], bytesPerJob(b, sv.s, e, memJobs, len(payload), addPlain(payload)))
					}
					valkeytest.Do(b, sv.s, "FLUSHALL", "SYNC")
				}
			}
			for i, sv := range servers {
				b.Logf("%s (%s), %d rounds of %d jobs: native %s, lua %s B/job beyond the payload", sv.label, sv.version, rounds, memJobs, spread(bytes[i][0]), spread(bytes[i][1]))
			}
		}
		for i, sv := range servers {
			for x, name := range []string{"native", "lua"} {
				b.ReportMetric(median(bytes[i][x]), sv.label+"-"+name+"-B/job")
			}
		}
	})
}

// benchBuild is one server build of BenchmarkServers, running.
type benchBuild struct {
	bin     string
	label   string // the version as metrics name it: v8.0
	version valkeyserver.Version
	s       *valkeyserver.Server
	c       *valkeyserver.Conn
	shas    map[*protocol.Verb]string
}

// startBuild starts bin with the module and the job-core verbs' scripts
// loaded and labels it by its version, major and minor (v9.1), with the
// patch when a server of others has the same label and the place in the
// list when that is not enough.
func startBuild(b *testing.B, bin string, others []*benchBuild) *benchBuild {
	s, c, shas := benchServer(b, bin, protocol.Install, protocol.Add, protocol.Claim, protocol.Extend, protocol.Complete, protocol.CompleteMany, protocol.Fail)
	v, err := s.Version(context.Background())
	if err != nil {
		b.Fatalf("%s: %v", bin, err)
	}
	taken := func(label string) bool {
		for _, o := range others {
			if o.label == label {
				return true
			}
		}
		return false
	}
	label := fmt.Sprintf("v%d.%d", v.Major, v.Minor)
	if v.Product != "valkey" {
		label = v.Product + "-" + label
	}
	if taken(label) {
		label += "." + strconv.Itoa(v.Patch)
	}
	if taken(label) {
		label += "-" + strconv.Itoa(len(others)+1)
	}
	return &benchBuild{bin: bin, label: label, version: v, s: s, c: c, shas: shas}
}
