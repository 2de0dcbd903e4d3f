package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testRowOpts: meta rowopts decides whether COMPLETE, COMPLETEMANY and CLAIM
// read a row's lane, parent, deps, keep, wait and ev: ADD (and
// SCHEDULE.FIRE) writes 0 with a queue's first rows when none stores them,
// 2 when they store ev alone (events on) and the queue is marked 0 or new,
// and 1 once a job stores one of the others; 0 skips them all and 2 all but
// ev, so a row given them by hand on a queue marked 0 is handled as a plain
// job's; an absent flag reads as 0, and ADD writes it over the absence as
// over 0 (docs/PROTOCOL.md, "The queue's row flag").
func testRowOpts(t *testing.T, env Env) {
	rowopts := func(q *queue) string { return q.r("HGET", q.k.Meta, protocol.MetaRowOpts) }
	plainJobs := []job{{data: "a"}, {data: "b", lane: "", wait: "0", kind: "k", unique: "u", delay: "5"}}
	scenario(t, env, "the first add of plain jobs sets meta rowopts 0", func(t *testing.T, q *queue) {
		q.install()
		q.add(plainJobs...)
		require.Equal(t, Bulk(protocol.RowOptsOff), rowopts(q))
		q.add(job{data: "c"})
		require.Equal(t, []string{"seq", "3", protocol.MetaJobFields, protocol.JobFieldsOn, protocol.MetaRowOpts, protocol.RowOptsOff}, q.hgetall(q.k.Meta), "written once")
	})
	scenario(t, env, "the first add after other meta writes sets meta rowopts 0", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.Pause)
		q.add(job{data: "a"})
		require.Equal(t, Bulk(protocol.RowOptsOff), rowopts(q), "no seq: no job was ever added")
	})
	scenario(t, env, "an add of plain jobs to a queue with seq and no meta rowopts sets it 0", func(t *testing.T, q *queue) {
		q.install()
		q.do("HSET", q.k.Meta, "seq", "5")
		q.add(plainJobs...)
		require.Equal(t, Bulk(protocol.RowOptsOff), rowopts(q), "absent is read as 0 and written")
		q.add(job{data: "l", lane: "l"})
		require.Equal(t, Bulk(protocol.RowOptsOn), rowopts(q))
	})
	for _, v := range []string{protocol.RowOptsOn, "2", ""} {
		scenario(t, env, "the first add of plain jobs leaves a meta rowopts "+v+" it finds", func(t *testing.T, q *queue) {
			q.install()
			q.do("HSET", q.k.Meta, protocol.MetaRowOpts, v)
			q.add(job{data: "a"})
			require.Equal(t, Bulk(v), rowopts(q), "never set back to 0")
		})
	}
	scenario(t, env, "each writer of the row fields sets meta rowopts", func(t *testing.T, q *queue) {
		q.install()
		adds := map[string]func(){
			"lane": func() { q.add(job{data: "a", lane: "l"}) },
			"flow": func() { q.add(job{data: "p"}, job{data: "c", parent: "1"}) },
			"wait": func() { q.add(job{data: "w", wait: "1000"}) },
			"keep": func() {
				q.must(protocol.Retain, "600000", "0", "0", "0", "0")
				q.add(job{data: "k"})
				q.must(protocol.Retain, "0", "0", "0", "0", "0")
			},
		}
		for name, add := range adds {
			q.do("HSET", q.k.Meta, protocol.MetaRowOpts, protocol.RowOptsOff)
			add()
			require.Equal(t, Bulk(protocol.RowOptsOn), rowopts(q), name)
			q.add(job{data: "plain"})
			require.Equal(t, Bulk(protocol.RowOptsOn), rowopts(q), "%s: never cleared", name)
		}
		for _, v := range []string{protocol.RowOptsEvents, "3"} {
			q.do("HSET", q.k.Meta, protocol.MetaRowOpts, v)
			q.add(job{data: "g"})
			require.Equal(t, Bulk(v), rowopts(q), "a plain add leaves %s", v)
			q.add(job{data: "h", lane: "l"})
			require.Equal(t, Bulk(protocol.RowOptsOn), rowopts(q), "%s is rewritten", v)
		}
	})
	scenario(t, env, "an add with events on sets meta rowopts 2, then a lane job 1", func(t *testing.T, q *queue) {
		q.install()
		q.eventsOn("100")
		q.add(job{data: "a"}, job{data: "b", unique: "u", delay: "5", kind: "k"})
		require.Equal(t, Bulk(protocol.RowOptsEvents), rowopts(q), "a queue's first rows")
		q.add(job{data: "c"})
		require.Equal(t, Bulk(protocol.RowOptsEvents), rowopts(q), "written once")
		q.do("HDEL", q.k.Meta, protocol.MetaEventsMax)
		q.add(job{data: "d"})
		require.Equal(t, Bulk(protocol.RowOptsEvents), rowopts(q), "events off: never set back to 0")
		q.eventsOn("100")
		q.add(job{data: "e", lane: "l"})
		require.Equal(t, Bulk(protocol.RowOptsOn), rowopts(q), "a lane")
		q.add(job{data: "f"})
		require.Equal(t, Bulk(protocol.RowOptsOn), rowopts(q), "never set back to 2")
	})
	scenario(t, env, "an add with events on marks a plain queue 2", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"})
		require.Equal(t, Bulk(protocol.RowOptsOff), rowopts(q))
		q.eventsOn("100")
		q.add(job{data: "b"})
		require.Equal(t, Bulk(protocol.RowOptsEvents), rowopts(q))
	})
	for _, v := range []string{protocol.RowOptsOn, "00", ""} {
		scenario(t, env, "an add with events on leaves a meta rowopts "+v+" it finds", func(t *testing.T, q *queue) {
			q.install()
			q.do("HSET", q.k.Meta, protocol.MetaRowOpts, v)
			q.eventsOn("100")
			q.add(job{data: "a"})
			require.Equal(t, Bulk(v), rowopts(q))
		})
	}
	scenario(t, env, "an add with events on to a queue with seq and no meta rowopts sets it 2", func(t *testing.T, q *queue) {
		q.install()
		q.do("HSET", q.k.Meta, "seq", "5")
		q.eventsOn("100")
		q.add(job{data: "a"})
		require.Equal(t, Bulk(protocol.RowOptsEvents), rowopts(q))
	})
	scenario(t, env, "an add with events and retention on sets meta rowopts 1", func(t *testing.T, q *queue) {
		q.install()
		q.eventsOn("100")
		q.add(job{data: "a"})
		require.Equal(t, Bulk(protocol.RowOptsEvents), rowopts(q))
		q.must(protocol.Retain, "600000", "0", "0", "0", "0")
		q.add(job{data: "b"})
		require.Equal(t, Bulk(protocol.RowOptsOn), rowopts(q))
	})
	scenario(t, env, "an add with events on and a wait sets meta rowopts 1 on a new queue", func(t *testing.T, q *queue) {
		q.install()
		q.eventsOn("100")
		q.add(job{data: "a"}, job{data: "w", wait: "1000"})
		require.Equal(t, Bulk(protocol.RowOptsOn), rowopts(q))
	})
	scenario(t, env, "fire of a plain template with events on sets meta rowopts 2", func(t *testing.T, q *queue) {
		q.install()
		q.eventsOn("100")
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1000"}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(st.last + 1)
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, st.last+1, st.last+1001, [2]int64{st.last + 1, 0})...))
		require.Equal(t, Bulk(protocol.RowOptsEvents), rowopts(q))
	})
	scenario(t, env, "the first add of a lane job sets meta rowopts 1", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b", lane: "l"})
		require.Equal(t, Bulk(protocol.RowOptsOn), rowopts(q))
	})
	scenario(t, env, "add refused writes no meta rowopts", func(t *testing.T, q *queue) {
		q.install()
		q.refuse(protocol.ErrAddDuplicateInBatch, q.verb(protocol.Add, addArgs(job{data: "a", unique: "u"}, job{data: "b", unique: "u"})...))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Meta), "a fresh queue's refused add")
		q.add(job{data: "a", unique: "u"})
		q.refuse(protocol.ErrAddDuplicate("1"), q.verb(protocol.Add, addArgs(job{data: "b", lane: "l", unique: "u"})...))
		require.Equal(t, Bulk(protocol.RowOptsOff), rowopts(q), "a refused lane job")
	})
	scenario(t, env, "fire of a lane template sets meta rowopts 1", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1000", opts: []string{protocol.AddOptionLane, "l"}}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(st.last + 1)
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, st.last+1, st.last+1001, [2]int64{st.last + 1, 0})...))
		require.Equal(t, Bulk(protocol.RowOptsOn), rowopts(q))
	})
	scenario(t, env, "fire of a plain template to a new queue sets meta rowopts 0", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, args...))
		require.Equal(t, Bulk(protocol.RowOptsOff), rowopts(q))
	})

	// plant gives row id, by hand, a lane, a retention mark, an events bound,
	// a parent count with a kids set, a parent and a wait.
	plant := func(q *queue, id string) {
		q.do("HSET", q.k.Job(id), protocol.FieldLane, "l", protocol.FieldKeep, "1", protocol.FieldEvents, "100",
			protocol.FieldDeps, "1", protocol.FieldParent, "999", protocol.FieldWait, "60000")
		q.do("ZADD", q.k.Kids(id), "7", "7")
	}
	// notKept requires job id completed with its planted lane, parent,
	// deps, keep and wait not read: its row and kids gone (no retention, no
	// flow keys read), no lane counted, no outcome kept.
	notKept := func(t *testing.T, q *queue, id string) {
		t.Helper()
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job(id)), "not retained")
		require.Equal(t, Int(1), q.r("EXISTS", q.k.Kids(id)), "deps not read: kids left")
		require.Equal(t, Int(0), q.r("EXISTS", q.completedKey()))
		require.Equal(t, Int(0), q.r("EXISTS", q.fixed(protocol.SuffixLaneInfo)), "no lane accounting")
		require.Equal(t, Int(0), q.r("EXISTS", q.doneKey(id)), "no outcome kept")
	}
	// plain requires job id completed as a plain job: as notKept, and no
	// event.
	plain := func(t *testing.T, q *queue, id string) {
		t.Helper()
		notKept(t, q, id)
		require.Equal(t, Int(0), q.r("EXISTS", q.eventsKey()), "no events")
	}
	// full requires job id completed with its planted fields read: retained
	// (keep 1), its completed event published.
	full := func(t *testing.T, q *queue, id string) {
		t.Helper()
		require.Equal(t, Bulk(protocol.StateCompleted), q.r("HGET", q.k.Job(id), protocol.FieldState), "retained")
		require.Equal(t, Bulks(id), q.r("ZRANGE", q.completedKey(), "0", "-1"))
		require.Contains(t, q.eventLog(), evt(protocol.EventCompleted, id))
	}
	// planted claims job 1 of a plain queue, plants its fields, and returns
	// the claim.
	planted := func(q *queue) claimed {
		c := q.active(job{data: "a"})
		require.Equal(q.t, Bulk(protocol.RowOptsOff), rowopts(q))
		plant(q, c.id)
		return c
	}
	scenario(t, env, "complete of a plain queue reads no planted row field", func(t *testing.T, q *queue) {
		c := planted(q)
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		plain(t, q, c.id)
	})
	scenario(t, env, "completemany of a plain queue reads no planted row field", func(t *testing.T, q *queue) {
		c := planted(q)
		require.Equal(t, outcomes(1), q.call(protocol.CompleteMany, manyResults(c.with(""))...))
		plain(t, q, c.id)
	})
	// an absent flag reads as 0, whatever meta's seq says
	scenario(t, env, "complete with no meta rowopts reads no planted row field", func(t *testing.T, q *queue) {
		c := planted(q)
		q.do("HDEL", q.k.Meta, protocol.MetaRowOpts)
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		plain(t, q, c.id)
	})
	scenario(t, env, "completemany with no meta rowopts reads no planted row field", func(t *testing.T, q *queue) {
		c := planted(q)
		q.do("HDEL", q.k.Meta, protocol.MetaRowOpts)
		require.Equal(t, outcomes(1), q.call(protocol.CompleteMany, manyResults(c.with(""))...))
		plain(t, q, c.id)
	})
	for _, flag := range []struct {
		name string
		set  func(q *queue)
	}{
		{"meta rowopts 1", func(q *queue) { q.do("HSET", q.k.Meta, protocol.MetaRowOpts, protocol.RowOptsOn) }},
		{"meta rowopts 00", func(q *queue) { q.do("HSET", q.k.Meta, protocol.MetaRowOpts, "00") }},
		{"meta rowopts empty", func(q *queue) { q.do("HSET", q.k.Meta, protocol.MetaRowOpts, "") }},
		{"meta not a hash", func(q *queue) {
			q.do("DEL", q.k.Meta)
			q.do("SET", q.k.Meta, "x")
		}},
	} {
		scenario(t, env, "complete with "+flag.name+" reads the planted row fields", func(t *testing.T, q *queue) {
			c := planted(q)
			q.do("DEL", q.k.Kids(c.id))
			q.do("HDEL", q.k.Job(c.id), protocol.FieldDeps, protocol.FieldParent, protocol.FieldLane, protocol.FieldWait)
			flag.set(q)
			require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
			full(t, q, c.id)
		})
		scenario(t, env, "completemany with "+flag.name+" reads the planted row fields", func(t *testing.T, q *queue) {
			c := planted(q)
			q.do("DEL", q.k.Kids(c.id))
			q.do("HDEL", q.k.Job(c.id), protocol.FieldDeps, protocol.FieldParent, protocol.FieldLane, protocol.FieldWait)
			flag.set(q)
			require.Equal(t, outcomes(1), q.call(protocol.CompleteMany, manyResults(c.with(""))...))
			full(t, q, c.id)
		})
	}
	// evOnly requires job id completed with its planted ev read and its
	// other planted fields not: its completed event published, but its row
	// and kids gone as a plain job's, no lane counted, no outcome kept.
	evOnly := func(t *testing.T, q *queue, id string) {
		t.Helper()
		notKept(t, q, id)
		require.Equal(t, []string{evt(protocol.EventCompleted, id)}, q.eventLog())
	}
	scenario(t, env, "complete with meta rowopts 2 reads the planted ev alone", func(t *testing.T, q *queue) {
		c := planted(q)
		q.do("HSET", q.k.Meta, protocol.MetaRowOpts, protocol.RowOptsEvents)
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		evOnly(t, q, c.id)
	})
	scenario(t, env, "completemany with meta rowopts 2 reads the planted ev alone", func(t *testing.T, q *queue) {
		c := planted(q)
		q.do("HSET", q.k.Meta, protocol.MetaRowOpts, protocol.RowOptsEvents)
		require.Equal(t, outcomes(1), q.call(protocol.CompleteMany, manyResults(c.with(""))...))
		evOnly(t, q, c.id)
	})
	scenario(t, env, "completemany with meta rowopts 2 publishes the jobs with ev", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"})
		q.eventsOn("100")
		q.add(job{data: "b"}, job{data: "c"})
		require.Equal(t, Bulk(protocol.RowOptsEvents), rowopts(q))
		cs := q.claim(600000, 3)
		require.Len(t, cs, 3)
		q.do("DEL", q.eventsKey())
		require.Equal(t, outcomes(1, 1, 1), q.call(protocol.CompleteMany, manyResults(cs[0].with(""), cs[1].with("r"), cs[2].with(""))...))
		require.Equal(t, []string{entry(event(protocol.EventCompleted, "2"), event(protocol.EventCompleted, "3"))}, q.eventLog())
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("1"), q.k.Job("2"), q.k.Job("3")))
	})
	scenario(t, env, "complete of a parent once meta rowopts is set deletes its flow keys", func(t *testing.T, q *queue) {
		c := planted(q)
		q.do("HDEL", q.k.Job(c.id), protocol.FieldKeep, protocol.FieldParent, protocol.FieldLane, protocol.FieldWait, protocol.FieldEvents)
		q.do("HSET", q.k.Meta, protocol.MetaRowOpts, protocol.RowOptsOn)
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job(c.id), q.k.Kids(c.id)))
	})
	scenario(t, env, "completemany with meta denied reads the planted row fields", func(t *testing.T, q *queue) {
		c := planted(q)
		q.do("DEL", q.k.Kids(c.id))
		q.do("HDEL", q.k.Job(c.id), protocol.FieldDeps, protocol.FieldParent, protocol.FieldLane, protocol.FieldWait)
		u := q.as(map[string]string{protocol.SuffixMeta: ""})
		require.Equal(t, outcomes(1), u.call(protocol.CompleteMany, manyResults(c.with(""))...))
		full(t, q, c.id)
	})
	scenario(t, env, "complete with meta denied reads the planted row fields", func(t *testing.T, q *queue) {
		c := planted(q)
		q.do("DEL", q.k.Kids(c.id))
		q.do("HDEL", q.k.Job(c.id), protocol.FieldDeps, protocol.FieldParent, protocol.FieldLane, protocol.FieldWait)
		u := q.as(map[string]string{protocol.SuffixMeta: ""})
		require.Equal(t, Int(1), u.call(protocol.Complete, c.id, c.token(), ""))
		full(t, q, c.id)
	})
	for _, flag := range []struct{ name, hash string }{{"a plain queue", "HSET"}, {"no meta rowopts", "HDEL"}} {
		scenario(t, env, "claim of "+flag.name+" reads no planted ev", func(t *testing.T, q *queue) {
			q.install()
			q.add(job{data: "a"}, job{data: "b"})
			q.do("HSET", q.k.Job("1"), protocol.FieldEvents, "100")
			q.do("HSET", q.k.Job("2"), protocol.FieldEvents, "100")
			if flag.hash == "HDEL" {
				q.do("HDEL", q.k.Meta, protocol.MetaRowOpts)
			}
			require.Len(t, q.claim(600000, 1), 1)
			require.Equal(t, Int(0), q.r("EXISTS", q.eventsKey()), "no claimed event")
			require.Equal(t, Arr(Arr(Bulk("2"), Bulk("b"), Int(1), Int(3), Nil, Int(0), Nil, Nil)), q.claimExt(1))
			require.Equal(t, Int(0), q.r("EXISTS", q.eventsKey()), "no claimed event with ext")
		})
	}
	for _, flag := range []struct{ name, value string }{
		{"meta rowopts 1", protocol.RowOptsOn}, {"meta rowopts 2", protocol.RowOptsEvents}, {"meta rowopts empty", ""},
	} {
		scenario(t, env, "claim with "+flag.name+" reads ev", func(t *testing.T, q *queue) {
			q.install()
			q.add(job{data: "a"}, job{data: "b", kind: "k"})
			q.do("HSET", q.k.Job("1"), protocol.FieldEvents, "100")
			q.do("HSET", q.k.Job("2"), protocol.FieldEvents, "100")
			q.do("HSET", q.k.Meta, protocol.MetaRowOpts, flag.value)
			require.Len(t, q.claim(600000, 1), 1)
			require.Equal(t, Arr(Arr(Bulk("2"), Bulk("b"), Int(1), Int(3), Bulk("k"), Int(0), Nil, Nil)), q.claimExt(1))
			require.Equal(t, []string{
				evt(protocol.EventClaimed, "1", protocol.EventAttField, "1"),
				evt(protocol.EventClaimed, "2", protocol.EventAttField, "1", protocol.EventKindField, "k"),
			}, q.eventLog())
		})
	}
	// a queue with events on flagged 1 (as a lane job's ADD leaves it) and
	// rows with a lane: every field stays read, and ADD with events on
	// never writes 2 over 1
	scenario(t, env, "a queue with events on flagged 1 keeps every row field read", func(t *testing.T, q *queue) {
		q.install()
		q.eventsOn("100")
		q.add(job{data: "a"}, job{data: "b"})
		q.do("HSET", q.k.Meta, protocol.MetaRowOpts, protocol.RowOptsOn)
		q.add(job{data: "c"})
		require.Equal(t, Bulk(protocol.RowOptsOn), rowopts(q), "not rewritten to 2")
		cs := q.claim(600000, 3)
		require.Len(t, cs, 3)
		q.do("HSET", q.k.Job(cs[0].id), protocol.FieldLane, "l")
		q.do("HSET", q.k.Job(cs[1].id), protocol.FieldLane, "l")
		q.do("HSET", q.fixed(protocol.SuffixLaneInfo), protocol.FieldLaneActive+"l", "2")
		q.do("DEL", q.eventsKey())
		require.Equal(t, Int(1), q.call(protocol.Complete, cs[0].id, cs[0].token(), ""))
		require.Equal(t, []string{protocol.FieldLaneActive + "l", "1"}, q.laneinfo(), "lane read")
		require.Equal(t, outcomes(1, 1), q.call(protocol.CompleteMany, manyResults(cs[1].with(""), cs[2].with(""))...))
		require.Empty(t, q.laneinfo(), "lane read")
		require.Equal(t, []string{evt(protocol.EventCompleted, cs[0].id), entry(event(protocol.EventCompleted, cs[1].id), event(protocol.EventCompleted, cs[2].id))}, q.eventLog())
	})
	// rows with lanes, a parent with deps and a child with a wait, all
	// retained and with events: the ADD flags the queue 1, and every row
	// field is read
	scenario(t, env, "a queue of lanes, a flow, retention and events is claimed and completed with every row field read", func(t *testing.T, q *queue) {
		q.install()
		q.eventsOn("100")
		q.must(protocol.Retain, "600000", "0", "0", "0", "0")
		q.add(job{data: "a", lane: "l"}, job{data: "b", lane: "l"}, job{data: "p"}, job{data: "c", parent: "3", wait: "60000"})
		require.Equal(t, Bulk(protocol.RowOptsOn), rowopts(q))
		cs := map[string]claimed{}
		for range 3 {
			got := q.claim(600000, 1)
			require.Len(t, got, 1)
			c := got[0]
			cs[c.id] = c
			log := q.eventLog()
			require.Equal(t, evt(protocol.EventClaimed, c.id, protocol.EventAttField, "1"), log[len(log)-1], "claimed event of %s", c.id)
		}
		require.Len(t, cs, 3)
		require.Equal(t, []string{protocol.FieldLaneActive + "l", "2"}, q.laneinfo())
		require.Equal(t, Int(1), q.call(protocol.Complete, "1", cs["1"].token(), ""))
		require.Contains(t, q.eventLog(), evt(protocol.EventCompleted, "1"))
		require.Equal(t, []string{protocol.FieldLaneActive + "l", "1"}, q.laneinfo(), "lane count exact")
		n := len(q.eventLog())
		require.Equal(t, outcomes(1, 1), q.call(protocol.CompleteMany, manyResults(cs["2"].with(""), cs["4"].with("r"))...))
		require.Greater(t, len(q.eventLog()), n, "completemany published")
		require.Empty(t, q.laneinfo(), "lane count exact")
		for _, id := range []string{"1", "2", "4"} {
			require.Equal(t, Bulk(protocol.StateCompleted), q.r("HGET", q.k.Job(id), protocol.FieldState), "%s retained", id)
		}
		require.Equal(t, Int(3), q.r("ZCARD", q.completedKey()))
		require.Equal(t, Bulk(protocol.StatePending), q.r("HGET", q.k.Job("3"), protocol.FieldState), "parent released")
		require.Equal(t, Int(0), q.r("ZCARD", q.waitingKey()))
		require.Equal(t, Int(1), q.r("EXISTS", q.doneKey("4")), "the child's outcome kept")
	})
}
