package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// The writes the key API makes (module argument key-writes yes, the
// default) leave what the same writes through RM_Call leave (key-writes
// no): the same replies, the same queue, encodings included, and the same
// job events, on the primary and on its replica (the replicated effects),
// the same AOF but for the times and stream ids, the same keyspace events
// in the same order, the same WATCH outcomes and the same blocked readers
// woken. The dirty count is the one thing they count apart: one
// change per replicated write, where the commands count one per field or
// member.

// writesSide is one server with its replica and a subscriber of its
// keyspace events.
type writesSide struct {
	mergeSide
	replica *valkeyserver.Server
	events  chan valkey.PubSubMessage
	marks   int
}

func startWritesSide(t *testing.T, keyWrites string) *writesSide {
	t.Helper()
	s := startModule(t, valkeyserver.Options{AOF: true, ModuleArgs: []string{"key-writes", keyWrites}})
	r := startModule(t, valkeyserver.Options{ReplicaOf: s.Addr(), ModuleArgs: []string{"key-writes", keyWrites}})
	require.NoError(t, r.WaitReplicaSync(ctxT(t)))
	valkeytest.Do(t, s, "CONFIG", "SET", "notify-keyspace-events", "KEAn")
	// stream nodes split by their entry count alone, not by bytes, which
	// hold the ids' deltas from the two servers' clocks: the approximate
	// trims then remove the same entries on both sides
	valkeytest.Do(t, s, "CONFIG", "SET", "stream-node-max-bytes", "0", "stream-node-max-entries", "8")
	w := &writesSide{mergeSide: mergeSide{t: t, s: s, native: true, q: "kw", k: protocol.KeysOf("kw")}, replica: r,
		events: make(chan valkey.PubSubMessage, 1<<16)}
	c := valkeytest.Client(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		_ = c.Receive(ctx, c.B().Psubscribe().Pattern("__keyevent@0__:*", "mark").Build(), func(m valkey.PubSubMessage) { w.events <- m })
	}()
	// a mark published before the subscription is in place is lost:
	// publish again until one comes back
	for ready := false; !ready; {
		valkeytest.Do(t, s, "PUBLISH", "mark", "ready")
		select {
		case m := <-w.events:
			ready = m.Channel == "mark"
		case <-time.After(50 * time.Millisecond):
		case <-ctxT(t).Done():
			t.Fatal("no subscription")
		}
	}
	return w
}

// eventsSince returns the keyspace events (event name and key) up to a new
// mark, in order.
func (w *writesSide) eventsSince() []string {
	w.t.Helper()
	w.marks++
	mark := "m" + strconv.Itoa(w.marks)
	valkeytest.Do(w.t, w.s, "PUBLISH", "mark", mark)
	var got []string
	for {
		select {
		case m := <-w.events:
			if m.Channel == "mark" {
				if m.Message == mark {
					return got
				}
				continue
			}
			got = append(got, strings.TrimPrefix(m.Channel, "__keyevent@0__:")+" "+m.Message)
		case <-ctxT(w.t).Done():
			w.t.Fatalf("mark %s never came back", mark)
		}
	}
}

// aofTimes masks the times an AOF holds (a job's at, a lease's deadline,
// a due time: milliseconds since 1970, 13 digits, and the events' stream
// ids), which the two servers read from their clocks a moment apart.
var aofTimes = regexp.MustCompile(`\r\n1[0-9]{12}(-[0-9]+)?\r\n`)

// streamDump returns a stream's entries, each its fields and values, with
// its id when withIDs (the two sides' ids differ by their clocks).
func streamDump(t *testing.T, s *valkeyserver.Server, key string, withIDs bool) []string {
	t.Helper()
	var out []string
	for _, e := range valkeytest.Do(t, s, "XRANGE", key, "-", "+").([]any) {
		entry := e.([]any)
		line := strings.Join(strs(entry[1]), " ")
		if withIDs {
			line = entry[0].(string) + " " + line
		}
		out = append(out, line)
	}
	return out
}

