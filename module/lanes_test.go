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

// A steady load with lanes allocates nothing of its own either: ADD into
// lanes and pending, CLAIM's fair turns over them, COMPLETE, COMPLETEMANY and
// FAIL freeing capped lanes' slots, PROMOTE back into the lanes, the lane
// verbs and a rate.
func TestLanesNoAllocations(t *testing.T) {
	t.Parallel()
	s := startDebug(t, valkeyserver.Options{})
	c, err := s.Dial(ctxT(t))
	require.NoError(t, err)
	defer c.Close()
	run := func(args ...string) any {
		t.Helper()
		r, err := c.Do(ctxT(t), args...)
		require.NoError(t, err, "%q", args)
		return r
	}
	run(verbArgs(protocol.Install, "la")...)
	run(verbArgs(protocol.LaneCap, "la", "capped", "2")...)
	run(verbArgs(protocol.Rate, "la", "1000000", "60000")...)
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
	lanes := []string{"", "a", "b", "capped", "c", "d"}
	round := func() {
		t.Helper()
		var cmds [][]string
		for k := range 20 {
			var jobs [][]string
			for i := range 3 {
				delay := "0"
				if (k+i)%5 == 0 {
					delay = "1"
				}
				jobs = append(jobs, append(job("x", strconv.Itoa(i), delay, "3", protocol.BackoffFixed, "0"), lanes[(k+i)%len(lanes)]))
			}
			cmds = append(cmds, verbArgs(protocol.Add, "la", laneAddArgs(jobs...)...))
		}
		cmds = append(cmds, verbArgs(protocol.LanePause, "la", "d"), verbArgs(protocol.LaneResume, "la", "d"),
			verbArgs(protocol.Lane, "la", "a"), verbArgs(protocol.Lanes, "la", "", "10"), verbArgs(protocol.Stats, "la"))
		do(cmds...)
		for range 4 {
			claimed, err := c.Do(ctxT(t), verbArgs(protocol.Claim, "la", "60000", "12")...)
			require.NoError(t, err)
			calls[protocol.Claim.Command]++
			cmds = cmds[:0]
			many := []string{}
			for i, j := range claimed.([]any) {
				f := j.([]any)
				id, token := f[0].(string), strconv.FormatInt(f[2].(int64), 10)
				switch i % 3 {
				case 0:
					cmds = append(cmds, verbArgs(protocol.Complete, "la", id, token, ""))
				case 1:
					many = append(many, id, token, "")
				default:
					cmds = append(cmds, verbArgs(protocol.Fail, "la", id, token, "1", "boom"))
				}
			}
			if len(many) > 0 {
				cmds = append(cmds, verbArgs(protocol.CompleteMany, "la", append([]string{strconv.Itoa(len(many) / 3)}, many...)...))
			}
			cmds = append(cmds, verbArgs(protocol.Promote, "la", "100"))
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
	for _, v := range []*protocol.Verb{protocol.Add, protocol.Claim, protocol.Complete, protocol.Fail, protocol.CompleteMany, protocol.Promote} {
		require.GreaterOrEqual(t, calls[v.Command], 16, v.Command)
	}
	t.Logf("%d heap allocations for 16 rounds, calls %v", after-before, calls)
	require.Less(t, after-before, int64(64), "heap allocations for 16 rounds")
}

// laneWorkload runs every lane verb and every verb that moves a laned job on
// queue q of s, with a cap, a pause and a rate.
func laneWorkload(t *testing.T, s *valkeyserver.Server, q string) {
	t.Helper()
	do := func(v *protocol.Verb, args ...string) any {
		t.Helper()
		return valkeytest.Do(t, s, verbArgs(v, q, args...)...)
	}
	do(protocol.Install)
	do(protocol.LaneCap, "a", "1")
	do(protocol.LanePause, "c")
	do(protocol.Rate, "100", "600000")
	do(protocol.Add, laneAddArgs(
		append(job("p"), ""), append(job("a1"), "a"), append(job("a2"), "a"), append(job("b1", "5"), "b"),
		append(job("b2", "0", "0", "1"), "b"), append(job("c1"), "c"), append(job("later", "0", "1"), "b"),
	)...)
	first := claimed(do(protocol.Claim, "1", "10"))
	require.Len(t, first, 4) // p, a1 (cap 1), b1, b2; c is paused
	do(protocol.Complete, first[0][0], first[0][1], "")
	do(protocol.CompleteMany, "1", first[1][0], first[1][1], "")
	time.Sleep(10 * time.Millisecond)
	do(protocol.Recover, "10")   // b1 back to b, b2 dead
	do(protocol.Promote, "10")   // later to b
	do(protocol.LaneResume, "c") // c ready again
	do(protocol.LaneCap, "a", "0")
	again := claimed(do(protocol.Claim, "60000", "10"))
	require.NotEmpty(t, again)
	do(protocol.Fail, again[0][0], again[0][1], "1", "boom")
	do(protocol.Requeue, "5")
	do(protocol.Remove, "5", "0")
	do(protocol.Rate, "0", "0")
	do(protocol.Lane, "b")
	do(protocol.Lanes, "", "10")
	do(protocol.Stats)
}

// The lanes' writes reach the AOF and a replica as their effects: a server
// without the module loads the same dataset, and a replica holds it.
func TestLanesEffects(t *testing.T) {
	t.Parallel()
	p := startModule(t, valkeyserver.Options{AOF: true})
	r := valkeytest.Start(t, valkeyserver.Options{ReplicaOf: p.Addr()})
	require.NoError(t, r.WaitReplicaSync(ctxT(t)))
	laneWorkload(t, p, "lx")
	want := valkeytest.Snapshot(t, p, "emq:*")
	for _, k := range []string{protocol.SuffixLaneInfo, protocol.SuffixLanes, protocol.SuffixRate} {
		require.Contains(t, want, protocol.Base("lx")+k)
	}
	aof := readAOF(t, p)
	require.NotContains(t, strings.ToUpper(aof), "EMQ.", "the AOF holds an EMQ command")
	dir := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	out, err := exec.Command("cp", "-r", filepath.Join(p.Dir(), "appendonlydir"), dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	plain := valkeytest.Start(t, valkeyserver.Options{Dir: dir, AOF: true})
	valkeytest.RequireUnchanged(t, want, valkeytest.Snapshot(t, plain, "emq:*"))
	valkeytest.WaitReplicated(t, p, r)
	valkeytest.RequireUnchanged(t, want, valkeytest.Snapshot(t, r, "emq:*"))
}
