package verify

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// The fuzz target sends arbitrary argument vectors to the module's
// commands on one server (DEBUG enabled) and requires, after every input:
// the server answers PING and its process is alive; a refused call (an
// error reply), and any call of a read-only command, leaves DEBUG DIGEST
// unchanged.
//
// An input is (cmd, setup, argv):
//
//   - cmd picks the command: fuzzCommands[cmd % n], then the commands the
//     module registers beyond that list (future verbs), in name order. A
//     command the module does not register is skipped.
//   - setup's bits prepare queue "f" before the call (see fuzzer.setup):
//     installed, jobs in every state, keys of the wrong type, counters at
//     the int64 edge, paused.
//   - argv is split at every 0x1E byte into the arguments after the command
//     name. An argument that is exactly 0x1D then 'N', 'K' or 'B' becomes
//     the verb's numkeys, its declared keys (several arguments) or the
//     queue base, so that mutations start from calls that pass the shape
//     and layout checks.
//
// go test runs the seed corpus (testdata/fuzz/FuzzEMQ, written by
// TestFuzzSeedFiles) and TestFuzzRandom a bounded random pass. Locally:
//
//	go test ./verify -run '^$' -fuzz=FuzzEMQ -fuzztime=10m
//
// (each fuzz worker starts its own server; -parallel bounds the workers).

// fuzzCommands are the commands an input's cmd byte indexes. The TRA
// family was listed before it landed, so that the corpus kept its meaning;
// a module without it skips its inputs. Verbs specified after the
// corpus was first written (laterVerbs) come after it, for the same reason:
// every earlier input's cmd byte still names the same command.
var fuzzCommands = func() []string {
	out := []string{protocol.VersionCommand}
	for _, v := range protocol.JobCore {
		if !slices.Contains(laterVerbs, v) {
			out = append(out, v.Command)
		}
	}
	out = append(out, "TRA.SETBIT", "TRA.GETBIT")
	for _, v := range laterVerbs {
		out = append(out, v.Command)
	}
	return out
}()

// laterVerbs are the verbs specified after the fuzz corpus was first
// written, in the order they were added.
// The flow verbs joined the list after the bus verbs' seeds were written,
// so they follow them; the operations verbs, the rescheduling and
// cancellation verbs, then the schedule verbs, come last.
var laterVerbs = append(append(append(append(append(append(append([]*protocol.Verb{protocol.CompleteMany}, protocol.LaneVerbs...), protocol.BusVerbs...),
	protocol.FlowVerbs...), protocol.EventVerbs...), protocol.OpsVerbs...), protocol.HandlerVerbs...), protocol.ScheduleVerbs...)

// Argument separator and placeholders of argv.
const (
	argSep      = 0x1E
	placeholder = 0x1D
)

// fuzzQueue is the queue the setup prepares and the placeholders name.
const fuzzQueue = "f"

// fuzzer is one server with the module and a connection to it.
type fuzzer struct {
	srv      *valkeyserver.Server
	conn     *valkeyserver.Conn
	outcomes map[string]int  // replies by class, for the log of TestFuzzRandom
	commands []string        // fuzzCommands, then the module's other commands
	present  map[string]bool // registered on the server
	readonly map[string]bool // flagged readonly
}

// newFuzzer starts the server (skipping when the module cannot be built)
// and reads the module's command table.
func newFuzzer(t testing.TB) *fuzzer {
	module := valkeytest.ModulePath(t)
	s := valkeytest.Start(t, valkeyserver.Options{Module: module, Debug: true})
	fz := &fuzzer{srv: s, conn: dial(t, s), present: map[string]bool{}, readonly: map[string]bool{}}
	t.Cleanup(func() { fz.conn.Close() })
	v, err := fz.do("COMMAND", "LIST", "FILTERBY", "MODULE", "trafikey")
	if err != nil {
		t.Fatalf("COMMAND LIST: %v", err)
	}
	var extra []string
	list, _ := v.([]any)
	for _, c := range list {
		name := strings.ToUpper(fmt.Sprint(c))
		fz.present[name] = true
		if !slices.Contains(fuzzCommands, name) {
			extra = append(extra, name)
		}
		info, err := fz.do("COMMAND", "INFO", name)
		if entries, ok := info.([]any); err == nil && ok && len(entries) == 1 {
			if e, ok := entries[0].([]any); ok && len(e) > 2 {
				flags, _ := e[2].([]any)
				fz.readonly[name] = slices.Contains(flags, any("readonly"))
			}
		}
	}
	slices.Sort(extra)
	fz.commands = append(slices.Clone(fuzzCommands), extra...)
	var missing, planned []string
	for _, c := range fuzzCommands {
		switch {
		case fz.present[c]:
		case strings.HasPrefix(c, "TRA."):
			planned = append(planned, c)
		default:
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		// A job-core verb the module lost is a failure, never a skip.
		t.Fatalf("not registered by the module: %s", strings.Join(missing, " "))
	}
	if len(planned) > 0 {
		t.Logf("planned, not registered yet, their inputs are skipped: %s", strings.Join(planned, " "))
	}
	return fz
}

func (fz *fuzzer) do(args ...string) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return fz.conn.Do(ctx, args...)
}

