package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// These tests run the native job-core verbs (INSTALL, ADD, CLAIM, EXTEND,
// COMPLETE, COMPLETEMANY, FAIL) on real servers and check what the grammar promises
// beyond the replies, which the conformance suite holds to the Lua scripts:
// writes reach the AOF and replicas as their effects, derived keys are
// checked against the caller's ACL, CLIENT PAUSE WRITE holds a writer, and a
// refused call writes nothing.

// verbArgs is a verb's command line for queue q: the command, numkeys, the
// declared keys, then args.
func verbArgs(v *protocol.Verb, q string, args ...string) []string {
	keys := v.KeyNames(protocol.KeysOf(q))
	out := append([]string{v.Command, strconv.Itoa(len(keys))}, keys...)
	return append(out, args...)
}

// job is one job's ADD arguments: data, priority, delay, attempts, backoff,
// backoff ms, unique key, unique TTL.
func job(data string, more ...string) []string {
	j := []string{data, "0", "0", "3", protocol.BackoffFixed, "0", "", "0"}
	copy(j[1:], more)
	return j
}

// addArgs is ADD's ARGV for jobs.
func addArgs(jobs ...[]string) []string {
	out := []string{strconv.Itoa(len(jobs)), "0"}
	for _, j := range jobs {
		out = append(out, j...)
	}
	return out
}

// workload runs every native verb of part one on queue q of s, success
// paths and refusals, and returns the number of calls made.
func workload(t *testing.T, s *valkeyserver.Server, q string) int {
	t.Helper()
	calls := 0
	do := func(v *protocol.Verb, args ...string) any {
		t.Helper()
		calls++
		return valkeytest.Do(t, s, verbArgs(v, q, args...)...)
	}
	refuse := func(v *protocol.Verb, args ...string) {
		t.Helper()
		calls++
		if _, err := s.Do(ctxT(t), verbArgs(v, q, args...)...); err == nil {
			t.Fatalf("%s %q: not refused", v.Command, args)
		}
	}
	require.Equal(t, int64(1), do(protocol.Install))
	require.Equal(t, int64(0), do(protocol.Install))
	ids := do(protocol.Add, addArgs(
		job("plain"),
		job("urgent", "900", "0", "2", protocol.BackoffExponential, "10"),
		job("later", "0", "60000"),
		job("once", "5", "0", "1", protocol.BackoffFixed, "0", "u1", "600000"),
	)...).([]any)
	require.Equal(t, []any{"1", "2", "3", "4"}, ids)
	refuse(protocol.Add, addArgs(job("again", "0", "0", "1", protocol.BackoffFixed, "0", "u1", "1000"))...)
	claimed := do(protocol.Claim, "30000", "10").([]any)
	require.Len(t, claimed, 3) // urgent, once, plain; later is delayed
	require.Equal(t, []any{"2", "urgent", int64(1)}, claimed[0])
	require.Equal(t, []any{"4", "once", int64(1)}, claimed[1])
	require.IsType(t, int64(0), do(protocol.Extend, "2", "1", "60000"))
	refuse(protocol.Extend, "2", "0", "60000")
	require.Equal(t, int64(1), do(protocol.Complete, "4", "1", ""))
	require.Equal(t, int64(0), do(protocol.Complete, "4", "1", ""))
	require.Equal(t, protocol.FailRetry, do(protocol.Fail, "2", "1", "1", "boom"))
	require.Equal(t, protocol.FailDead, do(protocol.Fail, "1", "1", "0", "bad\x00bytes"))
	refuse(protocol.Fail, "1", "1", "0", "again")
	// the unique key is free again
	require.Equal(t, []any{"5"}, do(protocol.Add, addArgs(job("once more", "0", "0", "1", protocol.BackoffFixed, "0", "u1", "600000"))...))
	require.Len(t, do(protocol.Claim, "1000", "5").([]any), 1)
	// one call, every outcome: 5 completes and releases u1, 3 is delayed, 1
	// dead with another token, 4 gone
	require.Equal(t, []any{int64(1), int64(-2), int64(-1), int64(0)}, do(protocol.CompleteMany, "4", "5", "1", "", "3", "0", "", "1", "9", "", "4", "1", ""))
	refuse(protocol.CompleteMany, "2", "3", "0", "", "3", "0", "")
	require.Equal(t, []any{"6"}, do(protocol.Add, addArgs(job("u1 free", "0", "0", "1", protocol.BackoffFixed, "0", "u1", "600000"))...))
	// the job options, RESCHEDULE, CLAIM's extended rows and CANCEL: a job
	// due in a day, moved to now, claimed, then cancelled under its worker
	opts := append([]string{"1", "4", protocol.AddOptionDue, protocol.AddOptionTimeout, protocol.AddOptionKind, protocol.AddOptionHeaders},
		job("opts")...)
	opts = append(opts, strconv.FormatInt(time.Now().Add(24*time.Hour).UnixMilli(), 10), "30000", "email", "trace\x00")
	require.Equal(t, []any{"7"}, do(protocol.Add, opts...))
	require.Equal(t, protocol.StateDelayed, do(protocol.Reschedule, "7", "0", "600000"))
	require.Equal(t, protocol.StatePending, do(protocol.Reschedule, "7", "0", "0"))
	claimed = do(protocol.Claim, "30000", "10", protocol.ClaimExtended).([]any)
	require.Contains(t, claimed, []any{"7", "opts", int64(1), int64(3), "email", int64(30000), "trace\x00", nil})
	require.Equal(t, int64(1), do(protocol.Cancel, "7"))
	refuse(protocol.Extend, "7", "1", "60000")
	refuse(protocol.Cancel, "7")
	return calls
}

