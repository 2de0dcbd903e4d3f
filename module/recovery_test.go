package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// These tests drive RECOVER, PROMOTE, PAUSE, RESUME, REMOVE, REQUEUE, LOG,
// PROGRESS, STATS and INSPECT on real servers beyond the conformance suite:
// persistence with the module loaded (forks, the AOF, a shutdown on SIGTERM)
// and the caller's ACL on the keys they derive from the base.

// verbQueue calls the job-core verbs on one queue of a server.
type verbQueue struct {
	t *testing.T
	s *valkeyserver.Server
	k protocol.Keys
	// conn, when set, is the connection the verbs run on (an ACL user's).
	conn *valkeyserver.Conn
}

func newVerbQueue(t *testing.T, s *valkeyserver.Server, name string) *verbQueue {
	return &verbQueue{t: t, s: s, k: protocol.KeysOf(name)}
}

// args is the command line of verb v on the queue's declared keys.
func (q *verbQueue) args(v *protocol.Verb, argv ...string) []string {
	keys := v.KeyNames(q.k)
	out := append([]string{v.Command, strconv.Itoa(len(keys))}, keys...)
	return append(out, argv...)
}

// try runs verb v and returns its reply or its error.
func (q *verbQueue) try(v *protocol.Verb, argv ...string) (any, error) {
	q.t.Helper()
	if q.conn != nil {
		return q.conn.Do(ctxT(q.t), q.args(v, argv...)...)
	}
	return q.s.Do(ctxT(q.t), q.args(v, argv...)...)
}

// do runs verb v and fails the test on an error reply.
func (q *verbQueue) do(v *protocol.Verb, argv ...string) any {
	q.t.Helper()
	r, err := q.try(v, argv...)
	if err != nil {
		q.t.Fatalf("%s %q: %v", v.Command, argv, err)
	}
	return r
}

// refuse runs verb v, requires the error reply want, and requires that the
// server's dataset did not change.
func (q *verbQueue) refuse(want string, v *protocol.Verb, argv ...string) {
	q.t.Helper()
	before := valkeytest.Digest(q.t, q.s)
	_, err := q.try(v, argv...)
	var re valkeyserver.ReplyError
	if !errors.As(err, &re) || string(re) != want {
		q.t.Fatalf("%s %q: %v, want %q", v.Command, argv, err, want)
	}
	if after := valkeytest.Digest(q.t, q.s); after != before {
		q.t.Fatalf("%s %q was refused but the dataset changed", v.Command, argv)
	}
}

// add adds jobs given as (data, delay ms, max attempts) and returns their ids.
func (q *verbQueue) add(jobs ...[3]string) []string {
	q.t.Helper()
	argv := []string{strconv.Itoa(len(jobs)), "0"}
	for _, j := range jobs {
		argv = append(argv, j[0], "0", j[1], j[2], "fixed", "0", "", "0")
	}
	var ids []string
	for _, id := range q.do(protocol.Add, argv...).([]any) {
		ids = append(ids, id.(string))
	}
	return ids
}

// claim claims up to n jobs with a lease of ms and returns [id, token] pairs.
func (q *verbQueue) claim(ms, n int) [][2]string {
	q.t.Helper()
	var out [][2]string
	for _, e := range q.do(protocol.Claim, strconv.Itoa(ms), strconv.Itoa(n)).([]any) {
		j := e.([]any)
		out = append(out, [2]string{j[0].(string), strconv.FormatInt(j[2].(int64), 10)})
	}
	return out
}

