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
// fixture is built once per command measured, each on a queue of its own,
// and the EMQ.* and FLOOR.* calls alternate in one pipeline, so all meet
// the same load on the machine.
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
// verdict and the reply). Two more commands of the floor split it: with
// the checks (FLOOR.CHECKED.*: the fence through RM_Call and the ACL check
// of the derived keys, as the host makes them), and with the checks and
// the reads the verdict asks for in this case, through the key API as the
// host answers them (FLOOR.READ.*). checks is the first's time beyond the
// floor's, reads the second's beyond the first's, and module the verb's
// beyond the second's: the module's own work, from the call into Go and
// the parsing to the verdict, the batches and the reply. Each is the
// median of the rounds' differences; the log gives each median's min–max.
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
		verb := strings.TrimPrefix(bc.verb.Command, "EMQ.")
		// the commands measured: the verb, its floor, the floor with the
		// checks, and with the verdict's reads besides
		commands := []string{bc.verb.Command, "FLOOR." + verb, "FLOOR.CHECKED." + verb, "FLOOR.READ." + verb}
		b.Run(bc.name, func(b *testing.B) {
			b.StopTimer()
			b.ResetTimer()
			// per server, per command, per round: µs per call
			us := make([][4][]float64, len(servers))
			for k := range rounds {
				for j := range servers {
					i := (j + k) % len(servers)
					sv := servers[i]
					// every queue's fixture is built by the module; the
					// calls then go to each command in turn
					var ex [4]*benchExec
					var calls [4][][]string
					for x := range ex {
						queue++
						ex[x] = &benchExec{b: b, c: sv.c, q: "floor" + strconv.Itoa(queue), native: true, shas: sv.shas}
						ex[x].must(protocol.Install)
						calls[x] = bc.setup(ex[x], b.N)
					}
					lines := make([][]string, 0, len(ex)*b.N)
					for n := range calls[0] {
						for x, e := range ex {
							l := e.line(bc.verb, calls[x][n])
							l[0] = commands[x]
							lines = append(lines, l)
						}
					}
					valkeytest.Do(b, sv.s, "CONFIG", "RESETSTAT")
					b.StartTimer()
					ex[0].run(lines)
					b.StopTimer()
					for x, command := range commands {
						us[i][x] = append(us[i][x], serverMicros(b, sv.s, command))
					}
					valkeytest.Do(b, sv.s, "FLUSHALL", "SYNC")
				}
			}
			for i, sv := range servers {
				native, floor, checked, read := us[i][0], us[i][1], us[i][2], us[i][3]
				// per round: native/floor, and the differences
				ratio, fixed, checks, reads, own := make([]float64, rounds), make([]float64, rounds), make([]float64, rounds), make([]float64, rounds), make([]float64, rounds)
				for k := range ratio {
					ratio[k] = native[k] / floor[k]
					fixed[k] = native[k] - floor[k]
					checks[k] = checked[k] - floor[k]
					reads[k] = read[k] - checked[k]
					own[k] = native[k] - read[k]
				}
				for _, m := range []struct {
					name string
					v    []float64
				}{
					{"native-µs/call", native}, {"floor-µs/call", floor}, {"native/floor", ratio}, {"fixed-µs/call", fixed},
					{"checks-µs/call", checks}, {"reads-µs/call", reads}, {"module-µs/call", own},
				} {
					b.ReportMetric(median(m.v), sv.label+"-"+m.name)
				}
				b.Logf("%s (%s), %d rounds of %d calls, µs/call: native %s, floor %s, floor with the checks %s, and the reads %s; native/floor %s; fixed %s = the checks %s + the reads %s + the module's own %s",
					sv.label, sv.version, rounds, b.N, spread(native), spread(floor), spread(checked), spread(read), spread(ratio),
					spread(fixed), spread(checks), spread(reads), spread(own))
			}
		})
	}
}

// BenchmarkFloorPayload sets a native ADD of one large payload against its
// floor and against the raw HSET of the same row: EMQ.ADD, FLOOR.ADD and
// HSET row data <payload> att 0 at <ms> interleaved in one pipeline, in
// chunks of payloadChunk jobs of each whose rows are deleted after the
// chunk, so that every chunk's copies land on pages the one before freed
// (BenchmarkPayload says why that matters). Each of TRAFIKEY_BENCH_ROUNDS
// rounds (5) runs b.N jobs of each after a warming round; it reports the
// median server µs per call of each command and logs their min–max. Run it
// by hand:
//
//	go test ./module -run '^$' -bench FloorPayload -benchtime 384x -v
func BenchmarkFloorPayload(b *testing.B) {
	so := buildFloor(b)
	sv := startBuild(b, "", nil)
	valkeytest.Do(b, sv.s, "MODULE", "LOAD", so)
	rounds := envInt(b, "TRAFIKEY_BENCH_ROUNDS", 5)
	commands := []string{"EMQ.ADD", "FLOOR.ADD", "HSET"}
	queue := 0
	for _, size := range []int{256 << 10, 1 << 20} {
		payload := strings.Repeat("p", size)
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			b.StopTimer()
			us := make([][]float64, len(commands))
			for r := -1; r < rounds; r++ {
				var ex [2]*benchExec // EMQ.ADD's queue, FLOOR.ADD's
				for x := range ex {
					queue++
					ex[x] = &benchExec{b: b, c: sv.c, q: "floorpayload" + strconv.Itoa(queue), native: true, shas: sv.shas}
					ex[x].must(protocol.Install)
				}
				raw := protocol.KeysOf("floorpayload-raw" + strconv.Itoa(queue))
				valkeytest.Do(b, sv.s, "CONFIG", "RESETSTAT")
				for done := 0; done < b.N; done += payloadChunk {
					var lines, dels [][]string
					for j := done; j < min(done+payloadChunk, b.N); j++ {
						id := strconv.Itoa(j + 1)
						for x, e := range ex {
							l := e.line(protocol.Add, addArgs(job(payload)))
							l[0] = commands[x]
							lines = append(lines, l)
							dels = append(dels, []string{"DEL", protocol.KeysOf(e.q).Job(id)})
						}
						lines = append(lines, []string{"HSET", raw.Job(id), protocol.FieldData, payload,
							protocol.FieldAttempts, "0", protocol.FieldAdded, "1767225600000"})
						dels = append(dels, []string{"DEL", raw.Job(id)})
					}
					ex[0].run(lines)
					ex[0].run(dels)
				}
				if r < 0 {
					continue // the warming round
				}
				for x, command := range commands {
					us[x] = append(us[x], serverMicros(b, sv.s, command))
				}
			}
			for x, command := range commands {
				b.ReportMetric(median(us[x]), strings.ToLower(command)+"-µs/call")
			}
			b.Logf("%s (%s), %d bytes, %d rounds of %d calls each, µs/call: EMQ.ADD %s, FLOOR.ADD %s, HSET %s",
				sv.label, sv.version, size, rounds, b.N, spread(us[0]), spread(us[1]), spread(us[2]))
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
	if out, err := exec.Command(cc, "-O2", "-Wall", "-fPIC", "-shared", "-o", so,
		filepath.Join(root, "bench", "floor", "floor.c")).CombinedOutput(); err != nil {
		tb.Fatalf("build bench/floor/floor.c: %v\n%s", err, out)
	}
	return so
}
