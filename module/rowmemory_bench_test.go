package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
	"github.com/trafikey/trafikey/protocol"
)

// BenchmarkRowMemory measures what a pending job costs the server beyond
// its payload (used_memory without client buffers and the script cache,
// per job, minus the payload) as native ADD stores it, and the same job
// written with raw commands in leaner layouts: what the job row's fields
// and the pending member each cost, and so how far a leaner row of the
// same key layout can go. b.N jobs of 64 bytes per case; the figure is a
// byte count, deterministic to within a byte at 100000 jobs. Run it by hand:
//
//	go test ./module -run '^$' -bench RowMemory -benchtime 100000x
func BenchmarkRowMemory(b *testing.B) {
	s, c, shas := benchServer(b, protocol.Install, protocol.Add)
	payload := strings.Repeat("x", 64)
	const at = "1767225600000" // an add time of 13 digits, as today's
	k := protocol.KeysOf("mem")
	// raw writes one job's keys as a layout would: the row's fields (none:
	// no row) and whether the job is a member of pending
	raw := func(fields []string, member bool) func(e *benchExec, n int) {
		return func(e *benchExec, n int) {
			lines := make([][]string, 0, 2*n)
			for i := range n {
				id := strconv.Itoa(i + 1)
				if len(fields) > 0 {
					l := []string{"HSET", k.Job(id)}
					for _, f := range fields {
						switch f {
						case protocol.FieldData, "d":
							l = append(l, f, payload)
						case protocol.FieldAttempts:
							l = append(l, f, "0")
						default:
							l = append(l, f, at)
						}
					}
					lines = append(lines, l)
				}
				if member {
					lines = append(lines, []string{"ZADD", k.Pending, strconv.FormatInt(protocol.PendingScore(0, int64(i+1)), 10), id})
				}
			}
			e.run(lines)
		}
	}
	cases := []struct {
		name  string
		write func(e *benchExec, n int)
	}{
		{"native-add", func(e *benchExec, n int) {
			e.must(protocol.Install)
			e.verb = protocol.Add
			calls := make([][]string, 0, n/100+1)
			for i := 0; i < n; i += 100 {
				args := []string{strconv.Itoa(min(100, n-i)), "0"}
				for range min(100, n-i) {
					args = append(args, payload, "0", "0", "3", "exponential", "1000", "", "0")
				}
				calls = append(calls, args)
			}
			e.pipeline(calls)
		}},
		{"row-data-att-at+pending", raw([]string{protocol.FieldData, protocol.FieldAttempts, protocol.FieldAdded}, true)},
		{"row-data-at+pending", raw([]string{protocol.FieldData, protocol.FieldAdded}, true)},
		{"row-d-at+pending", raw([]string{"d", protocol.FieldAdded}, true)},
		{"row-data+pending", raw([]string{protocol.FieldData}, true)},
		{"row-data-att-at", raw([]string{protocol.FieldData, protocol.FieldAttempts, protocol.FieldAdded}, false)},
		{"pending-only", raw(nil, true)},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			valkeytest.Do(b, s, "FLUSHALL", "SYNC")
			e := &benchExec{b: b, c: c, q: "mem", native: true, shas: shas}
			before := dataMemory(b, s)
			bc.write(e, b.N)
			after := dataMemory(b, s)
			perJob := float64(after-before) / float64(b.N)
			if bc.name != "pending-only" {
				perJob -= float64(len(payload))
			}
			b.ReportMetric(perJob, "B/job")
		})
	}
}

// dataMemory is the server's used_memory without client buffers and the
// script cache.
func dataMemory(b *testing.B, s *valkeyserver.Server) int64 {
	b.Helper()
	info := valkeytest.Do(b, s, "INFO", "memory").(string)
	n := func(f string) int64 {
		v, err := strconv.ParseInt(valkeyserver.InfoField(info, f), 10, 64)
		if err != nil {
			b.Fatalf("INFO %s: %v", f, err)
		}
		return v
	}
	return n("used_memory") - n("mem_clients_normal") - n("used_memory_scripts")
}