// recoveryWorkload runs every verb of this file on queue name, leaving jobs in
// every set: pending, delayed, active, dead, with logs, progress and
// counters.
func recoveryWorkload(t *testing.T, s *valkeyserver.Server, name string) *verbQueue {
	t.Helper()
	q := newVerbQueue(t, s, name)
	q.do(protocol.Install)
	q.add([3]string{"a", "0", "1"}, [3]string{"b", "0", "3"}, [3]string{"c", "0", "3"}, [3]string{"d", "0", "3"})
	q.add([3]string{"later", "60000", "3"}, [3]string{"soon", "1", "3"}, [3]string{"soon2", "1", "3"})
	short := q.claim(1, 2) // a (one attempt) and b: their leases expire at once
	time.Sleep(10 * time.Millisecond)
	if got := flat(q.do(protocol.Recover, "10")); got != "1 1" {
		t.Fatalf("RECOVER: %s, want 1 1", got)
	}
	if got := q.do(protocol.Promote, "10"); got != int64(2) {
		t.Fatalf("PROMOTE: %#v", got)
	}
	q.do(protocol.Pause)
	q.do(protocol.Resume)
	held := q.claim(30000, 2) // b again, then c
	for i := range 5 {
		q.do(protocol.Log, held[0][0], held[0][1], "line "+strconv.Itoa(i), "3")
	}
	q.do(protocol.Progress, held[0][0], held[0][1], "\x00half\xff")
	q.do(protocol.Requeue, short[0][0]) // a, dead after its one attempt
	q.do(protocol.Remove, "4", "0")     // d, pending
	if got := flat(q.do(protocol.Stats)); !strings.Contains(got, "total_recovered 1") || !strings.Contains(got, "total_removed 1") {
		t.Fatalf("STATS: %s", got)
	}
	if got := flat(q.do(protocol.Inspect, held[0][0])); !strings.Contains(got, "logs line 2 line 3 line 4") {
		t.Fatalf("INSPECT: %s", got)
	}
	return q
}

