package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
	"github.com/trafikey/trafikey/protocol"
)

// BenchmarkFixedCost measures the fixed cost of a native call: what a
// single-job verb costs the server beyond the commands it runs. Each verb
// runs alone on its queue after CONFIG RESETSTAT, so INFO commandstats holds
// the verb and the commands it ran through the host (nested: their own
// time, counted by the server inside the verb's). It reports verb-µs/call,
// nested-µs/call and fixed-µs/call (the difference: the call into Go, the
// handler, the host calls' own cost, the reads answered through the key
// API, the reply). Run it by hand:
//
//	go test ./module -run '^$' -bench FixedCost -benchtime 20000x
//
// TRA.SETBIT runs interleaved with the raw SETBIT of the same shape (a new
// key each call, or a bit already set), both in one pipeline, and reports
// both and their ratio.
func BenchmarkFixedCost(b *testing.B) {
	s, c, _ := benchServer(b)
	queue := 0
	for _, bc := range []struct {
		name  string
		setup func(e *benchExec, n int) [][]string
	}{
		{"add", func(e *benchExec, n int) [][]string {
			e.verb = protocol.Add
			return repeat(n, addArgs(job("payload-of-some-bytes")))
		}},
		{"claim", func(e *benchExec, n int) [][]string {
			e.fill(n)
			e.verb = protocol.Claim
			return repeat(n, []string{"60000", "1"})
		}},
		{"complete", func(e *benchExec, n int) [][]string {
			leases := e.leases(n)
			e.verb = protocol.Complete
			for i := range leases {
				leases[i] = append(leases[i], "")
			}
			return leases
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			queue++
			e := &benchExec{b: b, c: c, q: "fixed" + strconv.Itoa(queue), native: true}
			e.must(protocol.Install)
			calls := bc.setup(e, b.N)
			valkeytest.Do(b, s, "CONFIG", "RESETSTAT")
			b.ResetTimer()
			e.pipeline(calls)
			b.StopTimer()
			st := commandStats(b, s)
			verb := st[strings.ToLower(e.verb.Command)]
			if verb.calls == 0 {
				b.Fatalf("no calls of %s in commandstats", e.verb.Command)
			}
			nested := 0.0
			for name, cs := range st {
				if name != strings.ToLower(e.verb.Command) {
					nested += cs.usec
				}
			}
			for name, cs := range st {
				if !testing.Verbose() {
					break
				}
				// -v: which commands the verb ran, and their time
				b.Logf("%s: %.2f calls/call, %.3f µs/call", name, float64(cs.calls)/float64(verb.calls), cs.usec/float64(verb.calls))
			}
			n := float64(verb.calls)
			b.ReportMetric(verb.usec/n, "verb-µs/call")
			b.ReportMetric(nested/n, "nested-µs/call")
			b.ReportMetric((verb.usec-nested)/n, "fixed-µs/call")
		})
	}
	for _, bc := range []struct {
		name string
		key  func(prefix string, i int) string
	}{
		{"setbit-new-key", func(p string, i int) string { return p + strconv.Itoa(i) }},
		{"setbit-bit-set", func(p string, _ int) string { return p }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			queue++
			p := "bits" + strconv.Itoa(queue) + ":"
			e := &benchExec{b: b, c: c}
			if bc.name == "setbit-bit-set" {
				e.run([][]string{{protocol.TRASetBit, p + "tra:", "7", "1"}, {"SETBIT", p + "raw:", "7", "1"}})
			}
			// chunks of TRA.SETBIT and of SETBIT alternate, each counted
			// on its own (TRA.SETBIT's nested SETBIT would mix with the
			// raw ones), so both meet the same load on the machine
			const chunk = 1000
			var traUS, rawUS float64
			var traCalls, rawCalls int64
			b.ResetTimer()
			for i := 0; i < b.N; i += chunk {
				for _, tra := range []bool{true, false} {
					lines := make([][]string, 0, chunk)
					for k := i; k < min(i+chunk, b.N); k++ {
						if tra {
							lines = append(lines, []string{protocol.TRASetBit, bc.key(p+"tra:", k), "7", "1"})
						} else {
							lines = append(lines, []string{"SETBIT", bc.key(p+"raw:", k), "7", "1"})
						}
					}
					valkeytest.Do(b, s, "CONFIG", "RESETSTAT")
					e.run(lines)
					st := commandStats(b, s)
					if tra {
						traUS += st[strings.ToLower(protocol.TRASetBit)].usec
						traCalls += st[strings.ToLower(protocol.TRASetBit)].calls
					} else {
						rawUS += st["setbit"].usec
						rawCalls += st["setbit"].calls
					}
				}
			}
			b.StopTimer()
			tra, raw := traUS/float64(traCalls), rawUS/float64(rawCalls)
			b.ReportMetric(tra, "tra-µs/call")
			b.ReportMetric(raw, "setbit-µs/call")
			b.ReportMetric(tra/raw, "tra/setbit")
		})
	}
}

// cmdStat is one command's line of INFO commandstats.
type cmdStat struct {
	calls int64
	usec  float64
}

// commandStats is INFO commandstats by lower-case command name, without
// the CONFIG and INFO calls of the benchmark itself.
func commandStats(b *testing.B, s *valkeyserver.Server) map[string]cmdStat {
	stats := valkeytest.Do(b, s, "INFO", "commandstats").(string)
	out := map[string]cmdStat{}
	for l := range strings.Lines(stats) {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		name, isStat := strings.CutPrefix(k, "cmdstat_")
		if !ok || !isStat {
			continue
		}
		name = strings.ToLower(name)
		if name == "config|resetstat" || name == "info" || name == "config" {
			continue
		}
		var cs cmdStat
		for field := range strings.SplitSeq(v, ",") {
			if x, ok := strings.CutPrefix(field, "calls="); ok {
				cs.calls, _ = strconv.ParseInt(x, 10, 64)
			}
			if x, ok := strings.CutPrefix(field, "usec="); ok {
				cs.usec, _ = strconv.ParseFloat(x, 64)
			}
		}
		out[name] = cs
	}
	return out
}
