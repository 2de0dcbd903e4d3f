package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// BenchmarkFixedCost measures the fixed cost of a native call: what a
// single-job verb costs the server beyond the commands it runs. Each verb
// runs alone on its queue after CONFIG RESETSTAT, so INFO commandstats holds
// the verb and the commands it ran through RM_Call (nested: their own time,
// counted by the server inside the verb's). It reports verb-µs/call,
// nested-µs/call and fixed-µs/call (the difference: the call into Go, the
// handler, RM_Call's own cost, the reads answered through the key API, the
// reply). The reads the key API answers are not counted as commands, so the
// same verb then runs as its Lua script, whose commands are all counted:
// commands-µs/call is their time (the verb's reads and writes as commands)
// and fixed-vs-commands-µs/call the native verb's time beyond it. Run it by
// hand:
//
//	go test ./module -run '^$' -bench FixedCost -benchtime 20000x
//
// The TRA calls run in chunks alternating with the server's own command of
// the same shape (bitCases), and it reports both and their ratio.
func BenchmarkFixedCost(b *testing.B) {
	s, c, shas := benchServer(b, "", protocol.Install, protocol.Add, protocol.Claim, protocol.Complete)
	queue := 0
	for _, bc := range singleJobCases {
		b.Run(bc.name, func(b *testing.B) {
			// the native call, then the Lua script of the same verb on a
			// queue of its own: the script's commands are all counted in
			// commandstats, reads included, which the native call answers
			// through the key API uncounted
			var verbUS, nestedUS, commandsUS float64
			for _, native := range []bool{true, false} {
				queue++
				e := &benchExec{b: b, c: c, q: "fixed" + strconv.Itoa(queue), native: native, shas: shas}
				e.must(protocol.Install)
				calls := bc.setup(e, b.N)
				valkeytest.Do(b, s, "CONFIG", "RESETSTAT")
				b.StartTimer()
				e.pipeline(calls)
				b.StopTimer()
				st := commandStats(b, s)
				top := strings.ToLower(e.verb.Command)
				if !native {
					top = "evalsha"
				}
				verb := st[top]
				if verb.calls == 0 {
					b.Fatalf("no calls of %s in commandstats", top)
				}
				nested := 0.0
				for name, cs := range st {
					if name == top {
						continue
					}
					nested += cs.usec
					if testing.Verbose() {
						// -v: which commands the verb ran, and their time
						b.Logf("native %v: %s: %.2f calls/call, %.3f µs/call", native, name, float64(cs.calls)/float64(verb.calls), cs.usec/float64(verb.calls))
					}
				}
				n := float64(verb.calls)
				if native {
					verbUS, nestedUS = verb.usec/n, nested/n
				} else {
					commandsUS = nested / n
				}
			}
			b.ReportMetric(verbUS, "verb-µs/call")
			b.ReportMetric(nestedUS, "nested-µs/call")
			b.ReportMetric(verbUS-nestedUS, "fixed-µs/call")
			b.ReportMetric(commandsUS, "commands-µs/call")
			b.ReportMetric(verbUS-commandsUS, "fixed-vs-commands-µs/call")
		})
	}
	for _, bc := range bitCases {
		b.Run(bc.name, func(b *testing.B) {
			queue++
			p := "bits" + strconv.Itoa(queue) + ":"
			e := &benchExec{b: b, c: c}
			e.run(bc.prepare(p))
			// chunks of the TRA call and of the server's command alternate,
			// each counted on its own (a TRA call's nested commands would
			// mix with the raw ones), so both meet the same load
			const chunk = 1000
			var traUS, rawUS float64
			var traCalls, rawCalls int64
			b.ResetTimer()
			for i := 0; i < b.N; i += chunk {
				for _, tra := range []bool{true, false} {
					lines := make([][]string, 0, chunk)
					for k := i; k < min(i+chunk, b.N); k++ {
						lines = append(lines, bc.line(p, k, tra))
					}
					valkeytest.Do(b, s, "CONFIG", "RESETSTAT")
					e.run(lines)
					st := commandStats(b, s)
					t, r := st[strings.ToLower(bc.tra)], st[strings.ToLower(bc.raw)]
					if tra {
						traUS += t.usec
						traCalls += t.calls
					} else {
						rawUS += r.usec
						rawCalls += r.calls
					}
				}
			}
			b.StopTimer()
			tra, raw := traUS/float64(traCalls), rawUS/float64(rawCalls)
			b.ReportMetric(tra, "tra-µs/call")
			b.ReportMetric(raw, "raw-µs/call")
			b.ReportMetric(tra/raw, "tra/raw")
		})
	}
}