// command decodes an input into the command line it sends.
func (fz *fuzzer) command(cmd uint8, argv []byte) []string {
	name := fz.commands[int(cmd)%len(fz.commands)]
	line := []string{name}
	if len(argv) == 0 {
		return line
	}
	var v *protocol.Verb
	for _, jv := range protocol.All {
		if jv.Command == name {
			v = jv
		}
	}
	k := protocol.KeysOf(fuzzQueue)
	for _, a := range strings.Split(string(argv), string(rune(argSep))) {
		switch {
		case a == string([]byte{placeholder, 'N'}) && v != nil:
			line = append(line, strconv.Itoa(v.NumKeys()))
		case a == string([]byte{placeholder, 'K'}) && v != nil:
			line = append(line, v.KeyNames(k)...)
		case a == string([]byte{placeholder, 'B'}):
			line = append(line, k.Base)
		default:
			line = append(line, a)
		}
	}
	if name == protocol.Claim.Command {
		clampBlock(line)
	}
	return line
}

// maxFuzzBlockMS bounds the block time of the CLAIMs the fuzz sends: a
// native CLAIM that finds nothing blocks that long, and a valid block time
// of up to a day would hold the input past its timeout. A larger valid
// value is sent as this one; an invalid one as it is, to be refused.
const maxFuzzBlockMS = 5

// clampBlock lowers CLAIM's block_ms in line (EMQ.CLAIM 5 <keys> lease count
// ext block) to maxFuzzBlockMS when it is a valid value above it.
func clampBlock(line []string) {
	const at = 2 + 5 + 3
	if len(line) <= at || line[1] != "5" {
		return
	}
	b := line[at]
	if n, err := strconv.ParseInt(b, 10, 64); err == nil && n > maxFuzzBlockMS && n <= protocol.MaxBlockMS && strconv.FormatInt(n, 10) == b {
		line[at] = strconv.Itoa(maxFuzzBlockMS)
	}
}

// Setup bits.
const (
	setupInstalled = 1 << iota // version 1
	setupJobs                  // jobs 1-5: pending, pending (priority), delayed, active, dead; logs; a unique key; schedules s1 (due), s2 (paused), s3 (broken)
	setupWrongType             // pending a string, job 2 a list, stats a zset, scheddue a string
	setupEdges                 // seq and every counter at int64 max, att of job 4 at the 15-digit edge
	setupPaused                // meta paused 1
	setupForeign               // members that are not ids, a row without att, version 3 on queue "g"
	setupLanes                 // jobs 7-9 in lanes a and b (7 active in a), a capped at 2, b paused (meta lanesets 2), a rate log entry; a flow: parent 10 waiting for 11 (active, policy continue) and 12 (pending); retention on; meta rowopts 1, as their ADDs leave it (every row field read)
	setupEvents                // job events on: meta events_max and every row's ev at 2, one entry in the events stream; without setupLanes meta rowopts 0 (the ev are not read by COMPLETE, COMPLETEMANY, CLAIM)
)

