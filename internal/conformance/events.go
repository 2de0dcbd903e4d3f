package conformance

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// EVENTS' entries in the generic groups' tables (fixtures are in
// conformance.go).
func init() {
	argCount[protocol.Events] = 1
	firstValue[protocol.Events] = argRef{0, "max_len"}
	intDomains = append(intDomains, intDomain{protocol.Events, argRef{0, "max_len"}, 0, protocol.MaxEventsLen})
	planted[protocol.Events] = []string{"meta"}
}

// entryID is a stream entry id.
var entryID = regexp.MustCompile(`^\d+-\d+$`)

// eventsKey is the queue's events stream.
func (q *queue) eventsKey() string { return q.k.Fixed(protocol.SuffixEvents) }

// eventsOn turns job events on with bound max through the meta field EVENTS
// writes, so that a fixture's own jobs (added after) carry it.
func (q *queue) eventsOn(max string) {
	q.t.Helper()
	q.do("HSET", q.k.Meta, protocol.MetaEventsMax, max)
}

// eventLog is the queue's events stream, one entry's fields rendered per
// element (Bulks), after requiring every id to be a stream id: the ids are
// the server's clock.
func (q *queue) eventLog() []string {
	q.t.Helper()
	entries, err := q.cmd("XRANGE", q.eventsKey(), "-", "+").ToArray()
	require.NoError(q.t, err)
	out := []string{}
	for _, e := range entries {
		pair, err := e.ToArray()
		require.NoError(q.t, err)
		require.Len(q.t, pair, 2)
		id, err := pair[0].ToString()
		require.NoError(q.t, err)
		require.Regexp(q.t, entryID, id)
		fields, err := pair[1].AsStrSlice()
		require.NoError(q.t, err)
		out = append(out, Bulks(fields...))
	}
	return out
}

// event is one event's pairs in an entry: event <name> id <id> [field
// value].
func event(name, id string, fields ...string) []string {
	return append([]string{protocol.EventNameField, name, protocol.EventIDField, id}, fields...)
}

// evt is an entry of one event as eventLog renders it.
func evt(name, id string, fields ...string) string { return entry(event(name, id, fields...)) }

// entry is an entry holding events evs, in order, as eventLog renders it:
// brand emq, then n <count> when it holds more than one, then each event.
func entry(evs ...[]string) string {
	f := []string{protocol.EventBrandField, protocol.EventBrand}
	if len(evs) > 1 {
		f = append(f, protocol.EventCountField, strconv.Itoa(len(evs)))
	}
	for _, e := range evs {
		f = append(f, e...)
	}
	return Bulks(f...)
}

// eventsTop is the events stream's last generated id.
func (q *queue) eventsTop() string {
	q.t.Helper()
	info, err := q.cmd("XINFO", "STREAM", q.eventsKey()).AsMap()
	require.NoError(q.t, err)
	v := info["last-generated-id"]
	top, err := v.ToString()
	require.NoError(q.t, err)
	return top
}

// events is the events stream's job events in order, each as its pairs
// (event <name> id <id> [field value]): an entry of several split at each
// event field after its n pair.
func (q *queue) events() [][]string {
	q.t.Helper()
	entries, err := q.cmd("XRANGE", q.eventsKey(), "-", "+").ToArray()
	require.NoError(q.t, err)
	var out [][]string
	for _, e := range entries {
		pair, err := e.ToArray()
		require.NoError(q.t, err)
		f, err := pair[1].AsStrSlice()
		require.NoError(q.t, err)
		require.Equal(q.t, []string{protocol.EventBrandField, protocol.EventBrand}, f[:2])
		f = f[2:]
		if f[0] != protocol.EventCountField {
			out = append(out, f)
			continue
		}
		n, err := strconv.Atoi(f[1])
		require.NoError(q.t, err)
		start := len(out)
		for i := 2; i < len(f); i += 2 {
			if f[i] == protocol.EventNameField {
				out = append(out, nil)
			}
			out[len(out)-1] = append(out[len(out)-1], f[i], f[i+1])
		}
		require.Equal(q.t, n, len(out)-start, "the entry's n")
	}
	return out
}