func TestJobCoreEffectsInTheAOF(t *testing.T) {
	t.Parallel()
	p := startModule(t, valkeyserver.Options{AOF: true})
	workload(t, p, "fx")
	before := valkeytest.Snapshot(t, p, "emq:*")
	aof := readAOF(t, p)
	if strings.Contains(strings.ToUpper(aof), "EMQ.") {
		t.Fatalf("the AOF holds an EMQ command:\n%s", aof)
	}
	for _, w := range []string{"HINCRBY", "ZPOPMIN", "ZADD", "MULTI", "EXEC", "PXAT"} {
		require.Contains(t, aof, w, "the AOF lacks %s", w)
	}
	// a server without the module loads a copy of the data directory to the
	// same dataset
	dir := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	out, err := exec.Command("cp", "-r", filepath.Join(p.Dir(), "appendonlydir"), dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	plain := valkeytest.Start(t, valkeyserver.Options{Dir: dir, AOF: true})
	valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, plain, "emq:*"))
	if _, err := plain.Do(ctxT(t), "EMQ.VERSION"); err == nil {
		t.Fatal("the plain server has the module")
	}
}

func TestJobCoreReplica(t *testing.T) {
	t.Parallel()
	p := startModule(t, valkeyserver.Options{})
	r := valkeytest.Start(t, valkeyserver.Options{ReplicaOf: p.Addr()})
	require.NoError(t, r.WaitReplicaSync(ctxT(t)))
	workload(t, p, "rep")
	want := valkeytest.Snapshot(t, p, "emq:*")
	valkeytest.WaitReplicated(t, p, r)
	valkeytest.RequireUnchanged(t, want, valkeytest.Snapshot(t, r, "emq:*"))
}