// bitCases are the TRA calls the benchmarks set against the server's own
// command of the same shape: TRA.SETBIT against SETBIT on a new key each
// call; flipping a 0 bit to 1 inside a string (a "seen" marker: call k
// sets bit k of a 128 KB string of zeros, so no call grows it and none
// finds its bit set); growing a string (call k sets the last bit of byte
// k+1 of a string of k+1 bytes); and on a bit already set (in a 1-byte
// string); and TRA.GETBIT against GETBIT on a bit set inside a 1-byte
// string and inside a 64-byte one. The TRA call's time in INFO
// commandstats includes the commands it ran through RM_Call.
var bitCases = []bitCase{
	{name: "setbit-new-key", tra: protocol.TRASetBit, raw: "SETBIT", newKey: true, value: "1", prepare: func(string) [][]string { return nil }},
	{name: "setbit-flip", tra: protocol.TRASetBit, raw: "SETBIT", value: "1", prepare: zeros, offset: func(k int) int { return k % flipBits }},
	{name: "setbit-grow", tra: protocol.TRASetBit, raw: "SETBIT", value: "1", prepare: setBits, offset: func(k int) int { return 8*(k%growBytes+1) + 7 }},
	{name: "setbit-bit-set", tra: protocol.TRASetBit, raw: "SETBIT", value: "1", prepare: setBits},
	{name: "getbit-short", tra: protocol.TRAGetBit, raw: "GETBIT", prepare: setBits},
	{name: "getbit-long", tra: protocol.TRAGetBit, raw: "GETBIT", prepare: func(p string) [][]string {
		long := strings.Repeat("\xff", 64)
		return [][]string{{"SET", p + "tra:", long}, {"SET", p + "raw:", long}}
	}},
}

// flipBits is the size in bits of setbit-flip's strings, and growBytes
// how far setbit-grow grows its own: in a run of more calls, the calls
// past them find their bits set.
const (
	flipBits  = 1 << 20
	growBytes = 1 << 19
)

// bitCase is one of bitCases.
type bitCase struct {
	name     string
	tra, raw string
	newKey   bool   // a new key each call
	value    string // the SETBIT value, "" for GETBIT
	prepare  func(p string) [][]string
	offset   func(k int) int // the k-th call's offset; nil for 7
}

// setBits sets bit 7 of the case's two keys (1-byte strings).
func setBits(p string) [][]string {
	return [][]string{{protocol.TRASetBit, p + "tra:", "7", "1"}, {"SETBIT", p + "raw:", "7", "1"}}
}

// zeros makes the case's two keys strings of flipBits zero bits, raw (as
// SETBIT makes them).
func zeros(p string) [][]string {
	last := strconv.Itoa(flipBits - 1)
	return [][]string{{"SETBIT", p + "tra:", last, "0"}, {"SETBIT", p + "raw:", last, "0"}}
}

