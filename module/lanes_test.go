package main

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/protocol"
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
	valkeytest := func(args ...string) any {
		t.Helper()
		r, err := c.Do(ctxT(t), args...)
		require.NoError(t, err, "%q", args)
		return r
	}
	valkeytest(verbArgs(protocol.Install, "la")...)
	valkeytest(verbArgs(protocol.LaneCap, "la", "capped", "2")...)
	valkeytest(verbArgs(protocol.Rate, "la", "1000000", "60000")...)
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
					cmds = append(cmds, verbArgs(protocol.Complete, "la", id, token))
				case 1:
					many = append(many, id, token)
				default:
					cmds = append(cmds, verbArgs(protocol.Fail, "la", id, token, "1", "boom"))
				}
			}
			if len(many) > 0 {
				cmds = append(cmds, verbArgs(protocol.CompleteMany, "la", append([]string{strconv.Itoa(len(many) / 2)}, many...)...))
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