// An ACL user limited to queue a reaches neither queue b's declared keys
// (the server's key-spec check) nor, through derived keys, rows it may not
// touch (the module's check); nothing is written either way.
func TestJobCoreACL(t *testing.T) {
	t.Parallel()
	a := protocol.KeysOf("a")
	s := startModule(t, valkeyserver.Options{Users: []string{
		"alice on >pw ~emq:{a}:* +@all",
		"bob on >pw " + declaredKeysACL("a") + " %R~emq:{a}:job:* +@all",
	}})
	as := asUser(t, s)
	valkeytest.Do(t, s, verbArgs(protocol.Install, "b")...)
	valkeytest.Do(t, s, verbArgs(protocol.Add, "b", addArgs(job("x"))...)...)
	valkeytest.Do(t, s, verbArgs(protocol.Install, "a")...)
	before := valkeytest.Snapshot(t, s, "emq:*")
	for _, v := range []struct {
		verb *protocol.Verb
		args []string
	}{
		{protocol.Install, nil},
		{protocol.Add, addArgs(job("y"))},
		{protocol.Claim, []string{"1000", "1"}},
		{protocol.Extend, []string{"1", "0", "1000"}},
		{protocol.Complete, []string{"1", "0", ""}},
		{protocol.CompleteMany, []string{"1", "1", "0", ""}},
		{protocol.Fail, []string{"1", "0", "1", "e"}},
	} {
		_, err := as("alice", verbArgs(v.verb, "b", v.args...)...)
		require.Error(t, err, v.verb.Command)
		require.True(t, strings.HasPrefix(err.Error(), "NOPERM"), "%s on queue b: %v", v.verb.Command, err)
	}
	valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "emq:*"))
	// bob may use queue a's declared keys and read its rows, not write them:
	// an ADD (rows created) and a claim (rows updated) are refused by the
	// module before any write
	_, err := as("bob", verbArgs(protocol.Add, "a", addArgs(job("z"))...)...)
	require.EqualError(t, err, protocol.ErrNoPerm)
	valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "emq:*"))
	ids, err := as("alice", verbArgs(protocol.Add, "a", addArgs(job("z"))...)...)
	require.NoError(t, err)
	require.Equal(t, []any{"1"}, ids)
	before = valkeytest.Snapshot(t, s, "emq:*")
	_, err = as("bob", verbArgs(protocol.Claim, "a", "1000", "1")...)
	require.EqualError(t, err, protocol.ErrNoPerm)
	// EXTEND only reads the row: bob gets as far as the verdict
	_, err = as("bob", verbArgs(protocol.Extend, "a", "1", "0", "1000")...)
	require.EqualError(t, err, protocol.ErrNotActive("extend"))
	_, err = as("bob", verbArgs(protocol.Extend, "a", "1", "9", "1000")...)
	require.EqualError(t, err, protocol.ErrStale("extend"))
	valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "emq:*"))
	// the fence comes before a denied row
	valkeytest.Do(t, s, "SET", a.Version, "1")
	_, err = as("bob", verbArgs(protocol.Complete, "a", "1", "0", "")...)
	require.EqualError(t, err, protocol.ErrWireFound("1"))
}

// CLIENT PAUSE WRITE holds a native writer before it runs (it is flagged
// write), so nothing is written during the pause; a path the pause does not
// hold (a module command calling the verb) meets the guard, which refuses
// with nothing written.
func TestJobCorePause(t *testing.T) {
	t.Parallel()
	s := startDebug(t, valkeyserver.Options{})
	valkeytest.Do(t, s, verbArgs(protocol.Install, "p")...)
	before := valkeytest.Snapshot(t, s, "emq:*")
	valkeytest.Do(t, s, "CLIENT", "PAUSE", "20000", "WRITE")
	done := heldByPause(t, s, verbArgs(protocol.Add, "p", addArgs(job("held"))...)...)
	wantRefused(t, s, protocol.ErrWritePaused, append([]string{"EMQ.DEBUG.NEST"}, verbArgs(protocol.Add, "p", addArgs(job("guarded"))...)...)...)
	valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "emq:*"))
	valkeytest.Do(t, s, "CLIENT", "UNPAUSE")
	select {
	case v := <-done:
		require.Equal(t, []any{"1"}, v, "after the pause")
	case <-time.After(10 * time.Second):
		t.Fatal("EMQ.ADD still held after CLIENT UNPAUSE")
	}
	// a panic in a handler leaves the server running and the verbs working
	wantRefused(t, s, protocol.ErrInternal, "EMQ.DEBUG.PANIC")
	claimed := valkeytest.Do(t, s, verbArgs(protocol.Claim, "p", "1000", "1")...)
	require.Equal(t, []any{[]any{"1", "held", int64(1)}}, claimed)
}

