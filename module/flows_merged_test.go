package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// Two faults in one call: the executors refuse with the same one, the
// first in job order (internal/lua/completemany.lua and internal/lua/recover.lua read each
// job through, its parent included, before the next job's row).
func TestFlowRefusalsInJobOrderMatchLua(t *testing.T) {
	t.Parallel()
	s := startModule(t, valkeyserver.Options{})
	for n, tc := range []struct {
		name  string
		fault func(e *mergeSide) // after: job 1 parent of 2 and 3, 2 and 3 claimed
		call  func(e *mergeSide, jobs [][2]string) any
	}{
		{"completemany: a parent's deps before a later row", func(e *mergeSide) {
			e.plain("HSET", e.k.Base+"job:1", "deps", "x")
			e.plain("DEL", e.k.Base+"job:3")
			e.plain("SET", e.k.Base+"job:3", "s")
		}, func(e *mergeSide, jobs [][2]string) any {
			return e.do(protocol.CompleteMany, "2", jobs[0][0], jobs[0][1], "", jobs[1][0], jobs[1][1], "")
		}},
		{"completemany: a later row before the result's bound", func(e *mergeSide) {
			e.plain("DEL", e.k.Meta)
			e.plain("SET", e.k.Meta, "s")
			e.plain("DEL", e.k.Base+"job:2")
			e.plain("SET", e.k.Base+"job:2", "s")
		}, func(e *mergeSide, jobs [][2]string) any {
			return e.do(protocol.CompleteMany, "2", jobs[0][0], jobs[0][1], "", jobs[1][0], jobs[1][1], "r")
		}},
		{"completemany: a parent before the result's bound", func(e *mergeSide) {
			e.plain("HSET", e.k.Base+"job:1", "deps", "x")
			e.plain("DEL", e.k.Meta)
			e.plain("SET", e.k.Meta, "s")
		}, func(e *mergeSide, jobs [][2]string) any {
			return e.do(protocol.CompleteMany, "2", jobs[0][0], jobs[0][1], "", jobs[1][0], jobs[1][1], "r")
		}},
		{"completemany: a too large result tells nobody", func(e *mergeSide) {
			e.plain("HSET", e.k.Meta, "result_max", "1")
			e.plain("HSET", e.k.Base+"job:1", "deps", "x")
		}, func(e *mergeSide, jobs [][2]string) any {
			return []any{
				e.do(protocol.CompleteMany, "1", jobs[0][0], jobs[0][1], "rr"),
				e.do(protocol.CompleteMany, "1", jobs[0][0], jobs[0][1], ""),
			}
		}},
		{"fail: the parent before the counters", func(e *mergeSide) {
			e.plain("HSET", e.k.Base+"job:1", "deps", "x")
			e.plain("HSET", e.k.Stats, "dead", "y")
		}, func(e *mergeSide, jobs [][2]string) any {
			return e.do(protocol.Fail, jobs[0][0], jobs[0][1], "0", "boom")
		}},
		{"fail: a dying parent's stats dead", func(e *mergeSide) {
			e.plain("HSET", e.k.Base+"job:1", "deps", "1", "cfail", "9")
			e.plain("HSET", e.k.Stats, "dead", "9223372036854775806")
		}, func(e *mergeSide, jobs [][2]string) any {
			return e.do(protocol.Fail, jobs[0][0], jobs[0][1], "0", "boom")
		}},
		{"remove: a child's parent of another type", func(e *mergeSide) {
			e.plain("DEL", e.k.Base+"job:1")
			e.plain("SET", e.k.Base+"job:1", "s")
			e.plain("HSET", e.k.Base+"job:2", "state", "delayed")
		}, func(e *mergeSide, _ [][2]string) any { return e.do(protocol.Remove, "2", "1") }},
		{"recover: a parent's deps before a later row", func(e *mergeSide) {
			e.plain("HSET", e.k.Base+"job:1", "deps", "x")
			e.plain("HSET", e.k.Base+"job:2", "max", "1")
			e.plain("DEL", e.k.Base+"job:3")
			e.plain("SET", e.k.Base+"job:3", "s")
			e.plain("ZADD", e.k.Active, "1", "2", "2", "3")
		}, func(e *mergeSide, _ [][2]string) any { return e.do(protocol.Recover, "10") }},
	} {
		var r [2]any
		for i, native := range []bool{true, false} {
			q := fmt.Sprintf("%s-%d", map[bool]string{true: "rn", false: "rl"}[native], n)
			e := &mergeSide{t: t, s: s, native: native, q: q, k: protocol.KeysOf(q)}
			e.do(protocol.Install)
			e.do(protocol.Add, flowArgs([]string{"parent"}, append(job("p"), ""), append(job("a"), "1"), append(job("b"), "1"))...)
			jobs := claimed(e.do(protocol.Claim, "60000", "10"))
			require.Len(t, jobs, 2)
			tc.fault(e)
			r[i] = tc.call(e, jobs)
		}
		require.Equal(t, fmt.Sprint(r[1]), fmt.Sprint(r[0]), "%s (Lua, then native)", tc.name)
	}
}
