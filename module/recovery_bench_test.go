package main

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// BenchmarkRecovery measures RECOVER and PROMOTE on both executors against
// one server with the module loaded, as BenchmarkJobCore does for the verbs
// a job's life goes through: the native EMQ.* command beside the verb's Lua
// script through EVALSHA, pipelined 128 calls at a time over one connection.
// Run it by hand:
//
//	go test ./module -run '^$' -bench Recovery -benchtime 20000x
//
// Each verb runs interleaved (native and Lua calls alternating in one
// pipeline, so both meet the same load: native/lua is the figure to quote),
// then each executor alone. Each call takes back (or promotes) limit jobs: 1, then 10. The jobs are
// added, claimed with a 1 ms lease (or added with a 1 ms delay) and left to
// come due before CONFIG RESETSTAT, so only the measured calls count. It
// reports server-µs/call from INFO commandstats and calls/s as the client
// saw them.
func BenchmarkRecovery(b *testing.B) {
	s, c, shas := benchServer(b, "", protocol.Install, protocol.Add, protocol.Claim, protocol.Recover, protocol.Promote)
	queue := 0
	for _, bc := range []struct {
		name  string
		verb  *protocol.Verb
		limit int
		due   func(e *benchExec, jobs int)
	}{
		{"recover", protocol.Recover, 1, expiredLeases},
		{"recover-10", protocol.Recover, 10, expiredLeases},
		{"promote", protocol.Promote, 1, dueJobs},
		{"promote-10", protocol.Promote, 10, dueJobs},
	} {
		// interleaved: native and Lua calls alternate in one pipeline, so
		// both meet the same load on the machine; native/lua is the figure
		// to quote when other work shares it
		b.Run(bc.name+"/interleaved", func(b *testing.B) {
			var line [2][]string
			for i, native := range []bool{true, false} {
				queue++
				e := &benchExec{b: b, c: c, q: "recovery" + strconv.Itoa(queue), native: native, shas: shas}
				e.must(protocol.Install)
				bc.due(e, bc.limit*b.N)
				line[i] = e.line(bc.verb, []string{strconv.Itoa(bc.limit)})
			}
			lines := make([][]string, 0, 2*b.N)
			for range b.N {
				lines = append(lines, line[0], line[1])
			}
			time.Sleep(20 * time.Millisecond)
			valkeytest.Do(b, s, "CONFIG", "RESETSTAT")
			b.ResetTimer()
			replies := pipelined(b, c, lines)
			b.StopTimer()
			if moved := movedBy(replies); moved != 2*bc.limit*b.N {
				b.Fatalf("%s moved %d jobs, want %d", bc.verb.Command, moved, 2*bc.limit*b.N)
			}
			reportInterleaved(b, s, bc.verb)
		})
		for _, native := range []bool{true, false} {
			name := bc.name + "/lua"
			if native {
				name = bc.name + "/native"
			}
			b.Run(name, func(b *testing.B) {
				queue++
				e := &benchExec{b: b, c: c, q: "recovery" + strconv.Itoa(queue), native: native, shas: shas}
				e.must(protocol.Install)
				bc.due(e, bc.limit*b.N)
				time.Sleep(20 * time.Millisecond) // every lease and delay has passed
				e.verb = bc.verb
				calls := repeat(b.N, []string{strconv.Itoa(bc.limit)})
				valkeytest.Do(b, s, "CONFIG", "RESETSTAT")
				b.ResetTimer()
				start := time.Now()
				replies := e.pipeline(calls)
				elapsed := time.Since(start)
				b.StopTimer()
				if moved := movedBy(replies); moved != bc.limit*b.N {
					b.Fatalf("%s moved %d jobs, want %d", bc.verb.Command, moved, bc.limit*b.N)
				}
				reportAlone(b, s, bc.verb, native, len(calls), elapsed)
			})
		}
	}
}

// expiredLeases adds n jobs and claims them with a 1 ms lease.
func expiredLeases(e *benchExec, n int) {
	e.fill(n)
	e.verb = protocol.Claim
	for left := n; left > 0; left -= protocol.MaxCount {
		e.pipeline([][]string{{"1", strconv.Itoa(min(left, protocol.MaxCount))}})
	}
}

// dueJobs adds n jobs with a 1 ms delay, 100 per call.
func dueJobs(e *benchExec, n int) { e.fillDelayed(n, "1") }

// pipelined sends lines 128 per round trip and fails on any error reply.
func pipelined(b *testing.B, c *valkeyserver.Conn, lines [][]string) []any {
	const depth = 128
	out := make([]any, 0, len(lines))
	for i := 0; i < len(lines); i += depth {
		replies, err := c.DoMulti(context.Background(), lines[i:min(i+depth, len(lines))]...)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range replies {
			if re, ok := r.(valkeyserver.ReplyError); ok {
				b.Fatal(re)
			}
		}
		out = append(out, replies...)
	}
	return out
}

// movedBy is how many jobs the replies of RECOVER ([requeued, dead]) or
// PROMOTE (moved) account for.
func movedBy(replies []any) int {
	n := 0
	for _, r := range replies {
		switch r := r.(type) {
		case int64:
			n += int(r)
		case []any:
			for _, x := range r {
				n += int(x.(int64))
			}
		}
	}
	return n
}
