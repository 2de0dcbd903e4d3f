package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// flowArgs is ADD's ARGV for jobs with the option columns cols: each job's
// fixed 8 values, then its value of each column.
func flowArgs(cols []string, jobs ...[]string) []string {
	out := []string{strconv.Itoa(len(jobs)), strconv.Itoa(len(cols))}
	out = append(out, cols...)
	for _, j := range jobs {
		out = append(out, j...)
	}
	return out
}

// A flow end to end: a parent with two children, one with a result; the
// parent waits, is released when both completed, and CHILDREN pages them.
// A child that dies with policy fail makes its parent die, and the parent's
// waiter gets the outcome.
func TestFlows(t *testing.T) {
	t.Parallel()
	s := startModule(t, valkeyserver.Options{})
	do := func(v *protocol.Verb, args ...string) any {
		t.Helper()
		return valkeytest.Do(t, s, verbArgs(v, "f", args...)...)
	}
	do(protocol.Install)
	cols := []string{"parent", "wait"}
	ids := do(protocol.Add, flowArgs(cols,
		append(job("root"), "", "60000"),
		append(job("a"), "1", ""),
		append(job("b"), "1", "60000"))...)
	require.Equal(t, []any{"1", "2", "3"}, ids)
	st := valkeytest.Do(t, s, "HGETALL", "emq:{f}:job:1").([]any)
	// max 3 and prio 0, the defaults, left out
	require.Equal(t, []any{"data", "root", "state", "waiting", "att", "0", "bo", "fixed:0", "at", st[9], "deps", "2", "wait", "60000"}, st)
	require.Equal(t, []any{"2", "3"}, valkeytest.Do(t, s, "ZRANGE", "emq:{f}:job:1:kids", "0", "-1"))
	claimed := do(protocol.Claim, "60000", "10").([]any)
	require.Len(t, claimed, 2)
	require.Equal(t, int64(1), do(protocol.Complete, "2", "1", "ra"))
	require.Equal(t, "1", valkeytest.Do(t, s, "HGET", "emq:{f}:job:1", "deps"))
	require.Equal(t, []any{int64(1)}, do(protocol.CompleteMany, "1", "3", "1", ""))
	require.Equal(t, []any{"c"}, valkeytest.Do(t, s, "LRANGE", "emq:{f}:done:3", "0", "-1"))
	require.Equal(t, "pending", valkeytest.Do(t, s, "HGET", "emq:{f}:job:1", "state"))
	require.Equal(t, []any{"1"}, valkeytest.Do(t, s, "ZRANGE", "emq:{f}:pending", "0", "-1"))
	require.Equal(t, []any{[]any{"2", nil, "ra", nil}, []any{"3", nil, nil, nil}}, do(protocol.Children, "1", "0", "10"))
	claimed = do(protocol.Claim, "60000", "10").([]any)
	require.Len(t, claimed, 1)
	require.Equal(t, int64(1), do(protocol.Complete, "1", "1", "done"))
	require.Equal(t, []any{"cdone"}, valkeytest.Do(t, s, "LRANGE", "emq:{f}:done:1", "0", "-1"))
	require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", "emq:{f}:job:1:kids", "emq:{f}:job:1:results"))

	// a child with policy fail dies: its parent dies when its other child
	// completed
	cols = []string{"parent", "onfail", "wait"}
	ids = do(protocol.Add, flowArgs(cols,
		append(job("root"), "", "", "60000"),
		append(job("x", "0", "0", "1"), "1", "", ""),
		append(job("y"), "1", "continue", ""))...)
	require.Equal(t, []any{"4", "5", "6"}, ids)
	claimed = do(protocol.Claim, "60000", "10").([]any)
	require.Len(t, claimed, 2)
	require.Equal(t, "dead", do(protocol.Fail, "5", "1", "0", "boom"))
	require.Equal(t, "5", valkeytest.Do(t, s, "HGET", "emq:{f}:job:4", "cfail"))
	require.Equal(t, int64(1), do(protocol.Complete, "6", "1", ""))
	require.Equal(t, "dead", valkeytest.Do(t, s, "HGET", "emq:{f}:job:4", "state"))
	require.Equal(t, "child 5 failed", valkeytest.Do(t, s, "HGET", "emq:{f}:job:4", "err"))
	require.Equal(t, []any{"dchild 5 failed"}, valkeytest.Do(t, s, "LRANGE", "emq:{f}:done:4", "0", "-1"))

	// retention: a completed job kept with its result, then trimmed
	require.Equal(t, int64(1), do(protocol.Retain, "1", "0", "0", "0", "0"))
	do(protocol.Add, addArgs(job("kept"))...)
	claimed = do(protocol.Claim, "60000", "10").([]any)
	require.Len(t, claimed, 1)
	require.Equal(t, int64(1), do(protocol.Complete, "7", "1", "r7"))
	require.Equal(t, "completed", valkeytest.Do(t, s, "HGET", "emq:{f}:job:7", "state"))
	require.Equal(t, "r7", valkeytest.Do(t, s, "HGET", "emq:{f}:job:7", "res"))
	stats := do(protocol.Stats).([]any)
	require.Equal(t, "retained", stats[len(stats)-2])
	require.Equal(t, int64(1), stats[len(stats)-1])
	time.Sleep(10 * time.Millisecond)
	require.Equal(t, []any{int64(1), int64(0)}, do(protocol.Trim, "10"))
	require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", "emq:{f}:job:7"))
}