// Every registered job-core writer is flagged write, and deny-oom exactly
// when its mode grows the dataset, with EVAL-style key-specs, so the server
// holds it during a pause, refuses only growth at maxmemory, and ACL and
// cluster routing see its declared keys.
func TestJobCoreCommandInfo(t *testing.T) {
	t.Parallel()
	s := startModule(t, valkeyserver.Options{})
	for _, v := range protocol.All {
		info := valkeytest.Do(t, s, "COMMAND", "INFO", v.Command).([]any)[0].([]any)
		flags := strings.Fields(flat(info[2]))
		switch v.Mode {
		case protocol.Grows:
			require.Subset(t, flags, []string{"write", "denyoom"}, v.Command)
		case protocol.Keeps:
			require.Contains(t, flags, "write", v.Command)
			require.NotContains(t, flags, "denyoom", v.Command)
		default:
			require.Contains(t, flags, "readonly", v.Command)
			require.NotContains(t, flags, "write", v.Command)
		}
		require.Equal(t, int64(-2), info[1], v.Command)
	}
	keys := protocol.Claim.KeyNames(protocol.KeysOf("k"))
	got := valkeytest.Do(t, s, append([]string{"COMMAND", "GETKEYS", protocol.Claim.Command, "5"}, append(keys, "1", "1")...)...)
	require.Equal(t, flat(got), strings.Join(keys, " "))
}

// The native verbs allocate nothing in steady state: their scratch and the
// host's are reused from one command to the next. The Go runtime allocates a
// few objects of its own whatever the load (up to about 20 in a run, as many
// for 4 rounds as for 16), so the bound is per verb: each verb runs at least
// 64 times, and one allocation per call of any of them exceeds it.
func TestJobCoreNoAllocations(t *testing.T) {
	t.Parallel()
	s := startDebug(t, valkeyserver.Options{})
	c, err := s.Dial(ctxT(t))
	require.NoError(t, err)
	defer c.Close()
	valkeytest.Do(t, s, verbArgs(protocol.Install, "na")...)
	calls := map[string]int{}
	do := func(cmds ...[]string) {
		t.Helper()
		replies, err := c.DoMulti(ctxT(t), cmds...)
		require.NoError(t, err)
		for i, r := range replies {
			if re, ok := r.(valkeyserver.ReplyError); ok {
				t.Fatal(re)
			}
			calls[cmds[i][0]]++
		}
	}
	round := func() {
		t.Helper()
		var cmds [][]string
		for range 50 {
			cmds = append(cmds, verbArgs(protocol.Add, "na", addArgs(job("a"), job("b", "5"), job("c", "0", "10"))...))
		}
		do(cmds...)
		for range 4 {
			claimed, err := c.Do(ctxT(t), verbArgs(protocol.Claim, "na", "60000", "25")...)
			require.NoError(t, err)
			calls[protocol.Claim.Command]++
			cmds = cmds[:0]
			many := []string{}
			for i, j := range claimed.([]any) {
				f := j.([]any)
				id, token := f[0].(string), strconv.FormatInt(f[2].(int64), 10)
				cmds = append(cmds, verbArgs(protocol.Extend, "na", id, token, "60000"))
				switch i % 4 {
				case 0:
					cmds = append(cmds, verbArgs(protocol.Complete, "na", id, token, ""))
				case 2:
					many = append(many, id, token, "")
				default:
					cmds = append(cmds, verbArgs(protocol.Fail, "na", id, token, "1", "boom"))
				}
			}
			// one COMPLETEMANY of a quarter of the jobs, and of one gone
			many = append([]string{strconv.Itoa(len(many)/3 + 1)}, many...)
			cmds = append(cmds, verbArgs(protocol.CompleteMany, "na", append(many, strconv.Itoa(protocol.MaxJobID), "1", "")...))
			do(cmds...)
		}
	}
	round()
	round()
	clear(calls)
	before := runtimeInfo(t, s)[3]
	for range 16 {
		round()
	}
	after := runtimeInfo(t, s)[3]
	for _, v := range []*protocol.Verb{protocol.Add, protocol.Claim, protocol.Extend, protocol.Complete, protocol.Fail, protocol.CompleteMany} {
		require.GreaterOrEqual(t, calls[v.Command], 64, v.Command)
	}
	t.Logf("%d heap allocations for 16 rounds, calls %v", after-before, calls)
	require.Less(t, after-before, int64(64), "heap allocations for 16 rounds")
}

