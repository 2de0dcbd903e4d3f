package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
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
	s, c, shas := benchServer(b, "", protocol.Install, protocol.Add)
	payload := strings.Repeat("x", 64)
	const at = "1767225600000" // an add time of 13 digits, as today's
	k := protocol.KeysOf("mem")
	// raw writes each job's keys as a layout would: its row's field/value
	// pairs (none: no row) and whether it is a member of pending
	raw := func(row []string, member bool) func(e *benchExec, n int) {
		return func(e *benchExec, n int) {
			lines := make([][]string, 0, 2*n)
			for i := range n {
				id := strconv.Itoa(i + 1)
				if len(row) > 0 {
					lines = append(lines, append([]string{"HSET", k.Job(id)}, row...))
				}
				if member {
					lines = append(lines, []string{"ZADD", k.Pending, strconv.FormatInt(protocol.PendingScore(0, int64(i+1)), 10), id})
				}
			}
			e.run(lines)
		}
	}
	data, att, added := protocol.FieldData, protocol.FieldAttempts, protocol.FieldAdded
	cases := []struct {
		name  string
		row   bool // a row, and so a payload, per job
		write func(e *benchExec, n int)
	}{
		{"native-add", true, addPlain(payload)},
		{"row-data-att-at+pending", true, raw([]string{data, payload, att, "0", added, at}, true)},
		{"row-data-at+pending", true, raw([]string{data, payload, added, at}, true)},
		{"row-d-at+pending", true, raw([]string{"d", payload, added, at}, true)},
		{"row-data+pending", true, raw([]string{data, payload}, true)},
		{"row-data-att-at", true, raw([]string{data, payload, att, "0", added, at}, false)},
		{"pending-only", false, raw(nil, true)},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			e := &benchExec{b: b, c: c, q: "mem", native: true, shas: shas}
			beyond := 0
			if bc.row {
				beyond = len(payload)
			}
			b.ReportMetric(bytesPerJob(b, s, e, b.N, beyond, bc.write), "B/job")
		})
	}
}

// addPlain is the write of n plain jobs of payload by e's executor: INSTALL
// of e's queue, then ADD of 100 jobs a call.
func addPlain(payload string) func(e *benchExec, n int) {
	return func(e *benchExec, n int) {
		e.must(protocol.Install)
		// a plain job: every field at its default, which ADD leaves out
		e.addJobs(n, job(payload, "0", "0", "3", protocol.BackoffExponential, "1000"))
	}
}

// bytesPerJob empties the server, writes n jobs with write and returns what
// the server's data grew by per job, less payload bytes.
func bytesPerJob(b *testing.B, s *valkeyserver.Server, e *benchExec, n, payload int, write func(e *benchExec, n int)) float64 {
	valkeytest.Do(b, s, "FLUSHALL", "SYNC")
	before := dataMemory(b, s)
	write(e, n)
	return float64(dataMemory(b, s)-before)/float64(n) - float64(payload)
}

// dataMemory is the server's used_memory without client buffers and the
// script cache.
func dataMemory(b *testing.B, s *valkeyserver.Server) int64 {
	b.Helper()
	n, err := valkeyserver.DataMemory(valkeytest.Do(b, s, "INFO", "memory").(string))
	if err != nil {
		b.Fatal(err)
	}
	return n
}
