package main

import (
	"encoding/csv"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// BenchmarkCrossing measures what the module's boundary costs over bare server
// commands: valkey-benchmark runs, at pipeline 16 with 50 clients against one
// server, PING beside EMQ.VERSION (one crossing into Go and back), GET beside
// EMQ.DEBUG.CALL GET (plus one host read), and HINCRBY beside EMQ.DEBUG.KEYS
// (plus the guard and one replicated host write). Run it by hand:
//
//	go test ./module -run '^$' -bench Crossing -benchtime 2000000x
//
// It reports the server's requests per second (req/s), the server's own time
// per call from INFO commandstats (server-µs/call, which other load on the
// machine disturbs least), and ns/op, the wall time per request. On a two-core machine the server is pinned to CPU 0 and the
// load generator to CPU 1 when taskset is available.
func BenchmarkCrossing(b *testing.B) {
	bench, err := valkeyserver.Tool("valkey-benchmark")
	if err != nil {
		b.Skip("valkey-benchmark not found")
	}
	s := valkeytest.Start(b, valkeyserver.Options{Module: valkeytest.ModulePath(b), ModuleArgs: []string{"debug-commands", "yes"}})
	valkeytest.Do(b, s, "SET", "k", "some value")
	pin := []string{}
	if ts, err := exec.LookPath("taskset"); err == nil {
		if exec.Command(ts, "-a", "-cp", "0", strconv.Itoa(s.PID())).Run() == nil {
			pin = []string{ts, "-c", "1"}
		}
	}
	for _, command := range [][]string{
		{"PING"}, {"EMQ.VERSION"},
		{"GET", "k"}, {"EMQ.DEBUG.CALL", "GET", "k"},
		{"HINCRBY", "h", "n", "1"}, {"EMQ.DEBUG.KEYS", "1", "h"},
	} {
		b.Run(strings.Join(command, "_"), func(b *testing.B) {
			args := append(pin, bench, "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port()),
				"-c", "50", "-P", "16", "-n", strconv.Itoa(max(b.N, 16)), "--csv")
			args = append(args, command...)
			valkeytest.Do(b, s, "CONFIG", "RESETSTAT")
			b.ResetTimer()
			out, err := exec.Command(args[0], args[1:]...).Output()
			b.StopTimer()
			if err != nil {
				b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
			}
			rows, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
			if err != nil || len(rows) < 2 || len(rows[1]) < 2 {
				b.Fatalf("valkey-benchmark output: %q (%v)", out, err)
			}
			rps, err := strconv.ParseFloat(rows[1][1], 64)
			if err != nil {
				b.Fatalf("req/s %q: %v", rows[1][1], err)
			}
			b.ReportMetric(rps, "req/s")
			stats := valkeytest.Do(b, s, "INFO", "commandstats").(string)
			line := ""
			for l := range strings.Lines(stats) {
				// Module commands keep their declared case: cmdstat_EMQ.VERSION.
				if k, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && strings.EqualFold(k, "cmdstat_"+command[0]) {
					line = v
				}
			}
			for field := range strings.SplitSeq(line, ",") {
				if v, ok := strings.CutPrefix(field, "usec_per_call="); ok {
					us, _ := strconv.ParseFloat(v, 64)
					b.ReportMetric(us, "server-µs/call")
				}
			}
		})
	}
}
