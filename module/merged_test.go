package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/lua"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// The native executor merges writes the Lua scripts make one at a time (one
// ZADD per set for a batch, one HSET of predicted values in place of
// HINCRBYs, one DEL, the signal in one write: docs/PROTOCOL.md, "Native
// effects"). This test holds the merged effects to the scripts' end state,
// encodings included, on batches past the zset listpack limit (128), with
// members planted in the sets written, rows in both hash encodings, a row
// without state, and the signal list empty, holding one element and more.

// mergeSide is one executor running on its own queue of a shared server.
type mergeSide struct {
	t      *testing.T
	s      *valkeyserver.Server
	native bool
	q      string
	k      protocol.Keys
	conn   *valkeyserver.Conn // dialled on the first call: one per side, not one per call
}

// send runs one command on the side's connection.
func (e *mergeSide) send(args ...string) (any, error) {
	e.t.Helper()
	if e.conn == nil {
		c, err := e.s.Dial(ctxT(e.t))
		require.NoError(e.t, err)
		e.t.Cleanup(func() { _ = c.Close() })
		e.conn = c
	}
	return e.conn.Do(ctxT(e.t), args...)
}

// do runs verb v and returns its reply, an error reply rendered as a value.
func (e *mergeSide) do(v *protocol.Verb, args ...string) any {
	e.t.Helper()
	line := verbArgs(v, e.q, args...)
	if !e.native {
		line = append([]string{"EVAL", lua.Source(v)}, line[1:]...)
	}
	r, err := e.send(line...)
	if err != nil {
		return "error: " + err.Error()
	}
	return r
}

// plain runs a server command on the side's keys.
func (e *mergeSide) plain(args ...string) {
	e.t.Helper()
	if _, err := e.send(args...); err != nil {
		e.t.Fatalf("%q: %v", args, err)
	}
}

// claimed is CLAIM's reply as [id, token] pairs.
func claimed(r any) [][2]string {
	var out [][2]string
	for _, j := range r.([]any) {
		f := j.([]any)
		out = append(out, [2]string{f[0].(string), strconv.FormatInt(f[2].(int64), 10)})
	}
	return out
}