// setup is the commands that prepare queue f for the bits of setup,
// starting from an empty dataset.
func setup(bits uint8) [][]string {
	k := protocol.KeysOf(fuzzQueue)
	out := [][]string{{"FLUSHALL", "SYNC"}}
	if bits&setupInstalled != 0 {
		out = append(out, []string{"SET", k.Version, protocol.WireString})
	}
	if bits&setupJobs != 0 {
		row := func(id, state, att string) []string {
			return []string{"HSET", k.Job(id), "data", "d" + id, "state", state, "att", att, "max", "3",
				"prio", "0", "bo", "exponential:10", "at", "1700000000000"}
		}
		out = append(out,
			[]string{"HSET", k.Meta, "seq", "5"},
			[]string{"HSET", k.Stats, "added", "5", "failed", "1", "dead", "1"},
			row("1", "pending", "0"), row("2", "pending", "0"), row("3", "delayed", "0"), row("4", "active", "1"), row("5", "dead", "3"),
			[]string{"HSET", k.Job("2"), "prio", "7", "uniq", "u"},
			[]string{"HSET", k.Job("5"), "err", "boom"},
			[]string{"ZADD", k.Pending, strconv.FormatInt(protocol.PendingScore(0, 1), 10), "1", strconv.FormatInt(protocol.PendingScore(7, 2), 10), "2"},
			[]string{"ZADD", k.Delayed, "1", "3"},
			[]string{"ZADD", k.Active, "99999999999999", "4"},
			[]string{"ZADD", k.Dead, "1700000000000", "5"},
			[]string{"RPUSH", k.Logs("4"), "l1", "l2"},
			[]string{"SET", k.Unique("u"), "2", "PX", "3600000"},
			[]string{"RPUSH", k.Signal, "1"},
		)
		// schedules: s1 due (every second, last 1000), s2 paused, s3
		// with a definition that does not decode
		def := protocol.EncodeList([]string{"every", "1000", "", "0", "0", "0", "0", "60000", "1", "d", "0", "3", "fixed", "0", "", "0", "0"})
		schedules := k.Fixed(protocol.SuffixSchedules)
		out = append(out,
			[]string{"HSET", schedules, "d:s1", def, "s:s1", "1 0 1000 1000 0", "d:s2", def, "s:s2", "2 0 1000 0 1", "d:s3", "5:every", "s:s3", "1 0 1000 1000 0"},
			[]string{"ZADD", k.Fixed(protocol.SuffixScheduleDue), "1000", "s1", "1000", "s3"},
			[]string{"ZADD", k.Fixed(protocol.SuffixScheduleIDs), "0", "s1", "0", "s2", "0", "s3"},
		)
	}
	if bits&setupEdges != 0 {
		max := "9223372036854775807"
		out = append(out, []string{"HSET", k.Meta, "seq", "4398046511103"})
		for _, c := range protocol.StatsCounters {
			out = append(out, []string{"HSET", k.Stats, c, max})
		}
		out = append(out, []string{"HSET", k.Job("4"), "att", "999999999999999"})
	}
	if bits&setupPaused != 0 {
		out = append(out, []string{"HSET", k.Meta, "paused", "1"})
	}
	if bits&setupForeign != 0 {
		g := protocol.KeysOf("g")
		out = append(out,
			[]string{"ZADD", k.Pending, "0", "abc", "1", "01"},
			[]string{"ZADD", k.Active, "0", "0", "1", "6"},
			[]string{"ZADD", k.Delayed, "0", "4398046511104"},
			[]string{"HSET", k.Job("6"), "data", "no att"},
			[]string{"SET", g.Version, "3"},
		)
	}
	if bits&setupLanes != 0 {
		row := func(id, state, att, lane string) []string {
			return []string{"HSET", k.Job(id), "data", "d" + id, "state", state, "att", att, "max", "3",
				"prio", "0", "bo", "fixed:0", "at", "1700000000000", "lane", lane}
		}
		info, turns, lanes := k.Fixed(protocol.SuffixLaneInfo), k.Fixed(protocol.SuffixTurns), k.Fixed(protocol.SuffixLanes)
		out = append(out,
			[]string{"HSET", k.Meta, "seq", "9", protocol.MetaTurn, "4", protocol.MetaPendingTurn, "2", protocol.MetaLaneWait, "2",
				protocol.MetaRateMax, "100", protocol.MetaRateWindow, "60000", protocol.MetaLaneSets, "2"},
			row("7", "active", "1", "a"), row("8", "pending", "0", "a"), row("9", "pending", "0", "b"),
			[]string{"ZADD", k.Active, "99999999999999", "7"},
			[]string{"ZADD", k.Lane("a"), strconv.FormatInt(protocol.PendingScore(0, 8), 10), "8"},
			[]string{"ZADD", k.Lane("b"), strconv.FormatInt(protocol.PendingScore(0, 9), 10), "9"},
			[]string{"HSET", info, protocol.FieldLaneActive + "a", "1", protocol.FieldLaneCap + "a", "2", protocol.FieldLanePaused + "b", "1"},
			[]string{"ZADD", turns, "3", "a"},
			[]string{"ZADD", lanes, "0", "a", "0", "b"},
			// a live rate log entry of 7 claims, ahead of any clock, so
			// that it stays in the window whenever the input runs
			[]string{"ZADD", k.Fixed(protocol.SuffixRate), "99999999999999", "000000000000000:7"},
		)
	}
	if bits&setupLanes != 0 {
		// and a flow, with retention on
		row := func(id, state, att string, more ...string) []string {
			return append([]string{"HSET", k.Job(id), "data", "d" + id, "state", state, "att", att, "max", "3",
				"prio", "0", "bo", "fixed:0", "at", "1700000000000"}, more...)
		}
		out = append(out,
			// meta rowopts 1, as an ADD of such rows leaves it
			[]string{"HSET", k.Meta, "seq", "12", protocol.MetaKeepDone, "3600000", protocol.MetaKeepDoneMax, "10", protocol.MetaRowOpts, protocol.RowOptsOn},
			row("10", "waiting", "0", "deps", "2", "keep", "1", "wait", "60000"),
			row("11", "active", "1", "parent", "10", "onfail", "continue", "keep", "1"),
			row("12", "pending", "0", "parent", "10", "wait", "60000"),
			[]string{"ZADD", k.Fixed(protocol.SuffixWaiting), "10", "10"},
			[]string{"ZADD", k.Kids("10"), "11", "11", "12", "12"},
			[]string{"ZADD", k.Active, "99999999999999", "11"},
			[]string{"ZADD", k.Pending, strconv.FormatInt(protocol.PendingScore(0, 12), 10), "12"},
			[]string{"HSET", k.Results("10"), "9", "old"},
		)
	}
	if bits&setupEvents != 0 {
		out = append(out,
			[]string{"HSET", k.Meta, protocol.MetaEventsMax, "2"},
			[]string{"XADD", k.Fixed(protocol.SuffixEvents), "1-1", "brand", "emq", "event", "added", "id", "1"},
		)
		if bits&setupLanes == 0 {
			// events planted on rows meta says have none
			out = append(out, []string{"HSET", k.Meta, protocol.MetaRowOpts, protocol.RowOptsOff})
		}
		for id := 1; id <= 12; id++ {
			out = append(out, []string{"EVAL", "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'ev', '2') end",
				"1", k.Job(strconv.Itoa(id))})
		}
	}
	if bits&setupWrongType != 0 {
		out = append(out,
			[]string{"DEL", k.Pending, k.Job("2"), k.Stats},
			[]string{"SET", k.Pending, "x"},
			[]string{"RPUSH", k.Job("2"), "x"},
			[]string{"ZADD", k.Stats, "1", "x"},
			[]string{"SET", k.Fixed(protocol.SuffixScheduleDue), "x"},
		)
	}
	return out
}

