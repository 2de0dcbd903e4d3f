package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// BenchmarkJobEvents measures the native job-core round with job events off
// and on: per iteration ADD of 100 jobs, CLAIM of 100, COMPLETEMANY of the
// 100 (three events a job when on). It reports the server's own time per
// job, the usec of EMQ.ADD, EMQ.CLAIM and EMQ.COMPLETEMANY in INFO
// commandstats over the jobs. Run it by hand:
//
//	go test ./module -run '^$' -bench JobEvents -benchtime 2000x
func BenchmarkJobEvents(b *testing.B) {
	const jobs = 100
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			s, c, _ := benchServer(b, "")
			ctx := context.Background()
			q := "bench-" + name
			do := func(args ...string) any {
				v, err := c.Do(ctx, args...)
				if err != nil {
					b.Fatal(err)
				}
				return v
			}
			do(verbArgs(protocol.Install, q)...)
			if on {
				do(verbArgs(protocol.Events, q, "1000")...)
			}
			add := []string{strconv.Itoa(jobs), "0"}
			for range jobs {
				add = append(add, job("payload")...)
			}
			addLine := verbArgs(protocol.Add, q, add...)
			claimLine := verbArgs(protocol.Claim, q, "60000", strconv.Itoa(jobs))
			do("CONFIG", "RESETSTAT")
			b.ResetTimer()
			for range b.N {
				do(addLine...)
				claimed := do(claimLine...).([]any)
				many := []string{strconv.Itoa(len(claimed))}
				for _, j := range claimed {
					j := j.([]any)
					many = append(many, j[0].(string), strconv.FormatInt(j[2].(int64), 10), "")
				}
				do(verbArgs(protocol.CompleteMany, q, many...)...)
			}
			b.StopTimer()
			usec := 0.0
			for _, cmd := range []string{protocol.Add.Command, protocol.Claim.Command, protocol.CompleteMany.Command} {
				usec += serverUsec(b, s, cmd)
			}
			b.ReportMetric(usec/float64(b.N*jobs), "server-µs/job")
		})
	}
}

// serverUsec is the total usec of command in INFO commandstats.
func serverUsec(b *testing.B, s *valkeyserver.Server, command string) float64 {
	stats := valkeytest.Do(b, s, "INFO", "commandstats").(string)
	for l := range strings.Lines(stats) {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok || !strings.EqualFold(k, "cmdstat_"+command) {
			continue
		}
		for field := range strings.SplitSeq(v, ",") {
			if us, ok := strings.CutPrefix(field, "usec="); ok {
				f, _ := strconv.ParseFloat(us, 64)
				return f
			}
		}
	}
	b.Fatalf("no cmdstat_%s in INFO commandstats", command)
	return 0
}