// deadline is EXTEND's reply, a time of the server's clock, as "deadline".
func deadline(r any) any {
	if ms, ok := r.(int64); ok && ms > 1e12 {
		return "deadline"
	}
	return r
}

func TestKeyWritesMatchRMCall(t *testing.T) {
	skipInShort(t, "batches of hundreds of jobs compared call by call with a replica")
	t.Parallel()
	sides := [2]*writesSide{startWritesSide(t, "yes"), startWritesSide(t, "no")}
	events := sides[0].k.Base + protocol.SuffixEvents
	notified, trims := 0, 0
	step := func(name string, f func(e *mergeSide) any) [2]any {
		t.Helper()
		var r [2]any
		for i, e := range sides {
			r[i] = f(&e.mergeSide)
		}
		require.Equal(t, fmt.Sprintf("%#v", r[1]), fmt.Sprintf("%#v", r[0]), "%s: the replies differ (key API, then RM_Call)", name)
		require.Equal(t, queueDump(t, sides[1].s, sides[1].k), queueDump(t, sides[0].s, sides[0].k), "%s: the queues", name)
		require.Equal(t, streamDump(t, sides[1].s, events, false), streamDump(t, sides[0].s, events, false), "%s: the events", name)
		ev := [2][]string{sides[0].eventsSince(), sides[1].eventsSince()}
		require.Equal(t, ev[1], ev[0], "%s: the keyspace events", name)
		notified += len(ev[0])
		for _, n := range ev[0] {
			if strings.HasPrefix(n, "xtrim ") {
				trims++
			}
		}
		return r
	}
	const n = 200
	step("install, job events on", func(e *mergeSide) any { return []any{e.do(protocol.Install), e.do(protocol.Events, "1000")} })
	step("add 200: rows past the hash listpack value, pending past the zset listpack, delayed, unique", func(e *mergeSide) any {
		var jobs [][]string
		for i := 1; i <= n; i++ {
			data := "job " + strconv.Itoa(i)
			if i%7 == 0 {
				data = strings.Repeat("d", 100)
			}
			delay, unique, ttl := "0", "", "0"
			if i > 150 {
				delay = "1"
			}
			if i%10 == 0 {
				unique, ttl = "u"+strconv.Itoa(i), "600000"
			}
			jobs = append(jobs, job(data, strconv.Itoa(i%5), delay, strconv.Itoa(1+i%3), protocol.BackoffFixed, "0", unique, ttl))
		}
		return e.do(protocol.Add, addArgs(jobs...)...)
	})
	step("add one at a time", func(e *mergeSide) any {
		var out []any
		for i := range 5 {
			out = append(out, e.do(protocol.Add, addArgs(job("single "+strconv.Itoa(i)))...))
		}
		return out
	})
	// the one alone leases 1 ms and the rest 2, so its deadline comes first
	// on both servers whether or not the two claims fall in one millisecond
	// (RECOVER takes the expired in deadline order)
	step("claim 140 with a short lease, one alone", func(e *mergeSide) any {
		return []any{e.do(protocol.Claim, "1", "1"), e.do(protocol.Claim, "2", "139")}
	})
	time.Sleep(20 * time.Millisecond)
	step("promote the due", func(e *mergeSide) any { return e.do(protocol.Promote, "1000") })
	step("recover the expired, to pending and to dead", func(e *mergeSide) any { return e.do(protocol.Recover, "1000") })
	r := step("claim every pending job", func(e *mergeSide) any { return e.do(protocol.Claim, "60000", "1000") })
	jobs := claimed(r[0])
	require.Greater(t, len(jobs), 128)
	step("extend, log and complete, fail to retry and to dead, complete many, a stale token", func(e *mergeSide) any {
		var out []any
		var many []string
		for i, j := range jobs {
			switch i % 5 {
			case 0:
				out = append(out, deadline(e.do(protocol.Extend, j[0], j[1], "60000")), e.do(protocol.Log, j[0], j[1], "line", "10"),
					e.do(protocol.Complete, j[0], j[1], ""))
			case 1:
				out = append(out, e.do(protocol.Fail, j[0], j[1], "1", "boom"))
			case 2:
				out = append(out, e.do(protocol.Fail, j[0], j[1], "0", "bust"))
			case 3:
				many = append(many, j[0], j[1], "")
			case 4:
				out = append(out, e.do(protocol.Complete, j[0], "999", ""))
			}
		}
		return append(out, e.do(protocol.CompleteMany, append([]string{strconv.Itoa(len(many) / 3)}, many...)...))
	})
	step("requeue, remove, pause and resume", func(e *mergeSide) any {
		var out []any
		for i := 1; i <= n; i += 9 {
			out = append(out, e.do(protocol.Requeue, strconv.Itoa(i)), e.do(protocol.Remove, strconv.Itoa(i+1), "0"))
		}
		return append(out, e.do(protocol.Pause), e.do(protocol.Resume))
	})
	r = step("claim the rest", func(e *mergeSide) any { return e.do(protocol.Claim, "60000", "1000") })
	step("complete every claimed job, the last one emptying active", func(e *mergeSide) any {
		var out []any
		for _, j := range claimed(r[0]) {
			out = append(out, e.do(protocol.Complete, j[0], j[1], ""))
		}
		return out
	})
	// a job's events keep the bound it was added with: far over a lower
	// one, the first trim is RM_Call's (see xadd_write), then the key API's
	require.Greater(t, len(streamDump(t, sides[0].s, events, false)), 110)
	step("events bound lowered", func(e *mergeSide) any { return e.do(protocol.Events, "5") })
	step("add, claim and complete one at a time", func(e *mergeSide) any {
		var out []any
		for i := range 30 {
			out = append(out, e.do(protocol.Add, addArgs(job("late "+strconv.Itoa(i)))...))
			for _, j := range claimed(e.do(protocol.Claim, "60000", "1")) {
				out = append(out, e.do(protocol.Complete, j[0], j[1], ""))
			}
		}
		return out
	})
	require.Greater(t, notified, 1000, "keyspace events seen")
	require.Greater(t, trims, 5, "xtrim events seen")
	// the events' XADDs went through the key API but the one far over the
	// lowered bound; RM_Call's count in INFO commandstats
	calls := [2]string{}
	for i, e := range sides {
		calls[i], _, _ = strings.Cut(infoField(t, e.s, "commandstats", "cmdstat_xadd"), ",")
	}
	require.Equal(t, "calls=1", calls[0], "XADDs through RM_Call with the key API on")
	require.NotEqual(t, "calls=1", calls[1])
	for _, e := range sides {
		valkeytest.WaitReplicated(t, e.s, e.replica)
		require.Equal(t, queueDump(t, e.s, e.k), queueDump(t, e.replica, e.k), "the replica of %s", e.s.Addr())
		require.Equal(t, streamDump(t, e.s, events, true), streamDump(t, e.replica, events, true), "the events on the replica of %s", e.s.Addr())
	}
	require.Less(t, len(streamDump(t, sides[0].s, events, false)), 30, "trimmed to the lowered bound")
	require.Equal(t, queueDump(t, sides[1].replica, sides[1].k), queueDump(t, sides[0].replica, sides[0].k), "the replicas")
	aof := [2]string{aofTimes.ReplaceAllString(readAOF(t, sides[0].s), "\r\nT\r\n"), aofTimes.ReplaceAllString(readAOF(t, sides[1].s), "\r\nT\r\n")}
	require.Equal(t, aof[1], aof[0], "the AOFs")
	require.Contains(t, aof[0], "$4\r\nHSET\r\n")
	require.Contains(t, aof[0], "$4\r\nXADD\r\n")
	require.Contains(t, aof[0], "$6\r\nMAXLEN\r\n$1\r\n=\r\n", "the trim made exact")
	dirty := [2]int{}
	for i, e := range sides {
		dirty[i], _ = strconv.Atoi(infoField(t, e.s, "persistence", "rdb_changes_since_last_save"))
	}
	require.Positive(t, dirty[0])
	require.LessOrEqual(t, dirty[0], dirty[1], "the key API counts one change per replicated write")
}