// check runs one input and fails t when the server dies or a refused (or
// read-only) call changed the dataset. It returns false, having sent
// nothing, when the input's command is not registered.
func (fz *fuzzer) check(t testing.TB, cmd, bits uint8, argv []byte) bool {
	t.Helper()
	line := fz.command(cmd, argv)
	if !fz.present[line[0]] {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	prep := append(setup(bits), []string{"DEBUG", "DIGEST"})
	replies, err := fz.conn.DoMulti(ctx, prep...)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	for i, r := range replies {
		if re, ok := r.(valkeyserver.ReplyError); ok {
			t.Fatalf("setup %q: %v", prep[i], re)
		}
	}
	before := fmt.Sprint(replies[len(replies)-1])
	reply, err := fz.conn.Do(ctx, line...)
	var re valkeyserver.ReplyError
	refused := errors.As(err, &re)
	if err != nil && !refused {
		fz.dead(t, line, err)
	}
	if fz.outcomes != nil {
		class := "ok"
		if refused {
			class = string(re)
			if i := strings.Index(class, " bad "); i >= 0 && strings.HasPrefix(class, "ERR EMQ ") {
				class = "ERR EMQ <verb> bad <argument>"
			}
		}
		fz.outcomes[line[0]+" "+class]++
	}
	after, err := fz.conn.DoMulti(ctx, []string{"PING"}, []string{"DEBUG", "DIGEST"})
	if err != nil || after[0] != "PONG" {
		fz.dead(t, line, fmt.Errorf("PING: %v %v", after, err))
	}
	if !fz.srv.Running() || syscall.Kill(fz.srv.PID(), 0) != nil {
		fz.dead(t, line, errors.New("the server process is gone"))
	}
	if digest := fmt.Sprint(after[1]); digest != before && (refused || fz.readonly[line[0]]) {
		what := "refused with " + strconv.Quote(string(re))
		if !refused {
			what = "read-only, replied " + shorten(fmt.Sprintf("%#v", reply))
		}
		t.Fatalf("%s, but DEBUG DIGEST changed (setup %#x): %s", what, bits, quoteLine(line))
	}
	return true
}

// dead fails t for a server that did not live through line.
func (fz *fuzzer) dead(t testing.TB, line []string, err error) {
	t.Helper()
	t.Fatalf("the server did not survive %s: %v\nlog:\n%s", quoteLine(line), err, fz.srv.LogTail(30))
}

func quoteLine(line []string) string {
	parts := make([]string, len(line))
	for i, a := range line {
		if len(a) > 60 && !repeated(a) {
			a = a[:60] + "…"
		}
		parts[i] = quote(a)
	}
	return strings.Join(parts, " ")
}

// FuzzEMQ is the fuzz target; see the comment at the top of this file.
func FuzzEMQ(f *testing.F) {
	fz := newFuzzer(f)
	f.Fuzz(func(t *testing.T, cmd, bits uint8, argv []byte) {
		if !fz.check(t, cmd, bits, argv) {
			t.Skip("the command is not registered")
		}
	})
}

// fuzzRandomInputs is the size of TestFuzzRandom's pass in CI, and
// fuzzRandomShort with -short; set TRAFIKEY_FUZZ_N for another.
const (
	fuzzRandomInputs = 20000
	fuzzRandomShort  = 2000
)

// TestFuzzRandom is a bounded random pass of the fuzz check with a fixed
// seed: inputs built from the protocol's own edges (see randomInput), so
// that they reach past the shape checks far more often than blind bytes.
func TestFuzzRandom(t *testing.T) {
	fz := newFuzzer(t)
	n := fuzzRandomInputs
	if testing.Short() {
		n = fuzzRandomShort
		t.Logf("-short: %d inputs; the full run (go test ./verify, as scripts/test.sh runs it) sends %d", n, fuzzRandomInputs)
	}
	if s := os.Getenv("TRAFIKEY_FUZZ_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("TRAFIKEY_FUZZ_N=%q: want a positive number", s)
		}
	}
	if testing.Verbose() {
		fz.outcomes = map[string]int{}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	ran := 0
	for range n {
		cmd, bits, argv := randomInput(rng)
		if fz.check(t, cmd, bits, argv) {
			ran++
		}
	}
	t.Logf("%d inputs, %d of registered commands, in %v", n, ran, time.Since(start).Round(time.Millisecond))
	if fz.outcomes != nil {
		var b strings.Builder
		for _, k := range sortedKeysOf(fz.outcomes) {
			fmt.Fprintf(&b, "\n  %6d  %s", fz.outcomes[k], k)
		}
		t.Logf("replies by command and class:%s", b.String())
	}
}

// fuzzWords are the arguments randomInput draws from: the placeholders,
// numkeys spellings, domain edges, ids, tokens and binary texts.
var fuzzWords = []string{
	string([]byte{placeholder, 'N'}), string([]byte{placeholder, 'K'}), string([]byte{placeholder, 'B'}),
	"0", "1", "2", "3", "4", "5", "6", "7", "8", "03", "+3", " 3", "3 ", "-1", "-0", "", "99999999999999999999",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "1000", "1001", "1000000", "1000001",
	"86400000", "86400001", "315360000000", "315360000001", "4398046511103", "4398046511104", "999999999999999",
	"1000000000000000", "10000", "10001", "fixed", "exponential", "x", "abc", "1.5", "1e3", "0x10",
	"\x00", "a\x00b", "\xff\xfe", "\r\n", "emq:{f}:", "emq:{f}", "emq:{}:", "emq:{f}:version", "emq:{g}:",
	"emq:{f}:pending", "emq:{f}:job:1", strings.Repeat("k", 513), strings.Repeat("e", protocol.MaxText+1),
}

// randomInput draws one input: mostly a valid call of the verb with up to
// two mutations (an argument replaced by a word, dropped, or a word
// inserted), else the verb's head followed by words, else raw bytes.
func randomInput(rng *rand.Rand) (uint8, uint8, []byte) {
	cmd := uint8(rng.IntN(len(fuzzCommands)))
	bits := uint8(rng.IntN(256))
	if rng.IntN(3) > 0 {
		bits |= setupInstalled | setupJobs
	}
	word := func() string { return fuzzWords[rng.IntN(len(fuzzWords))] }
	head := []string{string([]byte{placeholder, 'N'}), string([]byte{placeholder, 'K'})}
	var args []string
	switch r := rng.IntN(20); {
	case r < 12:
		args = append(head, fuzzValid[strings.ToLower(strings.TrimPrefix(fuzzCommands[cmd], "EMQ."))]...)
		for range rng.IntN(3) {
			i := rng.IntN(len(args) + 1)
			switch op := rng.IntN(10); {
			case op < 7:
				if i < len(args) {
					args[i] = word()
				}
			case op < 8:
				if i < len(args) {
					args = slices.Delete(args, i, i+1)
				}
			default:
				args = slices.Insert(args, i, word())
			}
		}
	case r < 17:
		args = head
		for range rng.IntN(12) {
			args = append(args, word())
		}
	default:
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return cmd, bits, b
	}
	return cmd, bits, []byte(strings.Join(args, string(rune(argSep))))
}

// fuzzValid is a valid ARGV of each verb on a queue prepared with
// setupInstalled|setupJobs.
var fuzzValid = map[string][]string{
	protocol.Install.Name:  nil,
	protocol.Add.Name:      {"2", "0", "d", "0", "0", "3", "fixed", "0", "", "0", "e", "5", "10", "1", "exponential", "1", "u2", "1000"},
	protocol.Claim.Name:    {"30000", "2"},
	protocol.Extend.Name:   {"4", "1", "30000"},
	protocol.Complete.Name: {"4", "1", "result"},
	// job 4 completes, 1 is pending (token 0: not active), 9 is gone, 2's
	// token is stale, 5 is dead (token 3: not active)
	protocol.CompleteMany.Name: {"5", "4", "1", "r4", "1", "0", "", "9", "1", "", "2", "7", "", "5", "3", ""},
	protocol.Fail.Name:         {"4", "1", "1", "boom"},
	protocol.Recover.Name:      {"10"},
	protocol.Promote.Name:      {"10"},
	protocol.Pause.Name:        nil,
	protocol.Resume.Name:       nil,
	protocol.Remove.Name:       {"1", "0"},
	protocol.Requeue.Name:      {"5"},
	protocol.Log.Name:          {"4", "1", "line", "10"},
	protocol.Progress.Name:     {"4", "1", "50"},
	protocol.Stats.Name:        nil,
	protocol.Inspect.Name:      {"4"},
	protocol.LaneCap.Name:      {"a", "1"},
	protocol.LanePause.Name:    {"a"},
	protocol.LaneResume.Name:   {"b"},
	protocol.Lane.Name:         {"a"},
	protocol.Lanes.Name:        {"", "10"},
	protocol.Rate.Name:         {"10", "1000"},
	protocol.Retain.Name:       {"3600000", "10", "0", "100", "0"},
	protocol.Trim.Name:         {"100"},
	protocol.Children.Name:     {"10", "0", "10"},
	protocol.Append.Name:       {"2", "1-1", "1", "f", "v", "1-2", "2", "g", "w", "\x00", "\xff"},
	protocol.Publish.Name:      {"added", "1", "lane", "a"},
	protocol.FailuresIncr.Name: {"60000"},
	protocol.Events.Name:       {"100"},
	// the operations verbs: a page of dead jobs, the open dead filter, all
	// delayed, the delayed job 3
	protocol.Jobs.Name:        {"dead", "", "0", "", "", "10", "16"},
	protocol.RequeueDead.Name: {"10", "", "", "0", "9007199254740991", "", ""},
	protocol.RemoveDead.Name:  {"10", "", "", "0", "9007199254740991", "", ""},
	protocol.PromoteAll.Name:  {"10"},
	protocol.Retry.Name:       {"3"},
	// job 3 is delayed: to a due time an hour on; job 4 is active
	protocol.Reschedule.Name: {"3", "0", "3600000"},
	protocol.Cancel.Name:     {"4"},
	// s1 (setupJobs) is due with last 1000: one occurrence at 2000
	protocol.ScheduleSet.Name:    {"s4", "cron", "*/5 * * * * *", "Europe/Paris", "1000", "0", "0", "3", "60000", "1", "d", "5", "3", "fixed", "10", "u9", "1000", "1", "lane", "a"},
	protocol.SchedulePause.Name:  {"s1"},
	protocol.ScheduleResume.Name: {"s2"},
	protocol.ScheduleRemove.Name: {"s1"},
	protocol.ScheduleList.Name:   {"", "10"},
	protocol.ScheduleDue.Name:    {"10"},
	protocol.ScheduleFire.Name:   {"s1", "1", "1000", "2000", "3000", "1", "2000", "0"},
}

// A fuzzSeed is one named input of the seed corpus.
type fuzzSeed struct {
	name      string
	cmd, bits uint8
	args      []string
}

// fuzzSeeds are the seed corpus: a valid call of every verb, each
// malformed shape of numkeys, layouts, values out of domain, and binary
// payloads, each on a prepared queue.
func fuzzSeeds() []fuzzSeed {
	idx := func(name string) uint8 { return uint8(slices.Index(fuzzCommands, name)) }
	N, K, B := string([]byte{placeholder, 'N'}), string([]byte{placeholder, 'K'}), string([]byte{placeholder, 'B'})
	full := uint8(setupInstalled | setupJobs)
	seeds := []fuzzSeed{
		{"version", idx(protocol.VersionCommand), 0, nil},
		{"version-extra-arg", idx(protocol.VersionCommand), 0, []string{"x"}},
		{"tra-setbit", idx("TRA.SETBIT"), 0, []string{"emq:{f}:bits", "7", "1"}},
		{"tra-getbit", idx("TRA.GETBIT"), 0, []string{"emq:{f}:bits", "4294967296"}},
	}
	for _, v := range protocol.All {
		c := idx(v.Command)
		args := fuzzValid[v.Name]
		n := strconv.Itoa(v.NumKeys())
		keys := v.KeyNames(protocol.KeysOf(fuzzQueue))
		add := func(name string, bits uint8, a ...string) {
			seeds = append(seeds, fuzzSeed{v.Name + "-" + name, c, bits, a})
		}
		add("valid", full, append([]string{N, K}, args...)...)
		add("valid-wrongtype", full|setupWrongType, append([]string{N, K}, args...)...)
		add("valid-edges", full|setupEdges, append([]string{N, K}, args...)...)
		add("valid-paused-foreign", full|setupPaused|setupForeign, append([]string{N, K}, args...)...)
		add("valid-lanes", full|setupLanes, append([]string{N, K}, args...)...)
		add("valid-events", full|setupEvents, append([]string{N, K}, args...)...)
		add("valid-events-lanes", full|setupLanes|setupEvents, append([]string{N, K}, args...)...)
		add("not-installed", setupJobs, append([]string{N, K}, args...)...)
		for _, spelled := range []string{"0" + n, "+" + n, " " + n, "-1", "99999999999999999999", "", "0"} {
			add("numkeys-"+strconv.Quote(spelled), full, append([]string{spelled, K}, args...)...)
		}
		add("no-numkeys", full)
		add("keys-missing", full, N)
		wrong := slices.Clone(keys)
		wrong[len(wrong)-1] = "emq:{g}:" + strings.TrimPrefix(wrong[len(wrong)-1], "emq:{f}:")
		add("layout-other-queue", full, append(append([]string{N}, wrong...), args...)...)
		add("layout-bad-base", full, append(append([]string{N, "emq:{f}"}, keys[1:]...), args...)...)
		add("argv-extra", full, append([]string{N, K}, append(slices.Clone(args), "x")...)...)
		if len(args) > 0 {
			add("argv-short", full, append([]string{N, K}, args[:len(args)-1]...)...)
			bin := slices.Clone(args)
			bin[len(bin)-1] = "\x00\xff\xfe\r\n" + strings.Repeat("\x00", 3)
			add("binary-last-arg", full, append([]string{N, K}, bin...)...)
			big := slices.Clone(args)
			big[0] = "99999999999999999999"
			add("first-arg-huge", full, append([]string{N, K}, big...)...)
		}
	}
	seeds = append(seeds, fuzzSeed{"add-binary-unique", idx(protocol.Add.Command), full,
		[]string{N, K, "1", "0", "\x00\xff", "0", "0", "1", "fixed", "0", "\x00{f}\xff", "1000"}})
	lane := func(name string, bits uint8, args ...string) {
		seeds = append(seeds, fuzzSeed{"add-lane-" + name, idx(protocol.Add.Command), bits, append([]string{N, K}, args...)})
	}
	lane("binary", full|setupLanes, "2", "1", "lane", "d", "0", "0", "3", "fixed", "0", "", "0", "\x00{x}:\xff",
		"e", "0", "0", "3", "fixed", "0", "", "0", "")
	lane("options-9", full, "1", "9", "d", "0", "0", "3", "fixed", "0", "", "0")
	lane("option-repeated", full, "1", "2", "lane", "lane", "d", "0", "0", "3", "fixed", "0", "", "0", "a", "b")
	lane("option-unknown", full, "1", "1", "parent", "d", "0", "0", "3", "fixed", "0", "", "0", "7")
	lane("too-long", full, "1", "1", "lane", "d", "0", "0", "3", "fixed", "0", "", "0", strings.Repeat("l", protocol.MaxLaneName+1))
	lane("delayed", full|setupLanes, "1", "1", "lane", "d", "0", "5", "3", "fixed", "0", "", "0", "a")
	flow := func(name string, cmd *protocol.Verb, bits uint8, args ...string) {
		seeds = append(seeds, fuzzSeed{"flow-" + name, idx(cmd.Command), bits, append([]string{N, K}, args...)})
	}
	flowJob := func(parent, onfail, wait string) []string {
		return []string{"d", "0", "0", "3", "fixed", "0", "", "0", parent, onfail, wait}
	}
	tree := []string{"3", "3", "parent", "onfail", "wait"}
	tree = append(tree, flowJob("", "", "60000")...)
	tree = append(tree, flowJob("1", "ignore", "")...)
	tree = append(tree, flowJob("2", "continue", "1")...)
	flow("add-tree", protocol.Add, full, tree...)
	flow("add-parent-forward", protocol.Add, full, "2", "1", "parent", "d", "0", "0", "3", "fixed", "0", "", "0", "2", "d", "0", "0", "3", "fixed", "0", "", "0", "")
	flow("complete-child", protocol.Complete, full|setupLanes, "11", "1", "\x00result\xff")
	flow("complete-too-large", protocol.Complete, full|setupLanes, "11", "1", strings.Repeat("r", protocol.DefaultResult+1))
	flow("fail-child", protocol.Fail, full|setupLanes, "11", "1", "0", "boom")
	flow("remove-parent", protocol.Remove, full|setupLanes, "10", "0")
	flow("remove-cascade", protocol.Remove, full|setupLanes, "10", "1")
	flow("trim-retained", protocol.Trim, full|setupLanes, "1000")
	seeds = append(seeds, fuzzSeed{"claim-lanes-rate", idx(protocol.Claim.Command), full | setupLanes, []string{N, K, "30000", "1000"}})
	seeds = append(seeds, fuzzSeed{"lanes-after-binary", idx(protocol.Lanes.Command), full | setupLanes, []string{N, K, "\x00\xff", "1000"}})
	seeds = append(seeds, fuzzSeed{"add-base-only", idx(protocol.Add.Command), full, []string{"1", B}})
	many := func(name string, bits uint8, args ...string) {
		seeds = append(seeds, fuzzSeed{"completemany-" + name, idx(protocol.CompleteMany.Command), bits, append([]string{N, K}, args...)})
	}
	many("argv-empty", full)
	many("count-0-alone", full, "0")
	many("count-1001", full, "1001", "4", "1")
	many("count-short", full, "2", "4", "1")
	many("repeated-id", full, "3", "4", "1", "9", "1", "4", "1")
	many("bad-id-after-valid", full, "2", "4", "1", "01", "1")
	many("binary-tokens", full, "3", "4", "\x00\xff", "1", "\r\n", "2", "")
	many("not-active-unique", full, "2", "4", "1", "2", "0")
	thousand := []string{"1000"}
	for i := range protocol.MaxCount {
		thousand = append(thousand, strconv.Itoa(i+1), "1")
	}
	fire := func(name string, bits uint8, args ...string) {
		seeds = append(seeds, fuzzSeed{"schedule-fire-" + name, idx(protocol.ScheduleFire.Command), bits, append([]string{N, K}, args...)})
	}
	fire("stale", full, "s1", "2", "1000", "2000", "0", "0")
	fire("broken", full, "s3", "1", "1000", "2000", "0", "0")
	fire("not-due", full, "s1", "1", "1000", "253402300799999", "0", "0")
	fire("many", full|setupLanes|setupEvents, "s1", "1", "1000", "5000", "6000", "4", "2000", "0", "3000", "0", "4000", "0", "5000", "0")
	fire("edges", full|setupEdges, "s1", "1", "1000", "2000", "3000", "1", "2000", "0")
	seeds = append(seeds, fuzzSeed{"schedule-set-binary", idx(protocol.ScheduleSet.Command), full,
		[]string{N, K, "s1", "every", "1000", "", "0", "0", "0", "0", "0", "0", "\x00\xff", "0", "1", "fixed", "0", "\x00{f}", "1000", "2", "wait", "1", "lane", "\x00{x}:"}})
	many("thousand", full, thousand...)
	many("thousand-edges", full|setupEdges|setupForeign, thousand...)
	ops := func(name string, v *protocol.Verb, bits uint8, args ...string) {
		seeds = append(seeds, fuzzSeed{"ops-" + name, idx(v.Command), bits, append([]string{N, K}, args...)})
	}
	maxScore := strconv.FormatInt(protocol.MaxScore, 10)
	for _, state := range protocol.JobsStates {
		ops("jobs-"+state+"-newest", protocol.Jobs, full|setupLanes|setupForeign, state, "", "1", "", "", "1000", "1024")
	}
	ops("jobs-lane", protocol.Jobs, full|setupLanes, "pending", "a", "0", "", "", "1", "0")
	ops("jobs-cursor-binary", protocol.Jobs, full|setupForeign, "pending", "", "0", "0", "\x00\xff", "2", "1")
	ops("jobs-cursor-top", protocol.Jobs, full, "dead", "", "1", maxScore, "", "1", "1")
	ops("jobs-cursor-score-only", protocol.Jobs, full, "dead", "", "0", "", "5", "1", "1")
	ops("requeuedead-lane-error", protocol.RequeueDead, full|setupLanes|setupEvents, "1", "", "", "0", maxScore, "a", "boo")
	ops("requeuedead-cursor", protocol.RequeueDead, full|setupEdges, "1000", "0", "5", "0", maxScore, "", "")
	ops("removedead-rowless", protocol.RemoveDead, full|setupForeign|setupEvents, "1000", "", "", "0", maxScore, "", "")
	ops("removedead-window", protocol.RemoveDead, full, "1", "", "", "5", "4", "", "\x00")
	ops("promoteall-lanes", protocol.PromoteAll, full|setupLanes|setupEvents, "1000")
	ops("retry-not-delayed", protocol.Retry, full, "5")
	// the job options, CLAIM's extended rows, RESCHEDULE and CANCEL
	opts := func(name string, cmd *protocol.Verb, bits uint8, args ...string) {
		seeds = append(seeds, fuzzSeed{"handler-" + name, idx(cmd.Command), bits, append([]string{N, K}, args...)})
	}
	opts("add-options", protocol.Add, full|setupLanes, "2", "5", "headers", "kind", "timeout", "due", "lane",
		"d", "0", "0", "3", "fixed", "0", "", "0", "\x00\xff", "email", "30000", "253402300799999", "a",
		"e", "0", "0", "3", "fixed", "0", "", "0", "", "", "0", "1", "")
	opts("add-due-edge", protocol.Add, full, "1", "1", "due", "d", "0", "0", "3", "fixed", "0", "", "0", "253402300800000")
	opts("add-parent-due", protocol.Add, full, "2", "2", "due", "parent", "d", "0", "0", "3", "fixed", "0", "", "0", "5", "",
		"e", "0", "0", "3", "fixed", "0", "", "0", "", "1")
	opts("claim-ext", protocol.Claim, full|setupLanes, "30000", "1000", "1")
	opts("claim-ext-bad", protocol.Claim, full, "30000", "2", "2")
	// CLAIM's block time: a job found, and nothing found (paused)
	opts("claim-block", protocol.Claim, full|setupLanes, "30000", "1000", "0", "3")
	opts("claim-block-paused", protocol.Claim, full|setupPaused, "30000", "1", "1", "3")
	opts("claim-block-bad", protocol.Claim, full, "30000", "2", "0", "86400001")
	opts("reschedule-to-pending", protocol.Reschedule, full|setupLanes, "3", "0", "0")
	opts("reschedule-lane", protocol.Reschedule, full|setupLanes|setupEvents, "8", "0", "60000")
	opts("reschedule-due-huge", protocol.Reschedule, full, "1", "253402300800000", "0")
	opts("cancel-child", protocol.Cancel, full|setupLanes|setupEvents, "11")
	opts("cancel-lane-pending", protocol.Cancel, full|setupLanes, "8")
	opts("cancel-dead", protocol.Cancel, full, "5")
	// ext on a queue without meta jobfields: rows of att data ev max
	opts("claim-ext-plain", protocol.Claim, full|setupEdges, "30000", "1000", "1")
	// rows given events bounds by hand on a queue whose meta rowopts is 0:
	// completed and claimed as plain
	row := func(name string, cmd *protocol.Verb, args ...string) {
		seeds = append(seeds, fuzzSeed{"rowopts-" + name, idx(cmd.Command), full | setupEvents, append([]string{N, K}, args...)})
	}
	row("complete-plain", protocol.Complete, "4", "1", "")
	row("completemany-plain", protocol.CompleteMany, "1", "4", "1", "")
	row("claim-plain", protocol.Claim, "30000", "1000", "1")
	// a queue of lanes, a flow, retention and events (meta rowopts 1):
	// every row field read
	flagged := func(name string, cmd *protocol.Verb, args ...string) {
		seeds = append(seeds, fuzzSeed{"rowopts-" + name, idx(cmd.Command), full | setupLanes | setupEvents, append([]string{N, K}, args...)})
	}
	flagged("completemany-flagged", protocol.CompleteMany, "2", "7", "1", "", "11", "1", "r")
	flagged("claim-flagged", protocol.Claim, "30000", "1000")
	return seeds
}

// encode is a seed's argv.
func (s fuzzSeed) encode() []byte {
	return []byte(strings.Join(s.args, string(rune(argSep))))
}

// fuzzFile is the seed's file in Go's corpus format.
func (s fuzzSeed) fuzzFile() string {
	return fmt.Sprintf("go test fuzz v1\nuint8(%d)\nuint8(%d)\n[]byte(%s)\n", s.cmd, s.bits, strconv.Quote(string(s.encode())))
}

// TestFuzzSeedFiles checks that testdata/fuzz/FuzzEMQ holds every seed of
// fuzzSeeds as written; TRAFIKEY_WRITE_FUZZ_SEEDS=1 (re)writes them.
func TestFuzzSeedFiles(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzEMQ")
	write := os.Getenv("TRAFIKEY_WRITE_FUZZ_SEEDS") == "1"
	for _, s := range fuzzSeeds() {
		path := filepath.Join(dir, "seed-"+strings.NewReplacer(`"`, "", " ", "space", "+", "plus").Replace(s.name))
		if write {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(s.fuzzFile()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != s.fuzzFile() {
			t.Errorf("%s is missing or stale (%v): run TRAFIKEY_WRITE_FUZZ_SEEDS=1 go test ./verify -run TestFuzzSeedFiles", path, err)
		}
	}
}
