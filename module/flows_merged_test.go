package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// TestFlowsMatchLuaRandom runs random flows on both executors, side by
// side: trees with lanes, policies and waiters, retention on and off, and
// every verb that finishes a job, holding the native executor's replies and
// end state (encodings and field order included) to the Lua scripts'.
func TestFlowsMatchLuaRandom(t *testing.T) {
	t.Parallel()
	s := startModule(t, valkeyserver.Options{})
	for seed := range uint64(3) {
		sides := [2]*mergeSide{}
		for i, native := range []bool{true, false} {
			q := fmt.Sprintf("%s%d", map[bool]string{true: "fn", false: "fl"}[native], seed)
			sides[i] = &mergeSide{t: t, s: s, native: native, q: q, k: protocol.KeysOf(q)}
		}
		// call runs f on both sides, native first, and requires the same
		// reply; step also requires the same queue afterwards
		call := func(name string, f func(e *mergeSide) any) [2]any {
			t.Helper()
			var r [2]any
			for i, e := range sides {
				r[i] = f(e)
			}
			require.Equal(t, fmt.Sprintf("%#v", r[1]), fmt.Sprintf("%#v", r[0]), "seed %d, %s: the replies differ (native, then Lua)", seed, name)
			return r
		}
		step := func(name string, f func(e *mergeSide) any) [2]any {
			t.Helper()
			r := call(name, f)
			a, b := queueDump(t, s, sides[0].k), queueDump(t, s, sides[1].k)
			for key := range b {
				require.Contains(t, a, key, "seed %d, %s: %s only on Lua's queue", seed, name, key)
			}
			for key, v := range a {
				require.Equal(t, b[key], v, "seed %d, %s: key %s (Lua, then native)", seed, name, key)
			}
			return r
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		step("install, a capped lane and a paused one", func(e *mergeSide) any {
			return []any{e.do(protocol.Install), e.do(protocol.LaneCap, "l0", "1"), e.do(protocol.LanePause, "l2")}
		})
		if seed%2 == 1 {
			step("retain", func(e *mergeSide) any { return e.do(protocol.Retain, "0", "5", "0", "3", "0") })
		}
		policies := []string{"", "fail", "ignore", "continue"}
		for round := range 5 {
			// a batch of trees: each job's parent an earlier job or none
			n := 5 + rng.IntN(20)
			args := []string{strconv.Itoa(n), "4", "parent", "onfail", "wait", "lane"}
			for i := range n {
				parent := ""
				if i > 0 && rng.IntN(4) != 0 {
					parent = strconv.Itoa(1 + rng.IntN(i))
				}
				wait := ""
				if rng.IntN(3) == 0 {
					wait = "60000"
				}
				lane := ""
				if rng.IntN(3) == 0 {
					lane = "l" + strconv.Itoa(rng.IntN(3))
				}
				attempts := strconv.Itoa(1 + rng.IntN(2))
				args = append(args, "d"+strconv.Itoa(i), strconv.Itoa(rng.IntN(3)), "0", attempts, protocol.BackoffFixed, "0", "", "0",
					parent, policies[rng.IntN(len(policies))], wait, lane)
			}
			step(fmt.Sprintf("round %d: add", round), func(e *mergeSide) any { return e.do(protocol.Add, args...) })
			for range 8 {
				r := call("claim", func(e *mergeSide) any { return e.do(protocol.Claim, "60000", "8") })
				jobs := claimed(r[0])
				if len(jobs) == 0 {
					break
				}
				var many []string
				for k, j := range jobs {
					res := ""
					if rng.IntN(2) == 0 {
						res = "r" + j[0]
					}
					switch k % 4 {
					case 0:
						call("complete", func(e *mergeSide) any { return e.do(protocol.Complete, j[0], j[1], res) })
					case 1:
						retry := strconv.Itoa(rng.IntN(2))
						call("fail", func(e *mergeSide) any { return e.do(protocol.Fail, j[0], j[1], retry, "boom "+j[0]) })
					default:
						many = append(many, j[0], j[1], res)
					}
				}
				if len(many) > 0 {
					args := append([]string{strconv.Itoa(len(many) / 3)}, many...)
					step("completemany", func(e *mergeSide) any { return e.do(protocol.CompleteMany, args...) })
				}
			}
			// a short lease expires: RECOVER's deaths tell their parents
			call("claim to expire", func(e *mergeSide) any { return e.do(protocol.Claim, "1", "4") })
			time.Sleep(5 * time.Millisecond)
			step("recover", func(e *mergeSide) any { return e.do(protocol.Recover, "1000") })
			step("promote", func(e *mergeSide) any { return e.do(protocol.Promote, "1000") })
			if round == 2 {
				step("resume l2", func(e *mergeSide) any { return e.do(protocol.LaneResume, "l2") })
			}
			// remove a few, with and without cascade; requeue a few
			for range 3 {
				id := strconv.Itoa(1 + rng.IntN(round*25+n))
				cascade := strconv.Itoa(rng.IntN(2))
				call("remove "+id, func(e *mergeSide) any { return e.do(protocol.Remove, id, cascade) })
				id = strconv.Itoa(1 + rng.IntN(round*25+n))
				call("requeue "+id, func(e *mergeSide) any { return e.do(protocol.Requeue, id) })
			}
			// (no TRIM here: which ids are oldest depends on each side's
			// clock)
			step("children", func(e *mergeSide) any { return e.do(protocol.Children, "1", "0", "100") })
			step("stats", func(e *mergeSide) any { return e.do(protocol.Stats) })
		}
	}
}

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
