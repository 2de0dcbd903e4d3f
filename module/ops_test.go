package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// These tests run the native operations verbs (JOBS, REQUEUEDEAD,
// REMOVEDEAD, PROMOTEALL, RETRY) on real servers for what the conformance
// suite does not hold against the Lua: effects in the AOF and on a replica
// without the module, and no allocation per call.

// opsWorkload kills 6 jobs of queue q (two with a lane, one with a unique
// key), delays 3, then pages, requeues, removes, promotes and retries them.
func opsWorkload(t *testing.T, s *valkeyserver.Server, q string) {
	t.Helper()
	do := func(v *protocol.Verb, args ...string) any {
		t.Helper()
		return valkeytest.Do(t, s, verbArgs(v, q, args...)...)
	}
	do(protocol.Install)
	do(protocol.Add, addArgs(job("a"), job("b"), job("c", "5"), job("d", "0", "0", "1", protocol.BackoffFixed, "0", "u1", "600000"), job("e"), job("f"))...)
	do(protocol.Add, "2", "1", protocol.AddOptionLane, "g", "0", "0", "1", protocol.BackoffFixed, "0", "", "0", "l1", "h", "0", "0", "1", protocol.BackoffFixed, "0", "", "0", "l2")
	claimed := do(protocol.Claim, "60000", "10").([]any)
	require.Len(t, claimed, 8)
	for i, j := range claimed {
		f := j.([]any)
		id, token := f[0].(string), strconv.FormatInt(f[2].(int64), 10)
		if i < 6 {
			do(protocol.Fail, id, token, "0", "boom "+id)
		}
	}
	do(protocol.Add, addArgs(job("later1", "0", "600000"), job("later2", "0", "700000"), job("later3", "0", "800000"))...)

	page := do(protocol.Jobs, protocol.StateDead, "", "0", "", "", "4", "3").([]any)
	require.Equal(t, int64(6), page[0])
	require.Len(t, page[3], 4)
	require.NotNil(t, page[1])
	next := do(protocol.Jobs, protocol.StateDead, "", "0", strconv.FormatInt(page[1].(int64), 10), page[2].(string), "4", "3").([]any)
	require.Len(t, next[3], 2)
	require.Nil(t, next[1])
	newest := do(protocol.Jobs, protocol.StateDead, "", "1", "", "", "1000", "1024").([]any)
	require.Len(t, newest[3], 6)
	do(protocol.Jobs, protocol.StatePending, "l1", "0", "", "", "10", "0")

	max := strconv.FormatInt(protocol.MaxScore, 10)
	// requeue the dead of "boom 2" and the lane jobs, two examined a call
	got := do(protocol.RequeueDead, "2", "", "", "0", max, "", "boom 2").([]any)
	require.Equal(t, int64(2), got[1])
	cur := got
	taken := got[0].(int64)
	for cur[2] != nil {
		cur = do(protocol.RequeueDead, "2", strconv.FormatInt(cur[2].(int64), 10), cur[3].(string), "0", max, "", "boom 2").([]any)
		taken += cur[0].(int64)
	}
	require.Equal(t, int64(1), taken)
	// all the rest
	got = do(protocol.RequeueDead, "1000", "", "", "0", max, "", "").([]any)
	require.Equal(t, int64(5), got[0])
	claimed = do(protocol.Claim, "60000", "10").([]any)
	for _, j := range claimed {
		f := j.([]any)
		do(protocol.Fail, f[0].(string), strconv.FormatInt(f[2].(int64), 10), "0", "again")
	}
	got = do(protocol.RemoveDead, "3", "", "", "0", max, "", "").([]any)
	require.Equal(t, int64(3), got[0])
	valkeytest.Do(t, s, "ZADD", protocol.KeysOf(q).Fixed(protocol.SuffixDead), "1", "notanid")
	got = do(protocol.RemoveDead, "1000", "", "", "0", max, "", "").([]any)
	require.Equal(t, int64(len(claimed)-3), got[0])

	require.Equal(t, int64(1), do(protocol.Retry, "10"))
	got = do(protocol.PromoteAll, "1").([]any)
	require.Equal(t, []any{int64(1), int64(1)}, got)
	got = do(protocol.PromoteAll, "1000").([]any)
	require.Equal(t, []any{int64(1), int64(0)}, got)
	require.Equal(t, []any{int64(0), int64(0)}, do(protocol.PromoteAll, "1000"))
}

func TestOpsEffectsInTheAOF(t *testing.T) {
	t.Parallel()
	p := startModule(t, valkeyserver.Options{AOF: true})
	opsWorkload(t, p, "ops")
	before := valkeytest.Snapshot(t, p, "emq:*")
	aof := readAOF(t, p)
	if strings.Contains(strings.ToUpper(aof), "EMQ.") {
		t.Fatalf("the AOF holds an EMQ command:\n%s", aof)
	}
	dir := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	out, err := exec.Command("cp", "-r", filepath.Join(p.Dir(), "appendonlydir"), dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	plain := valkeytest.Start(t, valkeyserver.Options{Dir: dir, AOF: true})
	valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, plain, "emq:*"))
}