// line is the k-th call of a bit case, of the TRA command or the server's.
func (bc *bitCase) line(p string, k int, tra bool) []string {
	cmd, key := bc.raw, p+"raw:"
	if tra {
		cmd, key = bc.tra, p+"tra:"
	}
	if bc.newKey {
		key += strconv.Itoa(k)
	}
	offset := "7"
	if bc.offset != nil {
		offset = strconv.Itoa(bc.offset(k))
	}
	if bc.value == "" {
		return []string{cmd, key, offset}
	}
	return []string{cmd, key, offset, bc.value}
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

// BenchmarkPayload measures what a job's payload costs the server on each
// executor: per job ADD of one job, CLAIM of one job (its reply carries the
// payload) and COMPLETE, natively, through EVALSHA, and as the raw commands
// a client would send for the same changes (HINCRBY meta seq, HSET row, ZADD
// pending, HINCRBY stats added; ZPOPMIN pending, HINCRBY row att, HSET row
// state, ZADD active, HGET row data; ZREM active, DEL row, HINCRBY stats
// completed). Each lifecycle runs b.N jobs on a queue of its own, in chunks
// of payloadChunk, and counts the usec of its calls in INFO commandstats
// (EMQ.ADD, EMQ.CLAIM and EMQ.COMPLETE; EVALSHA; every raw command).
//
// A large payload's cost depends on the allocator's state as much as on the
// commands: the first lifecycle after a flush faults in fresh pages for its
// payloads, the next reuses the pages the one before freed. So one
// lifecycle of each executor warms the server first, uncounted, and then
// each of TRAFIKEY_BENCH_ROUNDS rounds (default 5) runs the three, the order
// rotating so that none always follows the same one. It reports the median
// server-µs/job of each executor and the medians of each round's raw/native
// and raw/lua (the executor's speed as a fraction of the raw commands'); -v
// logs every round with the spreads and each command's µs per job. Run it by
// hand:
//
//	go test ./module -run '^$' -bench Payload -benchtime 500x -v
func BenchmarkPayload(b *testing.B) {
	s, c, shas := benchServer(b, "", protocol.Install, protocol.Add, protocol.Claim, protocol.Complete)
	rounds := envInt(b, "TRAFIKEY_BENCH_ROUNDS", 5)
	executors := []string{"native", "lua", "raw"}
	queue := 0
	for _, size := range []int{64, 4 << 10, 256 << 10, 1 << 20} {
		payload := strings.Repeat("p", size)
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			b.StopTimer()
			if _, err := c.Do(b.Context(), "FLUSHALL"); err != nil {
				b.Fatal(err)
			}
			// lifecycle runs one executor's b.N jobs and returns its
			// server usec per job, logging each command's with -v
			lifecycle := func(ex string, round int) float64 {
				queue++
				e := &benchExec{b: b, c: c, q: "payload" + strconv.Itoa(queue), native: ex == "native", shas: shas}
				var usec float64
				if ex == "raw" {
					usec = rawLifecycle(b, s, e, payload, b.N)
				} else {
					usec = verbLifecycle(b, s, e, payload, b.N)
				}
				if testing.Verbose() && round >= 0 {
					var parts []string
					for name, cs := range commandStats(b, s) {
						parts = append(parts, name+" "+strconv.FormatFloat(cs.usec/float64(b.N), 'f', 1, 64))
					}
					slices.Sort(parts)
					b.Logf("round %d, %s: %.1f µs/job (%s)", round, ex, usec/float64(b.N), strings.Join(parts, ", "))
				}
				return usec / float64(b.N)
			}
			for _, ex := range executors {
				lifecycle(ex, -1)
			}
			us := map[string][]float64{}
			var rawNative, rawLua []float64
			for r := range rounds {
				got := map[string]float64{}
				for k := range executors {
					ex := executors[(k+r)%len(executors)]
					got[ex] = lifecycle(ex, r)
					us[ex] = append(us[ex], got[ex])
				}
				rawNative = append(rawNative, got["raw"]/got["native"])
				rawLua = append(rawLua, got["raw"]/got["lua"])
			}
			for _, ex := range executors {
				b.ReportMetric(median(us[ex]), ex+"-server-µs/job")
			}
			b.ReportMetric(median(rawNative), "raw/native")
			b.ReportMetric(median(rawLua), "raw/lua")
			b.Logf("%d bytes, %d rounds of %d jobs, server µs/job: native %s, Lua %s, raw %s; raw/native %s, raw/lua %s",
				size, rounds, b.N, spread(us["native"]), spread(us["lua"]), spread(us["raw"]), spread(rawNative), spread(rawLua))
		})
	}
}

// payloadChunk is how many jobs a lifecycle adds, claims and completes
// before the next: one pipeline of each, as many payloads in flight as a
// queue holds that keeps up with its producers. The whole lifecycle's
// payloads at once would measure the allocator's handling of hundreds of
// megabytes coming and going more than the commands.
const payloadChunk = 128