// clearEvents deletes the events stream, so a scenario sees only what comes
// next.
func (q *queue) clearEvents() {
	q.t.Helper()
	q.do("DEL", q.eventsKey())
}

// eventVerbs are the verbs that publish job events, as their fixtures (run
// with events on) call them.
var eventVerbs = []*protocol.Verb{
	protocol.Add, protocol.Claim, protocol.Complete, protocol.CompleteMany, protocol.Fail,
	protocol.Recover, protocol.Promote, protocol.Remove, protocol.Requeue, protocol.Progress,
	protocol.Reschedule, protocol.Cancel,
}

// testEvents: EMQ.EVENTS and the job events every transition publishes.
func testEvents(t *testing.T, env Env) {
	v := protocol.Events
	scenario(t, env, "set, change and clear", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Int(1), q.call(v, "100"))
		require.Equal(t, Bulk("100"), q.r("HGET", q.k.Meta, protocol.MetaEventsMax))
		require.Equal(t, Int(1), q.call(v, "1000000"))
		require.Equal(t, Bulk("1000000"), q.r("HGET", q.k.Meta, protocol.MetaEventsMax))
		require.Equal(t, Int(1), q.call(v, "0"))
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Meta, protocol.MetaEventsMax))
		require.Equal(t, Int(1), q.unchanged(q.verb(v, "0")), "off when off writes nothing")
	})
	scenario(t, env, "the stream is not touched", func(t *testing.T, q *queue) {
		q.install()
		q.do("SET", q.eventsKey(), "not a stream")
		require.Equal(t, Int(1), q.call(v, "10"))
		require.Equal(t, Int(1), q.call(v, "0"))
		require.Equal(t, Bulk("not a stream"), q.r("GET", q.eventsKey()))
	})

	scenario(t, env, "off: a whole lifecycle touches no event key", func(t *testing.T, q *queue) {
		q.install()
		q.do("SET", q.eventsKey(), "not a stream")
		q.must(protocol.Add, addArgs(job{data: "a"}, job{data: "b", attempts: "1"}, job{data: "c", delay: "1"},
			job{data: "p"}, job{data: "k", parent: "4"})...)
		cs := q.claim(600000, 3)
		require.Len(t, cs, 3)
		q.must(protocol.Progress, cs[0].id, cs[0].token(), "50")
		q.must(protocol.Complete, cs[0].id, cs[0].token(), "")
		q.must(protocol.Fail, cs[1].id, cs[1].token(), "1", "boom")
		q.must(protocol.Requeue, cs[1].id)
		q.must(protocol.CompleteMany, "1", cs[2].id, cs[2].token(), "")
		pause(leaseWait)
		q.must(protocol.Promote, "10")
		q.must(protocol.Remove, "3", "0")
		require.Equal(t, Bulk("not a stream"), q.r("GET", q.eventsKey()))
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Job("4"), "ev"), "a row added with events off has no ev")
	})

	scenario(t, env, "add: one entry, one event per job, in order", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.must(protocol.Add, addArgs(job{data: "a"}, job{data: "b", delay: "60000"}, job{data: "c", lane: "l"},
			job{data: "p"}, job{data: "k", parent: "4"})...)
		require.Equal(t, []string{entry(
			event("added", "1", "state", "pending"),
			event("added", "2", "state", "delayed"),
			event("added", "3", "state", "pending"),
			event("added", "4", "state", "waiting"),
			event("added", "5", "state", "pending"),
		)}, q.eventLog())
		require.Equal(t, Bulk("1000"), q.r("HGET", q.k.Job("1"), "ev"))
	})
	scenario(t, env, "a job's lifecycle", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		id := q.add(job{data: "a", attempts: "2"})[0]
		c := q.claimOne()
		q.must(protocol.Progress, id, c.token(), "half\x00way")
		require.Equal(t, Bulk(protocol.FailRetry), q.call(protocol.Fail, id, c.token(), "1", "first"))
		pause(leaseWait)
		require.Equal(t, Int(1), q.call(protocol.Promote, "10"))
		c = q.claimOne()
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, id, c.token(), "1", "second"))
		q.must(protocol.Requeue, id)
		c = q.claimOne()
		q.must(protocol.Complete, id, c.token(), "done")
		require.Equal(t, []string{
			evt("added", id, "state", "pending"),
			evt("claimed", id, "att", "1"),
			evt("progress", id, "value", "half\x00way"),
			evt("retrying", id, "error", "first"),
			evt("promoted", id),
			evt("claimed", id, "att", "2"),
			evt("dead", id, "error", "second"),
			evt("requeued", id),
			evt("claimed", id, "att", "3"),
			evt("completed", id),
		}, q.eventLog())
	})
	scenario(t, env, "claim: reply order, rowless members publish nothing", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "a"}, job{data: "b", prio: "5"}, job{data: "c"})
		q.do("DEL", q.k.Job("3"))
		q.clearEvents()
		require.Len(t, q.claim(600000, 3), 2)
		require.Equal(t, []string{entry(event("claimed", "2", "att", "1"), event("claimed", "1", "att", "1"))}, q.eventLog())
	})
	scenario(t, env, "completemany: completed jobs only, in argument order", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"})
		cs := q.claim(600000, 3)
		q.clearEvents()
		require.Equal(t, Arr(Int(1), Int(-1), Int(1)), q.call(protocol.CompleteMany, "3",
			cs[2].id, cs[2].token(), "", cs[1].id, "99", "", cs[0].id, cs[0].token(), "r"))
		require.Equal(t, []string{entry(event("completed", "3"), event("completed", "1"))}, q.eventLog())
	})
	scenario(t, env, "recover: recovered and dead, in order", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "a", attempts: "1"}, job{data: "b"})
		require.Len(t, q.claim(1, 2), 2)
		pause(leaseWait)
		q.clearEvents()
		require.Equal(t, Arr(Int(1), Int(1)), q.call(protocol.Recover, "10"))
		require.Equal(t, []string{entry(event("dead", "1", "error", protocol.LeaseExpired), event("recovered", "2"))}, q.eventLog())
	})
	scenario(t, env, "remove: every job of the removal, the root first", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "p"}, job{data: "a", parent: "1"}, job{data: "b", parent: "1"})
		q.clearEvents()
		q.must(protocol.Remove, "1", "1")
		require.Equal(t, []string{entry(event("removed", "1"), event("removed", "2"), event("removed", "3"))}, q.eventLog())
	})
	scenario(t, env, "flows: a parent released, after its child", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "p"}, job{data: "a", parent: "1"})
		c := q.claimOne()
		q.clearEvents()
		q.must(protocol.Complete, c.id, c.token(), "r")
		require.Equal(t, []string{entry(event("completed", "2"), event("released", "1"))}, q.eventLog())
	})
	scenario(t, env, "flows: a parent not released publishes nothing", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "p"}, job{data: "a", parent: "1"}, job{data: "b", parent: "1"})
		c := q.claimOne()
		q.clearEvents()
		q.must(protocol.Complete, c.id, c.token(), "")
		require.Equal(t, []string{evt("completed", "2")}, q.eventLog())
	})
	scenario(t, env, "flows: parents that die, up the tree", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "g"}, job{data: "p", parent: "1"}, job{data: "c", parent: "2", attempts: "1"})
		c := q.claimOne()
		q.clearEvents()
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "1", "boom"))
		require.Equal(t, []string{entry(
			event("dead", "3", "error", "boom"),
			event("dead", "2", "error", "child 3 failed"),
			event("dead", "1", "error", "child 2 failed"),
		)}, q.eventLog())
	})
	scenario(t, env, "the decision is the job's: added while on, added while off", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "off"})
		q.must(v, "1000")
		q.add(job{data: "on"})
		q.must(v, "0")
		q.add(job{data: "off again"})
		cs := q.claim(600000, 3)
		require.Len(t, cs, 3)
		for _, c := range cs {
			q.must(protocol.Complete, c.id, c.token(), "")
		}
		require.Equal(t, []string{
			evt("added", "2", "state", "pending"),
			evt("claimed", "2", "att", "1"),
			evt("completed", "2"),
		}, q.eventLog())
	})
	for _, tc := range []struct {
		first, second string
		trimmed       bool
	}{{"1", "1000", true}, {"1000", "1", false}} {
		scenario(t, env, "an entry is trimmed with its first event's bound "+tc.first, func(t *testing.T, q *queue) {
			q.install()
			q.add(job{data: "a"}, job{data: "b", prio: "5"})
			q.do("HSET", q.k.Job("2"), "ev", tc.first) // claimed first
			q.do("HSET", q.k.Job("1"), "ev", tc.second)
			q.do("HSET", q.k.Meta, protocol.MetaRowOpts, protocol.RowOptsOn) // as an ADD of rows with ev sets it
			for range 300 {
				q.published("custom", "7")
			}
			require.Len(t, q.claim(600000, 2), 2)
			n, err := q.cmd("XLEN", q.eventsKey()).AsInt64()
			require.NoError(t, err)
			if tc.trimmed {
				require.Less(t, n, int64(301), "MAXLEN ~ 1 trims whole nodes")
			} else {
				require.Equal(t, int64(301), n, "MAXLEN ~ 1000 keeps every entry")
			}
			last := q.r("XREVRANGE", q.eventsKey(), "+", "-", "COUNT", "1")
			require.Equal(t, Arr(Arr(Bulk(q.eventsTop()), Bulks(strings.Fields(
				"brand emq n 2 event claimed id 2 att 1 event claimed id 1 att 1")...))), last)
		})
	}
	scenario(t, env, "a call of more events than an entry holds", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "100000")
		pairs := func(n int) []job { // parents and their children
			jobs := make([]job, 0, 2*n)
			for i := range n {
				jobs = append(jobs, job{data: "p"}, job{data: "k", parent: strconv.Itoa(2*i + 1)})
			}
			return jobs
		}
		q.add(pairs(protocol.MaxCount / 2)...)
		q.add(pairs(1)...)
		cs := q.claim(600000, protocol.MaxCount/2+1)
		require.Len(t, cs, protocol.MaxCount/2+1)
		q.clearEvents()
		args := []string{strconv.Itoa(len(cs))}
		var events [][]string
		for _, c := range cs {
			args = append(args, c.id, c.token(), "")
			events = append(events, event("completed", c.id))
		}
		for _, c := range cs {
			n, _ := strconv.Atoi(c.id)
			events = append(events, event("released", strconv.Itoa(n-1)))
		}
		// several entries: the top is read first, so a top with one id
		// left refuses the call with XADD's text, nothing written
		q.do("XADD", q.eventsKey(), "18446744073709551615-18446744073709551614", "brand", "emq")
		q.refuse(protocol.ErrStreamExhausted, q.verb(protocol.CompleteMany, args...))
		q.clearEvents()
		q.must(protocol.CompleteMany, args...)
		want := []string{}
		for s := 0; s < len(events); s += protocol.MaxEntryEvents {
			want = append(want, entry(events[s:min(s+protocol.MaxEntryEvents, len(events))]...))
		}
		require.Len(t, events, 2*len(cs))
		require.NotZero(t, len(events)%protocol.MaxEntryEvents, "a last entry of fewer events")
		require.Equal(t, want, q.eventLog(), "entries of MaxEntryEvents events at most, in order")
	})
	scenario(t, env, "promote: one entry for the jobs moved, in order", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "a", delay: "1"}, job{data: "b", delay: "1"}, job{data: "c", delay: "1"})
		pause(leaseWait)
		q.clearEvents()
		require.Equal(t, Int(3), q.call(protocol.Promote, "10"))
		require.Equal(t, []string{entry(event("promoted", "1"), event("promoted", "2"), event("promoted", "3"))}, q.eventLog())
		q.add(job{data: "d", delay: "1"}, job{data: "e", delay: "1"})
		pause(leaseWait)
		q.clearEvents()
		require.Equal(t, Arr(Int(2), Int(0)), q.call(protocol.PromoteAll, "10"))
		require.Equal(t, []string{entry(event("promoted", "4"), event("promoted", "5"))}, q.eventLog())
	})
	scenario(t, env, "single-event calls keep one event per entry", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		id := q.addOne("a")
		c := q.claimOne()
		q.must(protocol.Complete, id, c.token(), "")
		require.Equal(t, []string{evt("added", id, "state", "pending"), evt("claimed", id, "att", "1"), evt("completed", id)},
			q.eventLog())
	})
	scenario(t, env, "a stream without entries, or read by a group, is taken", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.do("XGROUP", "CREATE", q.eventsKey(), "g", "$", "MKSTREAM")
		q.add(job{data: "a"}, job{data: "b"})
		q.do("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", q.eventsKey(), ">")
		q.add(job{data: "c"})
		require.Equal(t, []string{entry(event("added", "1", "state", "pending"), event("added", "2", "state", "pending")),
			evt("added", "3", "state", "pending")}, q.eventLog())
	})
	scenario(t, env, "a refused batch writes nothing", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "a"}, job{data: "b"})
		q.do("XADD", q.eventsKey(), "18446744073709551615-18446744073709551615", "brand", "emq")
		q.refuse(protocol.ErrStreamExhausted, q.verb(protocol.Claim, "600000", "2"))
	})
	scenario(t, env, "publish and the job events share the stream", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.published("custom", "7", "k", "v")
		q.add(job{data: "a"})
		require.Equal(t, []string{evt("custom", "7", "k", "v"), evt("added", "1", "state", "pending")}, q.eventLog())
	})
	scenario(t, env, "a nothing-to-do call publishes nothing", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.do("SET", q.eventsKey(), "not a stream")
		require.Equal(t, Arr(), q.call(protocol.Claim, "1000", "10"))
		require.Equal(t, Int(0), q.call(protocol.Promote, "10"))
		require.Equal(t, Arr(Int(0), Int(0)), q.call(protocol.Recover, "10"))
	})

	// every verb that publishes, with events on: the call's own refusals of
	// the stream, each writing nothing (the transition does not happen
	// without its event)
	for _, ev := range eventVerbs {
		t.Run(ev.Name, func(t *testing.T) {
			t.Parallel()
			scenario(t, env, "publishes", func(t *testing.T, q *queue) {
				q.eventsOn("1000")
				args := fixtures[ev](q)
				before := len(q.eventLog())
				require.False(t, isErr(q.call(ev, args...)))
				require.Greater(t, len(q.eventLog()), before)
			})
			scenario(t, env, "events of another type", func(t *testing.T, q *queue) {
				q.eventsOn("1000")
				args := fixtures[ev](q)
				q.plant(q.eventsKey(), "stream")
				q.refuse(protocol.ErrWrongType, q.verb(ev, args...))
			})
			scenario(t, env, "events of another brand are appended to", func(t *testing.T, q *queue) {
				q.eventsOn("1000")
				args := fixtures[ev](q)
				q.clearEvents()
				q.do("XADD", q.eventsKey(), "1-1", "brand", "bull")
				require.False(t, isErr(q.call(ev, args...)))
				log := q.eventLog()
				require.Greater(t, len(log), 1)
				require.Equal(t, Bulks("brand", "bull"), log[0], "the foreign entry stays first")
				// PUBLISH still refuses the stream
				q.refuse(protocol.ErrKind(protocol.Publish.Name), q.verb(protocol.Publish, "custom", "1"))
			})
			scenario(t, env, "no id left", func(t *testing.T, q *queue) {
				q.eventsOn("1000")
				args := fixtures[ev](q)
				q.clearEvents()
				q.do("XADD", q.eventsKey(), "18446744073709551615-18446744073709551615", "brand", "emq")
				q.refuse(protocol.ErrStreamExhausted, q.verb(ev, args...))
			})
			scenario(t, env, "no id left, no entry left", func(t *testing.T, q *queue) {
				q.eventsOn("1000")
				args := fixtures[ev](q)
				q.clearEvents()
				q.do("XADD", q.eventsKey(), "1-1", "brand", "emq")
				q.do("XSETID", q.eventsKey(), "18446744073709551615-18446744073709551615")
				q.do("XDEL", q.eventsKey(), "1-1")
				require.Equal(t, "18446744073709551615-18446744073709551615", q.eventsTop())
				q.refuse(protocol.ErrStreamExhausted, q.verb(ev, args...))
			})
			for _, have := range []string{"R", "W", ""} {
				scenario(t, env, "events "+orDefault(have, "denied"), func(t *testing.T, q *queue) {
					q.eventsOn("1000")
					args := fixtures[ev](q)
					user := q.as(map[string]string{protocol.SuffixEvents: have})
					user.refuse(protocol.ErrNoPerm, user.verb(ev, args...))
				})
			}
			scenario(t, env, "off: events of another type are not read", func(t *testing.T, q *queue) {
				args := fixtures[ev](q)
				q.plant(q.eventsKey(), "stream")
				require.False(t, isErr(q.call(ev, args...)))
			})
			scenario(t, env, "off: events denied are not needed", func(t *testing.T, q *queue) {
				args := fixtures[ev](q)
				user := q.as(map[string]string{protocol.SuffixEvents: ""})
				require.False(t, isErr(user.call(ev, args...)))
			})
		})
	}
	scenario(t, env, "a batch takes one id", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.do("XADD", q.eventsKey(), "18446744073709551615-18446744073709551614", "brand", "emq")
		q.must(protocol.Add, addArgs(job{data: "a"}, job{data: "b"}, job{data: "c"})...)
		require.Equal(t, "18446744073709551615-18446744073709551615", q.eventsTop())
		q.refuse(protocol.ErrStreamExhausted, q.verb(protocol.Add, addArgs(job{data: "a"}, job{data: "b"})...))
	})
	scenario(t, env, "the stream's refusal comes last", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.eventsOn("1000")
		q.do("HSET", q.k.Job(c.id), "ev", "1000")
		q.plant(q.eventsKey(), "stream")
		q.refuse(protocol.ErrStale(protocol.Complete.Name), q.verb(protocol.Complete, c.id, "99", ""))
		q.do("HSET", q.k.Stats, "completed", "x")
		q.refuse(protocol.ErrHashNotInteger, q.verb(protocol.Complete, c.id, c.token(), ""))
	})
	scenario(t, env, "a row's ev read like a number", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"})
		q.do("HSET", q.k.Job("1"), "ev", "0")
		q.do("HSET", q.k.Job("2"), "ev", "01")
		q.do("HSET", q.k.Job("3"), "ev", "5")
		q.do("HSET", q.k.Meta, protocol.MetaRowOpts, protocol.RowOptsOn) // as an ADD of rows with ev sets it
		require.Len(t, q.claim(600000, 3), 3)
		require.Equal(t, []string{evt("claimed", "3", "att", "1")}, q.eventLog())
	})
}