// queueDump reads every key of a queue logically, named by its suffix: type
// and encoding (strings excepted: their encoding is not a write's shape),
// whether it has a TTL, and its contents. Scores in active, delayed and dead
// are times of the call, so only their members are compared, sorted; a
// row's field at (the time of the ADD) is left out. Everything else is in
// the server's order: a listpack hash's fields, pending's members and
// scores, a list's elements. It reads in three pipelined round trips (the
// keys, their types, their contents), so a queue of thousands of keys is
// read in milliseconds; a key gone between them (its TTL ran out) is left
// out.
func queueDump(t *testing.T, s *valkeyserver.Server, k protocol.Keys) map[string]string {
	t.Helper()
	ctx := ctxT(t)
	c, err := s.Dial(ctx)
	require.NoError(t, err)
	defer c.Close()
	multi := func(cmds [][]string) []any {
		t.Helper()
		r, err := c.DoMulti(ctx, cmds...)
		require.NoError(t, err)
		for i, v := range r {
			if re, ok := v.(valkeyserver.ReplyError); ok {
				t.Fatalf("%q: %v", cmds[i], re)
			}
		}
		return r
	}
	keys := strs(multi([][]string{{"KEYS", k.Base + "*"}})[0])
	var meta [][]string
	for _, key := range keys {
		meta = append(meta, []string{"TYPE", key}, []string{"OBJECT", "ENCODING", key}, []string{"PTTL", key})
	}
	var reads [][]string
	type keyMeta struct{ key, typ, enc string }
	var kept []keyMeta
	if len(meta) > 0 {
		m := multi(meta)
		for i, key := range keys {
			typ, _ := m[3*i].(string)
			enc, _ := m[3*i+1].(string)
			var read []string
			switch typ {
			case "string":
				read = []string{"GET", key}
			case "list":
				read = []string{"LRANGE", key, "0", "-1"}
			case "hash":
				read = []string{"HGETALL", key}
			case "zset":
				read = []string{"ZRANGE", key, "0", "-1", "WITHSCORES"}
			case "none":
				continue // gone since KEYS
			default:
				read = []string{"PTTL", key} // a type the verbs never write: its type shows
			}
			if typ == "string" {
				enc = ""
			}
			enc += " ttl=" + fmt.Sprint(m[3*i+2].(int64) >= 0)
			kept = append(kept, keyMeta{key, typ, enc})
			reads = append(reads, read)
		}
	}
	out := map[string]string{}
	if len(reads) == 0 {
		return out
	}
	contents := multi(reads)
	for i, km := range kept {
		key, typ := km.key, km.typ
		suffix := strings.TrimPrefix(key, k.Base)
		var items []string
		switch typ {
		case "string":
			v, _ := contents[i].(string)
			items = []string{v}
		case "list":
			items = strs(contents[i])
		case "hash":
			all := strs(contents[i])
			for i := 0; i+1 < len(all); i += 2 {
				if strings.HasPrefix(suffix, protocol.SuffixJob) && all[i] == protocol.FieldAdded {
					continue
				}
				items = append(items, all[i]+"="+all[i+1])
			}
			if !strings.HasPrefix(km.enc, "listpack ") {
				slices.Sort(items)
			}
		case "zset":
			all := strs(contents[i])
			// pending, the lanes' sets, lanes and turns are scored by the
			// calls' arguments and reads, not the clock: their scores count
			scored := suffix == protocol.SuffixPending || suffix == protocol.SuffixTurns ||
				suffix == protocol.SuffixLanes || strings.HasPrefix(suffix, protocol.SuffixLane)
			for i := 0; i+1 < len(all); i += 2 {
				if scored {
					items = append(items, all[i]+"@"+all[i+1])
				} else {
					items = append(items, all[i])
				}
			}
			if !scored {
				slices.Sort(items)
			}
		}
		out[suffix] = fmt.Sprintf("%s %s %q", typ, km.enc, items)
	}
	return out
}