// The largest calls: ADD of 1000 jobs with unique keys of 512 bytes, CLAIM of
// 1000, then every job completed, releasing its key.
func TestJobCoreLargestCalls(t *testing.T) {
	t.Parallel()
	s := startModule(t, valkeyserver.Options{})
	valkeytest.Do(t, s, verbArgs(protocol.Install, "big")...)
	var jobs [][]string
	for i := range protocol.MaxCount {
		key := strconv.Itoa(i) + strings.Repeat("k", protocol.MaxUniqueKey-len(strconv.Itoa(i)))
		jobs = append(jobs, job(strings.Repeat("d", 1000), strconv.Itoa(i%1001), "0", "3", protocol.BackoffFixed, "0", key, "600000"))
	}
	ids := valkeytest.Do(t, s, verbArgs(protocol.Add, "big", addArgs(jobs...)...)...).([]any)
	require.Len(t, ids, protocol.MaxCount)
	require.Equal(t, "1000", ids[999])
	_, err := s.Do(ctxT(t), verbArgs(protocol.Add, "big", addArgs(jobs[500])...)...)
	require.EqualError(t, err, protocol.ErrAddDuplicate("501"))
	claimed := valkeytest.Do(t, s, verbArgs(protocol.Claim, "big", "60000", "1000")...).([]any)
	require.Len(t, claimed, protocol.MaxCount)
	require.Equal(t, "1000", claimed[0].([]any)[0], "highest priority first")
	c, err := s.Dial(ctxT(t))
	require.NoError(t, err)
	defer c.Close()
	var cmds [][]string
	for _, j := range claimed {
		f := j.([]any)
		cmds = append(cmds, verbArgs(protocol.Complete, "big", f[0].(string), strconv.FormatInt(f[2].(int64), 10), ""))
	}
	replies, err := c.DoMulti(ctxT(t), cmds...)
	require.NoError(t, err)
	for _, r := range replies {
		require.Equal(t, int64(1), r)
	}
	require.Equal(t, int64(4), valkeytest.Do(t, s, "DBSIZE"), "version, meta, stats and signal are all that is left")
	require.Equal(t, "1000", valkeytest.Do(t, s, "HGET", protocol.KeysOf("big").Stats, "completed"))
}

// declaredKeysACL is the ACL key patterns of every declared key of queue q,
// exactly, and nothing derived (no rows, logs or unique keys).
func declaredKeysACL(q string) string {
	k := protocol.KeysOf(q)
	var fixed []string
	for _, key := range []string{k.Base, k.Version, k.Meta, k.Stats, k.Pending, k.Delayed, k.Active, k.Dead, k.Signal} {
		fixed = append(fixed, "~"+key)
	}
	return strings.Join(fixed, " ")
}

// asUser returns a function that runs one command on s as user (password
// "pw"), on a connection of its own.
func asUser(t *testing.T, s *valkeyserver.Server) func(user string, args ...string) (any, error) {
	return func(user string, args ...string) (any, error) {
		c, err := valkeyserver.Dial(ctxT(t), s.Addr())
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Do(ctxT(t), "AUTH", user, "pw")
		require.NoError(t, err)
		return c.Do(ctxT(t), args...)
	}
}