func TestOpsReplica(t *testing.T) {
	t.Parallel()
	p := startModule(t, valkeyserver.Options{})
	r := valkeytest.Start(t, valkeyserver.Options{ReplicaOf: p.Addr()})
	require.NoError(t, r.WaitReplicaSync(ctxT(t)))
	opsWorkload(t, p, "rep")
	want := valkeytest.Snapshot(t, p, "emq:*")
	valkeytest.WaitReplicated(t, p, r)
	valkeytest.RequireUnchanged(t, want, valkeytest.Snapshot(t, r, "emq:*"))
}

// The operations verbs allocate nothing per call in steady state, as the
// job-core verbs (TestJobCoreNoAllocations): each runs at least 64 times in
// 16 rounds (four calls a round, the first ones of a bulk verb bounded to one
// job), and one allocation per call of any of them exceeds the bound.
func TestOpsNoAllocations(t *testing.T) {
	t.Parallel()
	s := startDebug(t, valkeyserver.Options{})
	c, err := s.Dial(ctxT(t))
	require.NoError(t, err)
	defer c.Close()
	const q = "na"
	valkeytest.Do(t, s, verbArgs(protocol.Install, q)...)
	max := strconv.FormatInt(protocol.MaxScore, 10)
	calls := map[string]int{}
	do := func(cmds ...[]string) []any {
		t.Helper()
		replies, err := c.DoMulti(ctxT(t), cmds...)
		require.NoError(t, err)
		for i, r := range replies {
			if re, ok := r.(valkeyserver.ReplyError); ok {
				t.Fatal(re)
			}
			calls[cmds[i][0]]++
		}
		return replies
	}
	round := func() {
		t.Helper()
		do(verbArgs(protocol.Add, q, addArgs(job("a"), job("b", "5"), job("c", "0", "0", "1", protocol.BackoffFixed, "0", "u", "60000"),
			job("d"), job("e"), job("later", "0", "600000"), job("later", "0", "700000"), job("later", "0", "800000"),
			job("later", "0", "900000"), job("later", "0", "600000"), job("later", "0", "600000"), job("later", "0", "600000"),
			job("later", "0", "600000"))...))
		claimed := do(verbArgs(protocol.Claim, q, "60000", "100"))[0].([]any)
		var cmds [][]string
		for _, j := range claimed {
			f := j.([]any)
			cmds = append(cmds, verbArgs(protocol.Fail, q, f[0].(string), strconv.FormatInt(f[2].(int64), 10), "0", "boom"))
		}
		do(cmds...)
		cmds = cmds[:0]
		for range 4 {
			cmds = append(cmds,
				verbArgs(protocol.Jobs, q, protocol.StateDead, "", "0", "", "", "3", "16"),
				verbArgs(protocol.Jobs, q, protocol.StateDead, "", "1", "1", "x", "100", "1024"),
				verbArgs(protocol.Jobs, q, protocol.StateDelayed, "", "0", "", "", "10", "0"))
		}
		do(cmds...)
		delayed := do(verbArgs(protocol.Jobs, q, protocol.StateDelayed, "", "0", "", "", "4", "0"))[0].([]any)[3].([]any)
		cmds = cmds[:0]
		for _, row := range delayed {
			cmds = append(cmds, verbArgs(protocol.Retry, q, row.([]any)[0].(string)))
		}
		for _, limit := range []string{"1", "1", "1", "1000"} {
			cmds = append(cmds, verbArgs(protocol.PromoteAll, q, limit),
				verbArgs(protocol.RequeueDead, q, limit, "", "", "0", max, "", "boom"))
		}
		do(cmds...)
		claimed = do(verbArgs(protocol.Claim, q, "60000", "100"))[0].([]any)
		cmds = cmds[:0]
		for _, j := range claimed {
			f := j.([]any)
			cmds = append(cmds, verbArgs(protocol.Fail, q, f[0].(string), strconv.FormatInt(f[2].(int64), 10), "0", "again"))
		}
		do(cmds...)
		cmds = cmds[:0]
		for _, limit := range []string{"1", "1", "1", "1000"} {
			cmds = append(cmds, verbArgs(protocol.RemoveDead, q, limit, "", "", "0", max, "", ""))
		}
		do(cmds...)
	}
	round()
	round()
	clear(calls)
	before := runtimeInfo(t, s)[3]
	for range 16 {
		round()
	}
	after := runtimeInfo(t, s)[3]
	t.Logf("%d heap allocations for 16 rounds, calls %v", after-before, calls)
	for _, v := range protocol.OpsVerbs {
		require.GreaterOrEqual(t, calls[v.Command], 64, v.Command)
	}
	require.Less(t, after-before, int64(64), "heap allocations for 16 rounds")
}