// A workload of these verbs, then BGSAVE and BGREWRITEAOF with the module
// loaded, then a shutdown on SIGTERM: the forks succeed, the AOF holds the
// writes as their effects and no EMQ command, the server comes back to the
// same dataset, and so does a server without the module from the same AOF.
func TestRecoveryVerbsPersist(t *testing.T) {
	t.Parallel()
	s := startModule(t, valkeyserver.Options{AOF: true, Debug: true})
	recoveryWorkload(t, s, "p")
	aof := readAOF(t, s)
	if strings.Contains(strings.ToUpper(aof), "EMQ.") {
		t.Fatalf("the AOF holds an EMQ command:\n%s", aof)
	}
	for _, w := range []string{"ZREM", "ZADD", "HSET", "HINCRBY", "RPUSH", "LTRIM", "HDEL", "LPUSH", "MULTI"} {
		if !strings.Contains(aof, w) {
			t.Errorf("the AOF lacks %s", w)
		}
	}
	digest := valkeytest.Digest(t, s)

	forkBoth(t, s)
	if got := valkeytest.Digest(t, s); got != digest {
		t.Fatalf("BGSAVE and BGREWRITEAOF changed the dataset")
	}
	// the module works after the forks, and its writes land in the new AOF
	q := newVerbQueue(t, s, "p")
	q.do(protocol.Pause)
	q.do(protocol.Resume)
	digest = valkeytest.Digest(t, s)

	// SIGTERM, then the same server again: it loads its AOF
	if err := s.Restart(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := valkeytest.Digest(t, s); got != digest {
		t.Fatalf("after SIGTERM and a restart the dataset differs")
	}
	if got := flat(q.do(protocol.Stats)); !strings.Contains(got, "total_requeued 1") {
		t.Fatalf("STATS after the restart: %s", got)
	}
	digest = valkeytest.Digest(t, s)

	// the AOF loads into a server without the module to the same dataset
	dir := t.TempDir()
	copyDir(t, filepath.Join(s.Dir(), "appendonlydir"), filepath.Join(dir, "appendonlydir"))
	plain := startPlain(t, dir)
	if got := valkeytest.Digest(t, plain); got != digest {
		t.Fatalf("a server without the module loads another dataset from the AOF")
	}
}

func startPlain(t *testing.T, dir string) *valkeyserver.Server {
	t.Helper()
	return valkeytest.Start(t, valkeyserver.Options{Dir: dir, AOF: true, Debug: true})
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A user whose ACL covers the queue's declared keys but not the keys the
// verbs derive from the base (rows, logs) is refused with NOPERM before any
// derived key is touched, and nothing is written; the verbs without derived
// keys (PAUSE, RESUME, STATS) and those that find nothing to do still run.
func TestRecoveryVerbsDerivedKeyACL(t *testing.T) {
	t.Parallel()
	fixed := " ~emq:{a}:" // the base is a declared key too
	for _, suffix := range []string{protocol.SuffixVersion, protocol.SuffixMeta, protocol.SuffixStats, protocol.SuffixPending,
		protocol.SuffixDelayed, protocol.SuffixActive, protocol.SuffixDead, protocol.SuffixSignal} {
		fixed += " ~emq:{a}:" + suffix
	}
	s := startModule(t, valkeyserver.Options{Debug: true, Users: []string{
		"bob on >pw" + fixed + " +@all",                                     // no row, no logs
		"carol on >pw" + fixed + " ~emq:{a}:job:? +@all",                    // rows of one-digit ids, no logs
		"dave on >pw" + fixed + " %R~emq:{a}:job:* +@all",                   // rows and logs, read only
		"erin on >pw" + fixed + " ~emq:{a}:job:* %R~emq:{a}:unique:* +@all", // unique keys read only
	}})
	admin := newVerbQueue(t, s, "a")
	admin.do(protocol.Install)
	admin.add([3]string{"a", "0", "1"}, [3]string{"b", "0", "3"}, [3]string{"c", "1", "3"})
	claimed := admin.claim(1, 1) // job 1, one attempt: dead when recovered
	time.Sleep(10 * time.Millisecond)
	as := func(user string) *verbQueue {
		c, err := valkeyserver.Dial(ctxT(t), s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Do(ctxT(t), "AUTH", user, "pw"); err != nil {
			t.Fatal(err)
		}
		return &verbQueue{t: t, s: s, k: admin.k, conn: c}
	}
	noperm := protocol.ErrNoPerm

	bob := as("bob")
	bob.refuse(noperm, protocol.Recover, "10")
	bob.refuse(noperm, protocol.Promote, "10")
	bob.refuse(noperm, protocol.Remove, "2", "0")
	bob.refuse(noperm, protocol.Requeue, "2")
	bob.refuse(noperm, protocol.Log, claimed[0][0], claimed[0][1], "x", "10")
	bob.refuse(noperm, protocol.Progress, claimed[0][0], claimed[0][1], "x")
	bob.refuse(noperm, protocol.Inspect, "2")
	// the fence comes first: another wire is EMQWIRE, not NOPERM
	valkeytest.Do(t, s, "SET", admin.k.Version, "1")
	bob.refuse(protocol.ErrWireFound("1"), protocol.Remove, "2", "0")
	bob.refuse(protocol.ErrWireFound("1"), protocol.Inspect, "2")
	bob.refuse(protocol.ErrWireFound("1"), protocol.Recover, "10")
	valkeytest.Do(t, s, "SET", admin.k.Version, "2")
	// no derived key, or nothing due: these run
	if got := bob.do(protocol.Pause); got != int64(1) {
		t.Fatalf("PAUSE: %#v", got)
	}
	if got := bob.do(protocol.Resume); got != int64(1) {
		t.Fatalf("RESUME: %#v", got)
	}
	// STATS counts the lanes: a caller who may not read lanes is refused
	bob.refuse(noperm, protocol.Stats)

	// carol may touch job:1 but not job:1:logs
	carol := as("carol")
	carol.refuse(noperm, protocol.Log, claimed[0][0], claimed[0][1], "x", "10")
	carol.refuse(noperm, protocol.Inspect, claimed[0][0])
	carol.refuse(noperm, protocol.Remove, "2", "0")
	if got := carol.do(protocol.Progress, claimed[0][0], claimed[0][1], "p"); got != int64(1) {
		t.Fatalf("PROGRESS with the row allowed: %#v", got)
	}
	// a row carol may not touch, found only among the expired leases
	valkeytest.Do(t, s, "ZADD", admin.k.Active, "0", "10")
	valkeytest.Do(t, s, "HSET", admin.k.Job("10"), "att", "1", "max", "1")
	carol.refuse(noperm, protocol.Recover, "10")
	valkeytest.Do(t, s, "ZREM", admin.k.Active, "10")
	valkeytest.Do(t, s, "DEL", admin.k.Job("10"))

	// dave may read rows and logs but not write them
	dave := as("dave")
	if got := flat(dave.do(protocol.Inspect, "2")); !strings.HasPrefix(got, "state pending data b") {
		t.Fatalf("INSPECT read-only: %s", got)
	}
	dave.refuse(noperm, protocol.Progress, claimed[0][0], claimed[0][1], "x")
	dave.refuse(noperm, protocol.Recover, "10")
	dave.refuse(noperm, protocol.Remove, "2", "0")

	// a gone row ends REMOVE before its unique key; erin may not delete one
	erin := as("erin")
	ids := admin.add([3]string{"u", "0", "3"})
	valkeytest.Do(t, s, "HSET", admin.k.Job(ids[0]), "uniq", "k")
	valkeytest.Do(t, s, "SET", admin.k.Unique("k"), ids[0])
	erin.refuse(noperm, protocol.Remove, ids[0], "0")
	if got := erin.do(protocol.Remove, "99", "0"); got != int64(0) {
		t.Fatalf("REMOVE of a gone row: %#v", got)
	}

	// the caller with every key gets through, and the dataset moves
	if got := flat(admin.do(protocol.Recover, "10")); got != "0 1" {
		t.Fatalf("RECOVER by the admin: %s", got)
	}
}

// RECOVER, PROMOTE, PAUSE, RESUME, REMOVE, REQUEUE, LOG, PROGRESS, STATS and
// INSPECT allocate nothing in steady state: their scratch, the verdicts'
// memory and the host's are reused from one command to the next.
func TestRecoveryVerbsNoAllocations(t *testing.T) {
	t.Parallel()
	s := startDebug(t, valkeyserver.Options{})
	c, err := s.Dial(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q := newVerbQueue(t, s, "na")
	q.do(protocol.Install)
	do := func(cmds [][]string) []any {
		t.Helper()
		replies, err := c.DoMulti(ctxT(t), cmds...)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range replies {
			if re, ok := r.(valkeyserver.ReplyError); ok {
				t.Fatal(re)
			}
		}
		return replies
	}
	round := func() {
		t.Helper()
		// 40 jobs: 20 claimed with a lease that expires at once, 20 delayed
		q.add(repeatJobs(20, [3]string{"a", "0", "2"})...)
		q.add(repeatJobs(20, [3]string{"b", "1", "3"})...)
		leases := q.claim(1, 20)
		time.Sleep(5 * time.Millisecond)
		do([][]string{
			q.args(protocol.Recover, "7"), q.args(protocol.Recover, "1000"),
			q.args(protocol.Promote, "3"), q.args(protocol.Promote, "1000"),
			q.args(protocol.Pause), q.args(protocol.Pause), q.args(protocol.Resume), q.args(protocol.Resume),
			q.args(protocol.Stats),
		})
		var cmds [][]string
		for _, l := range q.claim(60000, 1000) {
			cmds = append(cmds,
				q.args(protocol.Log, l[0], l[1], "a line", "2"),
				q.args(protocol.Log, l[0], l[1], "another", "2"),
				q.args(protocol.Log, l[0], l[1], "a third", "2"),
				q.args(protocol.Progress, l[0], l[1], "half"),
				q.args(protocol.Inspect, l[0]),
				q.args(protocol.Fail, l[0], l[1], "0", "boom"),
				q.args(protocol.Requeue, l[0]),
				q.args(protocol.Remove, l[0], "0"))
		}
		for _, l := range leases {
			cmds = append(cmds, q.args(protocol.Inspect, l[0]), q.args(protocol.Remove, l[0], "0"))
		}
		do(cmds)
	}
	round()
	round()
	d := fewestAllocs(t, s, func() {
		for range 8 {
			round()
		}
	})
	t.Logf("%d heap allocations for %d rounds", d, 8)
	if d > 20 {
		t.Fatalf("%d heap allocations for 8 rounds of about 400 commands", d)
	}
}

func repeatJobs(n int, j [3]string) [][3]string {
	out := make([][3]string, n)
	for i := range out {
		out[i] = j
	}
	return out
}