// isErr reports whether a rendered reply is an error.
func isErr(r string) bool { return len(r) >= 7 && r[:7] == "(error)" }

// testEventInvariants: a fixed pseudo-random run of every publishing verb
// with events on (lanes, flows, retained jobs included), then the events
// replayed: every job's last event names the state its row holds (or its
// absence), and each counter of stats is the number of its events.
func testEventInvariants(t *testing.T, env Env) {
	for seed := uint64(1); seed <= 4; seed++ {
		scenario(t, env, "seed "+strconv.FormatUint(seed, 10), func(t *testing.T, q *queue) {
			q.install()
			q.must(protocol.Events, "100000")
			if seed%2 == 0 {
				q.must(protocol.Retain, "600000", "0", "0", "0", "0")
			}
			rng := rand.New(rand.NewPCG(seed, 11))
			pick := func(key string) string {
				ids, err := q.cmd("ZRANGE", key, "0", "-1").AsStrSlice()
				require.NoError(t, err)
				if len(ids) == 0 {
					return ""
				}
				return ids[rng.IntN(len(ids))]
			}
			token := func(id string) string {
				v, _ := q.cmd("HGET", q.k.Job(id), "att").ToString()
				return v
			}
			for range 200 {
				switch rng.IntN(11) {
				case 0, 1:
					n := 1 + rng.IntN(3)
					jobs := make([]job, n)
					for i := range jobs {
						jobs[i] = job{data: "d", attempts: strconv.Itoa(1 + rng.IntN(2))}
						switch rng.IntN(5) {
						case 0:
							jobs[i].delay = "1"
						case 1:
							jobs[i].lane = "l"
						case 2:
							if i > 0 {
								jobs[i].parent = "1"
								jobs[i].onfail = []string{"", "ignore", "continue"}[rng.IntN(3)]
							}
						}
					}
					for i := 1; i < n; i++ {
						if jobs[i].parent != "" {
							jobs[0].delay = "" // a parent has no delay
						}
					}
					q.add(jobs...)
				case 2, 3:
					lease := 600000
					if rng.IntN(3) == 0 {
						lease = 1
					}
					q.claim(lease, 1+rng.IntN(3))
				case 4:
					if id := pick(q.k.Active); id != "" {
						q.must(protocol.Complete, id, token(id), "r")
					}
				case 5:
					if id := pick(q.k.Active); id != "" {
						q.must(protocol.CompleteMany, "1", id, token(id), "")
					}
				case 6:
					if id := pick(q.k.Active); id != "" {
						q.must(protocol.Fail, id, token(id), strconv.Itoa(rng.IntN(2)), "x")
					}
				case 7:
					pause(leaseWait)
					q.must(protocol.Recover, "10")
					q.must(protocol.Promote, "10")
				case 8:
					if id := pick(q.k.Dead); id != "" {
						q.must(protocol.Requeue, id)
					}
				case 9:
					if id := pick(q.k.Pending); id != "" {
						q.must(protocol.Remove, id, "1")
					} else if id := pick(q.k.Fixed(protocol.SuffixWaiting)); id != "" {
						q.must(protocol.Remove, id, "1")
					}
				case 10:
					if id := pick(q.k.Active); id != "" {
						q.must(protocol.Progress, id, token(id), "p")
					}
				}
			}

			// replay
			implied := map[string]string{
				protocol.EventClaimed: protocol.StateActive, protocol.EventRetrying: protocol.StateDelayed,
				protocol.EventDead: protocol.StateDead, protocol.EventRecovered: protocol.StatePending,
				protocol.EventPromoted: protocol.StatePending, protocol.EventRequeued: protocol.StatePending,
				protocol.EventReleased: protocol.StatePending, protocol.EventRemoved: "",
			}
			last, counts := map[string]string{}, map[string]int{}
			for _, f := range q.events() {
				name, id := f[1], f[3]
				counts[name]++
				switch name {
				case protocol.EventAdded:
					last[id] = f[5]
				case protocol.EventCompleted:
					last[id] = ""
					if seed%2 == 0 {
						last[id] = protocol.StateCompleted
					}
				case protocol.EventProgress:
					require.Equal(t, protocol.StateActive, last[id], "progress of job %s", id)
				default:
					state, ok := implied[name]
					require.True(t, ok, "event %q", name)
					last[id] = state
				}
			}
			seq, err := q.cmd("HGET", q.k.Meta, "seq").ToString()
			require.NoError(t, err)
			n, _ := strconv.Atoi(seq)
			for i := 1; i <= n; i++ {
				id := strconv.Itoa(i)
				state := q.hget(id, "state")
				require.Equal(t, state, last[id], "job %s: its row's state and its last event", id)
			}
			stats := map[string]int{}
			for i, name := range protocol.StatsCounters {
				v, _ := q.cmd("HGET", q.k.Stats, name).ToString()
				stats[protocol.StatsCounters[i]], _ = strconv.Atoi(v)
			}
			require.Equal(t, stats["added"], counts[protocol.EventAdded])
			require.Equal(t, stats["completed"], counts[protocol.EventCompleted])
			require.Equal(t, stats["retried"], counts[protocol.EventRetrying])
			require.Equal(t, stats["dead"], counts[protocol.EventDead])
			require.Equal(t, stats["recovered"], counts[protocol.EventRecovered])
			require.Equal(t, stats["requeued"], counts[protocol.EventRequeued])
			require.Equal(t, stats["removed"], counts[protocol.EventRemoved])
			require.Positive(t, counts[protocol.EventClaimed])
			t.Logf("events: %v", counts)
		})
	}
}