func strs(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

func TestMergedWritesMatchLua(t *testing.T) {
	skipInShort(t, "batches past the listpack limits compared with Lua")
	t.Parallel()
	s := startModule(t, valkeyserver.Options{})
	sides := [2]*mergeSide{}
	for i, native := range []bool{true, false} {
		q := map[bool]string{true: "native", false: "lua"}[native]
		sides[i] = &mergeSide{t: t, s: s, native: native, q: q, k: protocol.KeysOf(q)}
	}
	// step runs f on both sides, native first, and requires the same reply
	// and the same queue afterwards
	step := func(name string, f func(e *mergeSide) any) [2]any {
		t.Helper()
		var r [2]any
		for i, e := range sides {
			r[i] = f(e)
		}
		require.Equal(t, fmt.Sprintf("%#v", r[1]), fmt.Sprintf("%#v", r[0]), "%s: the replies differ (native, then Lua)", name)
		a, b := queueDump(t, s, sides[0].k), queueDump(t, s, sides[1].k)
		for key := range b {
			require.Contains(t, a, key, "%s: %s only on Lua's queue", name, key)
		}
		for key, v := range a {
			require.Equal(t, b[key], v, "%s: key %s (Lua, then native)", name, key)
		}
		return r
	}
	const n = 200
	step("install, a signal of one element, a delayed member planted", func(e *mergeSide) any {
		e.plain("RPUSH", e.k.Signal, "x")
		e.plain("ZADD", e.k.Delayed, "99999999999999", "160")
		return e.do(protocol.Install)
	})
	step("add: 150 to pending (empty: the signal), 50 delayed", func(e *mergeSide) any {
		var jobs [][]string
		for i := 1; i <= n; i++ {
			data := "job " + strconv.Itoa(i)
			if i%7 == 0 {
				data = strings.Repeat("d", 100) // a row past the hash listpack value limit
			}
			delay, attempts, unique, ttl := "0", "3", "", "0"
			if i > 150 {
				delay = "1"
			}
			if i%3 == 0 {
				attempts = "1"
			}
			if i%10 == 0 {
				unique, ttl = "u"+strconv.Itoa(i), "600000"
			}
			jobs = append(jobs, job(data, strconv.Itoa(i%5), delay, attempts, protocol.BackoffFixed, "0", unique, ttl))
		}
		return e.do(protocol.Add, addArgs(jobs...)...)
	})
	step("claim 140 with a 1 ms lease; a member of pending planted in active, a row without state", func(e *mergeSide) any {
		e.plain("ZADD", e.k.Active, "0", "7")
		e.plain("HDEL", e.k.Job("3"), protocol.FieldState)
		return e.do(protocol.Claim, "1", "140")
	})
	time.Sleep(20 * time.Millisecond)
	step("promote the 50 due", func(e *mergeSide) any { return e.do(protocol.Promote, "1000") })
	step("recover the 140 expired, to pending and to dead", func(e *mergeSide) any { return e.do(protocol.Recover, "1000") })
	r := step("claim every pending job", func(e *mergeSide) any { return e.do(protocol.Claim, "60000", "1000") })
	jobs := claimed(r[0])
	require.Greater(t, len(jobs), 128)
	step("log and complete, fail to retry, fail to dead", func(e *mergeSide) any {
		var out []any
		for i, j := range jobs {
			switch i % 4 {
			case 0:
				out = append(out, e.do(protocol.Log, j[0], j[1], "line", "10"), e.do(protocol.Complete, j[0], j[1], ""))
			case 1:
				out = append(out, e.do(protocol.Fail, j[0], j[1], "1", "boom"))
			case 2:
				out = append(out, e.do(protocol.Fail, j[0], j[1], "0", "bust"))
			}
		}
		return out
	})
	step("requeue a dead job with a signal of three elements", func(e *mergeSide) any {
		e.plain("RPUSH", e.k.Signal, "x", "y")
		return e.do(protocol.Requeue, "30")
	})
	step("resume with the signal empty", func(e *mergeSide) any {
		e.plain("DEL", e.k.Signal)
		return []any{e.do(protocol.Pause), e.do(protocol.Resume)}
	})
	step("remove a dead job holding its unique key", func(e *mergeSide) any { return e.do(protocol.Remove, "60", "0") })
}

// laneAddArgs is ADD's ARGV for jobs with the lane column: each job's
// eight values, then its lane.
func laneAddArgs(jobs ...[]string) []string {
	out := []string{strconv.Itoa(len(jobs)), "1", protocol.AddOptionLane}
	for _, j := range jobs {
		out = append(out, j...)
	}
	return out
}

// The lanes' merged writes (one ZADD per lane, one HSET and one HDEL of
// laneinfo, one ZADD and ZREM of lanes and of turns, CLAIM's one HSET meta)
// end as the scripts' lane by lane writes: laneinfo past the hash listpack
// limits (fields and a long lane name), lanes and turns past the zset ones.
func TestMergedLaneWritesMatchLua(t *testing.T) {
	skipInShort(t, "600 jobs over 150 lanes compared with Lua")
	t.Parallel()
	s := startModule(t, valkeyserver.Options{})
	sides := [2]*mergeSide{}
	for i, native := range []bool{true, false} {
		q := map[bool]string{true: "native", false: "lua"}[native]
		sides[i] = &mergeSide{t: t, s: s, native: native, q: q, k: protocol.KeysOf(q)}
	}
	step := func(name string, f func(e *mergeSide) any) [2]any {
		t.Helper()
		var r [2]any
		for i, e := range sides {
			r[i] = f(e)
		}
		require.Equal(t, fmt.Sprintf("%#v", r[1]), fmt.Sprintf("%#v", r[0]), "%s: the replies differ (native, then Lua)", name)
		a, b := queueDump(t, s, sides[0].k), queueDump(t, s, sides[1].k)
		for key := range b {
			require.Contains(t, a, key, "%s: %s only on Lua's queue", name, key)
		}
		for key, v := range a {
			require.Equal(t, b[key], v, "%s: key %s (Lua, then native)", name, key)
		}
		return r
	}
	laneOf := func(i int) string {
		switch {
		case i%4 == 0:
			return ""
		case i%37 == 1:
			return strings.Repeat("long-", 20) + strconv.Itoa(i%3) // past the listpack value limit
		}
		return "l" + strconv.Itoa(i%150)
	}
	step("install", func(e *mergeSide) any { return e.do(protocol.Install) })
	step("caps and a pause before any job", func(e *mergeSide) any {
		return []any{e.do(protocol.LaneCap, "l1", "1"), e.do(protocol.LaneCap, "l2", "2"), e.do(protocol.LanePause, "l3")}
	})
	step("add 600 jobs over 150 lanes and pending, some delayed", func(e *mergeSide) any {
		var jobs [][]string
		for i := 1; i <= 600; i++ {
			delay := "0"
			if i%11 == 0 {
				delay = "1"
			}
			attempts := "3"
			if i%5 == 0 {
				attempts = "1"
			}
			jobs = append(jobs, append(job("job "+strconv.Itoa(i), strconv.Itoa(i%3), delay, attempts), laneOf(i)))
		}
		return e.do(protocol.Add, laneAddArgs(jobs...)...)
	})
	step("claim 300 with a 1 ms lease", func(e *mergeSide) any { return e.do(protocol.Claim, "1", "300") })
	time.Sleep(20 * time.Millisecond)
	step("promote the due, to their lanes and pending", func(e *mergeSide) any { return e.do(protocol.Promote, "1000") })
	step("recover the expired, to their lanes and to dead", func(e *mergeSide) any { return e.do(protocol.Recover, "1000") })
	step("a cap lifted, a lane resumed, the rate set", func(e *mergeSide) any {
		return []any{e.do(protocol.LaneCap, "l1", "0"), e.do(protocol.LaneResume, "l3"), e.do(protocol.Rate, "700", "60000")}
	})
	r := step("claim up to the rate", func(e *mergeSide) any { return e.do(protocol.Claim, "60000", "1000") })
	jobs := claimed(r[0])
	require.Greater(t, len(jobs), 128)
	step("complete, completemany, fail to retry and to dead", func(e *mergeSide) any {
		var out []any
		var many []string
		for i, j := range jobs {
			switch i % 4 {
			case 0:
				out = append(out, e.do(protocol.Complete, j[0], j[1], ""))
			case 1:
				out = append(out, e.do(protocol.Fail, j[0], j[1], "1", "boom"))
			case 2:
				out = append(out, e.do(protocol.Fail, j[0], j[1], "0", "bust"))
			case 3:
				many = append(many, j[0], j[1], "")
			}
		}
		return append(out, e.do(protocol.CompleteMany, append([]string{strconv.Itoa(len(many) / 3)}, many...)...))
	})
	step("the rate cleared; claim the rest", func(e *mergeSide) any {
		return []any{e.do(protocol.Rate, "0", "0"), e.do(protocol.Claim, "60000", "1000")}
	})
	step("requeue the dead, remove some pending", func(e *mergeSide) any {
		var out []any
		for i := 1; i <= 600; i++ {
			out = append(out, e.do(protocol.Requeue, strconv.Itoa(i)))
		}
		for i := 1; i <= 600; i += 7 {
			out = append(out, e.do(protocol.Remove, strconv.Itoa(i), "0"))
		}
		return out
	})
	step("the read verbs", func(e *mergeSide) any {
		return []any{e.do(protocol.Stats), e.do(protocol.Lane, "l2"), e.do(protocol.Lanes, "", "1000"), e.do(protocol.Lanes, "l5", "3"),
			e.do(protocol.Inspect, "2")}
	})
}
