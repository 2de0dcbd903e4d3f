package conformance

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// eventKind is an event's kind (its kind pair, after event, id and its
// own field), and whether it has one.
func eventKind(f []string) (string, bool) {
	for i := 4; i+1 < len(f); i += 2 {
		if f[i] == protocol.EventKindField {
			return f[i+1], true
		}
	}
	return "", false
}

// kindRows sets kind "k<id>" on every job row of the queue, and meta
// jobfields as an ADD of such jobs does; it returns the kinds by id.
func (q *queue) kindRows() map[string]string {
	q.t.Helper()
	keys, err := q.cmd("KEYS", q.k.Job("*")).AsStrSlice()
	require.NoError(q.t, err)
	kinds := map[string]string{}
	for _, k := range keys {
		id := strings.TrimPrefix(k, q.k.Job(""))
		if _, err := strconv.ParseUint(id, 10, 64); err != nil || id == "0" {
			continue // job:<id>:results and the like
		}
		kinds[id] = "k" + id
		q.do("HSET", k, protocol.FieldKind, kinds[id])
	}
	q.do("HSET", q.k.Meta, protocol.MetaJobFields, protocol.JobFieldsOn)
	return kinds
}

// testEventKinds: every job event carries its job's kind, the row's (ADD's
// own column for the jobs it adds), and an entry splits at
// protocol.MaxEntryArgs.
func testEventKinds(t *testing.T, env Env) {
	v := protocol.Events
	scenario(t, env, "kinds: a lifecycle with a kind, and a job without", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "a", attempts: "2", kind: "email"}, job{data: "b"})
		cs := q.claim(600000, 2)
		require.Len(t, cs, 2)
		q.must(protocol.Progress, "1", cs[0].token(), "half")
		require.Equal(t, Bulk(protocol.FailRetry), q.call(protocol.Fail, "1", cs[0].token(), "1", "first"))
		pause(leaseWait)
		require.Equal(t, Int(1), q.call(protocol.Promote, "10"))
		c := q.claimOne()
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, "1", c.token(), "1", "second"))
		q.must(protocol.Requeue, "1")
		c = q.claimOne()
		q.must(protocol.Complete, "1", c.token(), "done")
		q.must(protocol.Complete, "2", cs[1].token(), "done")
		require.Equal(t, []string{
			entry(event("added", "1", "state", "pending", "kind", "email"), event("added", "2", "state", "pending")),
			entry(event("claimed", "1", "att", "1", "kind", "email"), event("claimed", "2", "att", "1")),
			evt("progress", "1", "value", "half", "kind", "email"),
			evt("retrying", "1", "error", "first", "kind", "email"),
			evt("promoted", "1", "kind", "email"),
			evt("claimed", "1", "att", "2", "kind", "email"),
			evt("dead", "1", "error", "second", "kind", "email"),
			evt("requeued", "1", "kind", "email"),
			evt("claimed", "1", "att", "3", "kind", "email"),
			evt("completed", "1", "kind", "email"),
			evt("completed", "2"),
		}, q.eventLog())
	})
	scenario(t, env, "kinds: claim, extended or not, and before any job stored one", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "a"}, job{data: "b"})
		// no job stored a kind (meta jobfields not 1): a kind planted is
		// not read, as CLAIM's extended reply does not read it
		q.do("HSET", q.k.Job("1"), "kind", "planted")
		q.clearEvents()
		require.Equal(t, Arr(Arr(Bulk("1"), Bulk("a"), Int(1), Int(3), Nil, Int(0), Nil, Nil)), q.claimExt(1))
		require.Equal(t, []string{evt("claimed", "1", "att", "1")}, q.eventLog())
		// the rest of its life reads its row's
		q.must(protocol.Complete, "1", "1", "")
		require.Equal(t, evt("completed", "1", "kind", "planted"), q.eventLog()[1])
		// once one has: the extended read's kind, and the plain claim's
		// read from the row
		q.add(job{data: "c", kind: "sms"}, job{data: "d", kind: "push"})
		q.clearEvents()
		q.claim(600000, 1) // job 2, without a kind
		q.claim(600000, 1) // job 3
		require.Equal(t, Arr(Arr(Bulk("4"), Bulk("d"), Int(1), Int(3), Bulk("push"), Int(0), Nil, Nil)), q.claimExt(1))
		require.Equal(t, []string{
			evt("claimed", "2", "att", "1"),
			evt("claimed", "3", "att", "1", "kind", "sms"),
			evt("claimed", "4", "att", "1", "kind", "push"),
		}, q.eventLog())
	})
	scenario(t, env, "kinds: a parent's events carry its own", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "g", kind: "report"}, job{data: "p", parent: "1"}, job{data: "c", parent: "2", attempts: "1", kind: "part"})
		c := q.claimOne()
		q.clearEvents()
		require.Equal(t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "1", "boom"))
		require.Equal(t, []string{entry(
			event("dead", "3", "error", "boom", "kind", "part"),
			event("dead", "2", "error", "child 3 failed"),
			event("dead", "1", "error", "child 2 failed", "kind", "report"),
		)}, q.eventLog())
	})
	scenario(t, env, "kinds: as stored, empty included", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "1000")
		q.add(job{data: "a", kind: "\x00{k}:\xff"}, job{data: "b"})
		q.do("HSET", q.k.Job("2"), "kind", "")
		q.clearEvents()
		q.must(protocol.Remove, "1", "1")
		q.must(protocol.Remove, "2", "1")
		require.Equal(t, []string{evt("removed", "1", "kind", "\x00{k}:\xff"), evt("removed", "2", "kind", "")}, q.eventLog())
	})
	// COMPLETE and COMPLETEMANY read the kind in their row read while meta
	// rowopts is 2, with HGET row kind under any other value: the events
	// are the same
	for _, rowopts := range []string{protocol.RowOptsEvents, protocol.RowOptsOn} {
		scenario(t, env, "kinds: completions with rowopts "+rowopts, func(t *testing.T, q *queue) {
			q.install()
			q.must(v, "1000")
			jobs := []job{{data: "a", kind: "k"}, {data: "b"}, {data: "c", kind: "x"}, {data: "d", kind: "\x00{k}:\xff"}}
			if rowopts == protocol.RowOptsOn {
				jobs = append(jobs, job{data: "e", wait: "60000"}) // a wait: rowopts 1
			}
			q.add(jobs...)
			got, err := q.cmd("HGET", q.k.Meta, protocol.MetaRowOpts).ToString()
			require.NoError(t, err)
			require.Equal(t, rowopts, got, "meta rowopts")
			q.do("HSET", q.k.Job("3"), "kind", "") // as stored, empty included
			cs := q.claim(600000, 4)
			require.Len(t, cs, 4)
			q.clearEvents()
			require.Equal(t, Arr(Int(1), Int(1), Int(1)), q.call(protocol.CompleteMany, "3",
				cs[0].id, cs[0].token(), "", cs[1].id, cs[1].token(), "", cs[2].id, cs[2].token(), ""))
			q.must(protocol.Complete, cs[3].id, cs[3].token(), "")
			require.Equal(t, []string{
				entry(event("completed", "1", "kind", "k"), event("completed", "2"), event("completed", "3", "kind", "")),
				evt("completed", "4", "kind", "\x00{k}:\xff"),
			}, q.eventLog())
		})
	}
	scenario(t, env, "kinds: an entry holds at most MaxEntryArgs arguments", func(t *testing.T, q *queue) {
		q.install()
		q.must(v, "100000")
		jobs := make([]job, protocol.MaxCount)
		var events [][]string
		for i := range jobs {
			jobs[i] = job{data: "d"}
			if i%2 == 0 {
				jobs[i].kind = "k"
			}
		}
		q.add(jobs...)
		cs := q.claim(600000, protocol.MaxCount)
		require.Len(t, cs, protocol.MaxCount)
		for _, c := range cs {
			e := event("claimed", c.id, "att", "1")
			if n, _ := strconv.Atoi(c.id); n%2 == 1 {
				e = append(e, "kind", "k")
			}
			events = append(events, e)
		}
		// 6 arguments an event, 8 with a kind: the first entry takes the
		// events while they hold at most 6000, 857 of them (429 of 8 and
		// 428 of 6: 6000)
		want := []string{entry(events[:857]...), entry(events[857:]...)}
		require.Equal(t, want, q.eventLog()[2:], "after the ADD's two entries")
		require.Len(t, q.eventLog(), 4)
	})
	// every verb that publishes: each event carries the kind its job's row
	// holds when the call starts; the jobs ADD adds, its own (none here)
	for _, ev := range append(eventVerbs[:len(eventVerbs):len(eventVerbs)],
		protocol.PromoteAll, protocol.Retry, protocol.RemoveDead, protocol.RequeueDead) {
		scenario(t, env, "kinds: "+ev.Name+" carries the row's", func(t *testing.T, q *queue) {
			q.eventsOn("1000")
			args := fixtures[ev](q)
			kinds := q.kindRows()
			q.clearEvents()
			require.False(t, isErr(q.call(ev, args...)))
			evs := q.events()
			require.NotEmpty(t, evs)
			for _, f := range evs {
				kind, ok := eventKind(f)
				want, has := kinds[f[3]]
				require.Equal(t, has, ok, "event %v", f)
				require.Equal(t, want, kind, "event %v", f)
			}
		})
	}
}