// verbLifecycle adds, claims and completes n jobs one per call, in chunks
// of payloadChunk, and returns the server usec of those calls.
func verbLifecycle(b *testing.B, s *valkeyserver.Server, e *benchExec, payload string, n int) float64 {
	e.must(protocol.Install)
	valkeytest.Do(b, s, "CONFIG", "RESETSTAT")
	for done := 0; done < n; done += payloadChunk {
		m := min(payloadChunk, n-done)
		e.verb = protocol.Add
		e.pipeline(repeat(m, addArgs(job(payload))))
		e.verb = protocol.Claim
		claimed := e.pipeline(repeat(m, []string{"600000", "1"}))
		completes := make([][]string, 0, len(claimed))
		for _, r := range claimed {
			j := r.([]any)[0].([]any)
			if len(j[1].(string)) != len(payload) {
				b.Fatalf("claimed a payload of %d bytes, want %d", len(j[1].(string)), len(payload))
			}
			completes = append(completes, []string{j[0].(string), strconv.FormatInt(j[2].(int64), 10), ""})
		}
		e.verb = protocol.Complete
		e.pipeline(completes)
	}
	st := commandStats(b, s)
	if !e.native {
		return st["evalsha"].usec
	}
	return st["emq.add"].usec + st["emq.claim"].usec + st["emq.complete"].usec
}

// rawLifecycle makes the same changes with raw commands, in the same
// chunks, and returns their server usec. Each round trip carries the
// commands of a chunk's jobs, as the verbs' pipelines carry a chunk's calls.
func rawLifecycle(b *testing.B, s *valkeyserver.Server, e *benchExec, payload string, n int) float64 {
	k := protocol.KeysOf(e.q)
	valkeytest.Do(b, s, "CONFIG", "RESETSTAT")
	var lines [][]string
	for done := 0; done < n; done += payloadChunk {
		ids := make([]string, min(payloadChunk, n-done))
		for i := range ids {
			ids[i] = strconv.Itoa(done + i + 1)
		}
		lines = lines[:0]
		for _, id := range ids {
			lines = append(lines, []string{"HINCRBY", k.Meta, protocol.MetaSeq, "1"},
				[]string{"HSET", k.Job(id), protocol.FieldData, payload, protocol.FieldState, protocol.StatePending,
					protocol.FieldAttempts, "0", protocol.FieldMax, "3", protocol.FieldPriority, "0",
					protocol.FieldBackoff, "fixed:0", protocol.FieldAdded, "1767225600000"},
				[]string{"ZADD", k.Pending, "0", id},
				[]string{"HINCRBY", k.Stats, statAdded, "1"})
		}
		runDepth(e, lines, 4*payloadChunk)
		lines = lines[:0]
		for _, id := range ids {
			lines = append(lines, []string{"ZPOPMIN", k.Pending, "1"},
				[]string{"HINCRBY", k.Job(id), protocol.FieldAttempts, "1"},
				[]string{"HSET", k.Job(id), protocol.FieldState, protocol.StateActive},
				[]string{"ZADD", k.Active, "1767225600000", id},
				[]string{"HGET", k.Job(id), protocol.FieldData})
		}
		runDepth(e, lines, 5*payloadChunk)
		lines = lines[:0]
		for _, id := range ids {
			lines = append(lines, []string{"ZREM", k.Active, id}, []string{"DEL", k.Job(id)},
				[]string{"HINCRBY", k.Stats, statCompleted, "1"})
		}
		runDepth(e, lines, 3*payloadChunk)
	}
	usec := 0.0
	for _, cs := range commandStats(b, s) {
		usec += cs.usec
	}
	return usec
}

// runDepth sends command lines, depth per round trip, and fails on any
// error reply.
func runDepth(e *benchExec, lines [][]string, depth int) {
	for i := 0; i < len(lines); i += depth {
		replies, err := e.c.DoMulti(e.b.Context(), lines[i:min(i+depth, len(lines))]...)
		if err != nil {
			e.b.Fatal(err)
		}
		for j, r := range replies {
			if re, ok := r.(valkeyserver.ReplyError); ok {
				e.b.Fatalf("%q: %v", lines[i+j][:2], re)
			}
		}
	}
}

// singleJobCases are the single-job calls whose fixed cost the benchmarks
// measure: each setup prepares n calls of its verb on e's queue and sets
// e.verb.
var singleJobCases = []struct {
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
}