// A verb's write signals the keys it changes and only those, alike on
// both paths: a WATCH of a key a verb changed aborts the transaction, of
// one it did not (a ZREM of no member, a DEL of no key) does not.
func TestKeyWritesWatch(t *testing.T) {
	t.Parallel()
	var outcomes [2][]bool
	for i, kw := range []string{"yes", "no"} {
		s := startModule(t, valkeyserver.Options{ModuleArgs: []string{"key-writes", kw}})
		e := &mergeSide{t: t, s: s, native: true, q: "w", k: protocol.KeysOf("w")}
		w, err := s.Dial(ctxT(t))
		require.NoError(t, err)
		aborted := func(key string, f func()) bool {
			_, err := w.Do(ctxT(t), "WATCH", key)
			require.NoError(t, err)
			f()
			res, err := w.DoMulti(ctxT(t), []string{"MULTI"}, []string{"PING"}, []string{"EXEC"})
			require.NoError(t, err)
			return res[2] == nil
		}
		e.do(protocol.Install)
		var got []bool
		for _, key := range []string{e.k.Pending, e.k.Stats, e.k.Meta, e.k.Job("1"), e.k.Active, e.k.Job("9")} {
			got = append(got, aborted(key, func() { e.do(protocol.Add, addArgs(job("a"))...) }))
		}
		var lease [][2]string
		for _, key := range []string{e.k.Pending, e.k.Active, e.k.Job("1"), e.k.Job("2"), e.k.Stats} {
			got = append(got, aborted(key, func() { lease = claimed(e.do(protocol.Claim, "60000", "1")) }))
		}
		for _, key := range []string{e.k.Active, e.k.Job("1"), e.k.Job("2"), e.k.Stats, e.k.Pending, e.k.Logs("1")} {
			got = append(got, aborted(key, func() {
				for _, l := range lease {
					e.do(protocol.Complete, l[0], l[1], "")
				}
			}))
			lease = nil
		}
		outcomes[i] = got
		w.Close()
	}
	require.Equal(t, outcomes[1], outcomes[0], "WATCH aborted (key API, then RM_Call)")
	require.Contains(t, outcomes[0], true)
	require.Contains(t, outcomes[0], false)
}

