package main

import (
	"encoding/csv"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"trafikey/internal/valkeyserver"
	"trafikey/internal/valkeytest"
)

// BenchmarkCrossing measures what a module command costs over a bare server
// command: valkey-benchmark runs EMQ.VERSION (one crossing into Go and back)
// and PING at pipeline 16 with 50 clients against one server. Run it by hand:
//
//	go test ./module -run '^$' -bench Crossing -benchtime 2000000x
//
// It reports the server's requests per second (req/s) and ns/op, the wall time
// per request. On a two-core machine the server is pinned to CPU 0 and the
// load generator to CPU 1 when taskset is available.
func BenchmarkCrossing(b *testing.B) {
	bench, err := exec.LookPath("valkey-benchmark")
	if err != nil {
		b.Skip("valkey-benchmark not found")
	}
	s := valkeytest.Start(b, valkeyserver.Options{Module: valkeytest.ModulePath(b)})
	pin := []string{}
	if ts, err := exec.LookPath("taskset"); err == nil {
		if exec.Command(ts, "-a", "-cp", "0", strconv.Itoa(s.PID())).Run() == nil {
			pin = []string{ts, "-c", "1"}
		}
	}
	for _, command := range []string{"PING", "EMQ.VERSION"} {
		b.Run(command, func(b *testing.B) {
			args := append(pin, bench, "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port()),
				"-c", "50", "-P", "16", "-n", strconv.Itoa(max(b.N, 16)), "--csv", command)
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
		})
	}
}