// An events entry written through the key API wakes a reader blocked on
// the stream, whether the entry creates the stream or joins it, as through
// RM_Call.
func TestKeyWritesXaddWakesReaders(t *testing.T) {
	t.Parallel()
	for _, kw := range []string{"yes", "no"} {
		s := startModule(t, valkeyserver.Options{ModuleArgs: []string{"key-writes", kw}})
		e := &mergeSide{t: t, s: s, native: true, q: "wake", k: protocol.KeysOf("wake")}
		events := e.k.Base + protocol.SuffixEvents
		e.do(protocol.Install)
		require.Equal(t, int64(1), e.do(protocol.Events, "1000"))
		r, err := s.Dial(ctxT(t))
		require.NoError(t, err)
		for i, state := range []string{"absent", "present"} {
			read := make(chan any, 1)
			go func() {
				v, err := r.Do(ctxT(t), "XREAD", "BLOCK", "0", "STREAMS", events, "$")
				if err != nil {
					v = err
				}
				read <- v
			}()
			waitInfo(t, s, "clients", "blocked_clients", "1")
			e.do(protocol.Add, addArgs(job("wake "+strconv.Itoa(i)))...)
			select {
			case v := <-read:
				require.Contains(t, fmt.Sprint(v), protocol.EventAdded, "key-writes %s, stream %s", kw, state)
			case <-ctxT(t).Done():
				t.Fatalf("key-writes %s, stream %s: the blocked reader was not woken", kw, state)
			}
		}
		if kw == "yes" {
			require.Empty(t, infoField(t, s, "commandstats", "cmdstat_xadd"), "an XADD through RM_Call")
		}
		r.Close()
	}
}
