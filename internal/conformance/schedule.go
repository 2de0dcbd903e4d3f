package conformance

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// The schedule verbs' entries in the generic groups' tables (fixtures,
// values, types, ACL), added here so the tables' own files stay as they are.
func init() {
	fixtures[protocol.ScheduleSet] = func(q *queue) []string {
		q.install()
		return sched{}.args()
	}
	fixtures[protocol.SchedulePause] = func(q *queue) []string {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		return []string{fixtureSchedule}
	}
	fixtures[protocol.ScheduleResume] = func(q *queue) []string {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		q.must(protocol.SchedulePause, fixtureSchedule)
		return []string{fixtureSchedule}
	}
	fixtures[protocol.ScheduleRemove] = fixtures[protocol.SchedulePause]
	fixtures[protocol.ScheduleList] = func(q *queue) []string {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		return []string{"", "10"}
	}
	fixtures[protocol.ScheduleDue] = func(q *queue) []string {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		return []string{"10"}
	}
	fixtures[protocol.ScheduleFire] = func(q *queue) []string {
		q.install()
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1000"}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(st.last + 1)
		return fireArgs(fixtureSchedule, st, st.last+1, st.last+1001, [2]int64{st.last + 1, 0})
	}
	argCount[protocol.ScheduleSet] = protocol.ScheduleSetFixed
	argCount[protocol.SchedulePause] = 1
	argCount[protocol.ScheduleResume] = 1
	argCount[protocol.ScheduleRemove] = 1
	argCount[protocol.ScheduleList] = 2
	argCount[protocol.ScheduleDue] = 1
	argCount[protocol.ScheduleFire] = 8
	// "x" is a schedule id: the id verbs' "values before the fence" are
	// scenarios of testSchedules
	firstValue[protocol.ScheduleSet] = argRef{1, "kind"}
	firstValue[protocol.ScheduleList] = argRef{1, "count"}
	firstValue[protocol.ScheduleDue] = argRef{0, "limit"}
	firstValue[protocol.ScheduleFire] = argRef{1, "rev"}
	intDomains = append(intDomains,
		intDomain{protocol.ScheduleSet, argRef{4, "jitter"}, 0, protocol.MaxScheduleJitter},
		intDomain{protocol.ScheduleSet, argRef{5, "start"}, 0, protocol.MaxScheduleTime},
		intDomain{protocol.ScheduleSet, argRef{7, "limit"}, 0, protocol.MaxScheduleLimit},
		intDomain{protocol.ScheduleSet, argRef{8, "grace"}, 0, protocol.MaxScheduleGrace},
		intDomain{protocol.ScheduleSet, argRef{9, "catchup"}, 0, protocol.MaxScheduleCatch},
		intDomain{protocol.ScheduleSet, argRef{11, "priority"}, 0, protocol.MaxPriority},
		intDomain{protocol.ScheduleSet, argRef{12, "attempts"}, 1, protocol.MaxAttempts},
		intDomain{protocol.ScheduleSet, argRef{14, "backoff_ms"}, 0, protocol.MaxBackoffMS},
		intDomain{protocol.ScheduleList, argRef{1, "count"}, 1, protocol.MaxCount},
		intDomain{protocol.ScheduleDue, argRef{0, "limit"}, 1, protocol.MaxCount},
		intDomain{protocol.ScheduleFire, argRef{7, "jitter"}, 0, protocol.MaxScheduleJitter},
	)
	textDomains = append(textDomains,
		textDomain{protocol.ScheduleSet, argRef{0, "id"}, scheduleIDsOK, scheduleIDsBad, nil},
		textDomain{protocol.ScheduleSet, argRef{1, "kind"}, []string{"cron"}, []string{"", "Cron", "every ", "at"}, nil},
		textDomain{protocol.ScheduleSet, argRef{2, "spec"}, []string{"x", strings.Repeat("c", protocol.MaxCronSpec)},
			[]string{"", strings.Repeat("c", protocol.MaxCronSpec+1)}, nil},
		textDomain{protocol.ScheduleSet, argRef{3, "tz"}, []string{"", "Europe/Paris", strings.Repeat("z", protocol.MaxTimeZone)},
			[]string{strings.Repeat("z", protocol.MaxTimeZone+1)}, nil},
		textDomain{protocol.ScheduleSet, argRef{13, "backoff"}, []string{"fixed", "exponential"}, []string{"", "linear"}, nil},
		textDomain{protocol.ScheduleSet, argRef{15, "unique_key"}, []string{strings.Repeat("u", protocol.MaxUniqueKey)},
			[]string{strings.Repeat("u", protocol.MaxUniqueKey+1)}, map[int]string{16: "60000"}},
		textDomain{protocol.SchedulePause, argRef{0, "id"}, scheduleIDsOK, scheduleIDsBad, nil},
		textDomain{protocol.ScheduleResume, argRef{0, "id"}, scheduleIDsOK, scheduleIDsBad, nil},
		textDomain{protocol.ScheduleRemove, argRef{0, "id"}, scheduleIDsOK, scheduleIDsBad, nil},
		textDomain{protocol.ScheduleList, argRef{0, "after"}, append([]string{""}, scheduleIDsOK...), scheduleIDsBad[1:], nil},
		textDomain{protocol.ScheduleFire, argRef{0, "id"}, nil, scheduleIDsBad, nil},
	)
	for _, s := range []string{protocol.SuffixSchedules} {
		keyTypes[s] = "hash"
	}
	keyTypes[protocol.SuffixScheduleDue] = "zset"
	keyTypes[protocol.SuffixScheduleIDs] = "zset"
	planted[protocol.ScheduleSet] = []string{"schedules", "scheddue", "schedids"}
	planted[protocol.SchedulePause] = []string{"schedules", "scheddue"}
	planted[protocol.ScheduleResume] = []string{"schedules", "scheddue"}
	planted[protocol.ScheduleRemove] = []string{"schedules", "scheddue", "schedids"}
	planted[protocol.ScheduleList] = []string{"schedids", "schedules"}
	planted[protocol.ScheduleDue] = []string{"scheddue", "schedules"}
	planted[protocol.ScheduleFire] = []string{"schedules", "meta", "stats", "pending", "delayed", "signal", "scheddue"}
	aclNeeds[protocol.ScheduleFire] = map[string]string{classRows: "RW"}
	fixedSuffixes = append(fixedSuffixes, protocol.SuffixSchedules, protocol.SuffixScheduleDue, protocol.SuffixScheduleIDs)
}

// fixtureSchedule is the schedule of the schedule verbs' fixtures.
const fixtureSchedule = "s1"

// Schedule ids are 1..128 bytes of letters, digits and - _ . : / @.
var (
	scheduleIDsOK  = []string{"x", strings.Repeat("i", protocol.MaxScheduleID), "a-b_c.d:e/f@g", "0"}
	scheduleIDsBad = []string{"", strings.Repeat("i", protocol.MaxScheduleID+1), "a b", "{x}", "a\x00", "é"}
)

// sched is a SCHEDULE.SET call. Empty fields take defaults: id s1, a
// seconds cron with no tz, jitter, start, end or cap, grace 1000 ms,
// catch-up 1, data "d", the template of job{}.
type sched struct {
	id, kind, spec, tz, jitter, start, end, limit, grace, catchup string
	data, prio, attempts, unique, uniqueTTL                       string
	opts                                                          []string // name value pairs
}

func (s sched) args() []string {
	ttl := orDefault(s.uniqueTTL, "0")
	if s.unique != "" {
		ttl = orDefault(s.uniqueTTL, "60000")
	}
	kind := orDefault(s.kind, protocol.ScheduleCron)
	spec := s.spec
	if spec == "" {
		spec = "* * * * * *"
	}
	out := []string{orDefault(s.id, fixtureSchedule), kind, spec, s.tz, orDefault(s.jitter, "0"),
		orDefault(s.start, "0"), orDefault(s.end, "0"), orDefault(s.limit, "0"), orDefault(s.grace, "1000"),
		orDefault(s.catchup, "1"), orDefault(s.data, "d"), orDefault(s.prio, "0"), orDefault(s.attempts, "3"),
		"fixed", "0", s.unique, ttl, strconv.Itoa(len(s.opts) / 2)}
	return append(out, s.opts...)
}

// schedState is a schedule's state field as numbers.
type schedState struct{ rev, count, last, next, paused int64 }

func (st schedState) String() string {
	return strconv.FormatInt(st.rev, 10) + " " + strconv.FormatInt(st.count, 10) + " " +
		strconv.FormatInt(st.last, 10) + " " + strconv.FormatInt(st.next, 10) + " " + strconv.FormatInt(st.paused, 10)
}

// schedState reads schedule id's state, which must be present.
func (q *queue) schedState(id string) schedState {
	q.t.Helper()
	v, err := q.cmd("HGET", q.k.Fixed(protocol.SuffixSchedules), protocol.ScheduleStateField+id).ToString()
	require.NoError(q.t, err)
	parts := strings.Split(v, " ")
	require.Len(q.t, parts, 5, v)
	var n [5]int64
	for i, p := range parts {
		n[i], err = strconv.ParseInt(p, 10, 64)
		require.NoError(q.t, err, v)
	}
	return schedState{n[0], n[1], n[2], n[3], n[4]}
}

// after waits until the server's clock has reached ms.
func (q *queue) after(ms int64) {
	q.t.Helper()
	for q.now() < ms {
		pause(leaseWait)
	}
}

// fireArgs is SCHEDULE.FIRE's ARGV for schedule id from state st: up to
// upto, next due next, with the occurrences (time, jitter).
func fireArgs(id string, st schedState, upto, next int64, occ ...[2]int64) []string {
	out := []string{id, strconv.FormatInt(st.rev, 10), strconv.FormatInt(st.last, 10), strconv.FormatInt(upto, 10),
		strconv.FormatInt(next, 10), strconv.Itoa(len(occ))}
	for _, o := range occ {
		out = append(out, strconv.FormatInt(o[0], 10), strconv.FormatInt(o[1], 10))
	}
	return out
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// testSchedules: the schedule verbs (docs/PROTOCOL.md, "Schedules").
func testSchedules(t *testing.T, env Env) {
	schedules := func(q *queue) string { return q.k.Fixed(protocol.SuffixSchedules) }
	due := func(q *queue) string { return q.k.Fixed(protocol.SuffixScheduleDue) }
	ids := func(q *queue) string { return q.k.Fixed(protocol.SuffixScheduleIDs) }

	// SCHEDULE.SET
	scenario(t, env, "set creates a schedule due at once", func(t *testing.T, q *queue) {
		q.install()
		args := sched{opts: []string{protocol.AddOptionLane, "l"}}.args()
		before := q.now()
		require.Equal(t, Int(1), q.call(protocol.ScheduleSet, args...))
		st := q.schedState(fixtureSchedule)
		require.Equal(t, int64(1), st.rev)
		require.Equal(t, int64(0), st.count)
		require.GreaterOrEqual(t, st.last, before)
		require.Equal(t, st.last, st.next)
		require.Equal(t, int64(0), st.paused)
		require.Equal(t, Bulk(protocol.EncodeList(args[1:])), q.r("HGET", schedules(q), protocol.ScheduleDefField+fixtureSchedule))
		require.Equal(t, st.next, q.score(due(q), fixtureSchedule))
		require.Equal(t, int64(0), q.score(ids(q), fixtureSchedule))
	})
	scenario(t, env, "set of an existing schedule keeps count, last and pause", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		q.do("HSET", schedules(q), protocol.ScheduleStateField+fixtureSchedule, "4 7 1000 2000 0")
		require.Equal(t, Int(5), q.call(protocol.ScheduleSet, sched{data: "new"}.args()...))
		st := q.schedState(fixtureSchedule)
		require.Equal(t, schedState{5, 7, 1000, st.next, 0}, st)
		require.Greater(t, st.next, int64(2000))
		require.Equal(t, st.next, q.score(due(q), fixtureSchedule))
		q.must(protocol.SchedulePause, fixtureSchedule)
		require.Equal(t, Int(7), q.call(protocol.ScheduleSet, sched{data: "newer"}.args()...))
		require.Equal(t, schedState{7, 7, 1000, 0, 1}, q.schedState(fixtureSchedule))
		require.Equal(t, Int(0), q.r("EXISTS", due(q)))
	})
	scenario(t, env, "set values", func(t *testing.T, q *queue) {
		q.install()
		bad := func(name string, s sched) {
			t.Helper()
			q.refuse(protocol.ErrBadArg(protocol.ScheduleSet.Name, name), q.verb(protocol.ScheduleSet, s.args()...))
		}
		bad("spec", sched{kind: protocol.ScheduleEvery, spec: "0"})
		bad("spec", sched{kind: protocol.ScheduleEvery, spec: "x"})
		bad("spec", sched{kind: protocol.ScheduleEvery, spec: i64(protocol.MaxScheduleEvery + 1)})
		bad("tz", sched{kind: protocol.ScheduleEvery, spec: "1000", tz: "UTC"})
		bad("end", sched{start: "2000", end: "1999"})
		bad("end", sched{end: i64(protocol.MaxScheduleTime + 1)})
		bad("option", sched{opts: []string{protocol.AddOptionParent, ""}})
		bad("option", sched{opts: []string{protocol.AddOptionOnFail, ""}})
		bad("option", sched{opts: []string{protocol.AddOptionDue, ""}})
		bad("option", sched{opts: []string{protocol.AddOptionKind, "k", protocol.AddOptionDue, "1"}})
		bad("option", sched{opts: []string{"delay", "1"}})
		bad("option", sched{opts: []string{protocol.AddOptionLane, "a", protocol.AddOptionLane, "b"}})
		bad("lane", sched{opts: []string{protocol.AddOptionLane, strings.Repeat("l", protocol.MaxLaneName+1)}})
		bad("wait", sched{opts: []string{protocol.AddOptionWait, "x"}})
		bad("timeout", sched{opts: []string{protocol.AddOptionTimeout, i64(protocol.MaxTimeoutMS + 1)}})
		bad("kind", sched{opts: []string{protocol.AddOptionKind, strings.Repeat("k", protocol.MaxKind+1)}})
		bad("headers", sched{opts: []string{protocol.AddOptionHeaders, strings.Repeat("h", protocol.MaxHeaders+1)}})
		// ADD's order of the values, whatever the columns' order
		bad("wait", sched{opts: []string{protocol.AddOptionKind, strings.Repeat("k", protocol.MaxKind+1), protocol.AddOptionWait, "x"}})
		bad("timeout", sched{opts: []string{protocol.AddOptionHeaders, strings.Repeat("h", protocol.MaxHeaders+1),
			protocol.AddOptionKind, strings.Repeat("k", protocol.MaxKind+1), protocol.AddOptionTimeout, "x"}})
		bad("unique_ttl", sched{unique: "u", uniqueTTL: "0"})
		// option names before the template's values
		bad("option", sched{prio: "1001", opts: []string{"x", ""}})
		bad("priority", sched{prio: "1001", opts: []string{protocol.AddOptionWait, "x"}})
		require.Equal(t, Int(1), q.call(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: i64(protocol.MaxScheduleEvery)}.args()...))
		require.Equal(t, Int(1), q.call(protocol.ScheduleSet, sched{id: "b", start: "5", end: "5",
			opts: []string{protocol.AddOptionWait, "1000", protocol.AddOptionLane, ""}}.args()...))
	})
	scenario(t, env, "set options", func(t *testing.T, q *queue) {
		q.install()
		args := sched{}.args()
		args[17] = "9"
		q.refuse(protocol.ErrBadArg(protocol.ScheduleSet.Name, "options"), q.verb(protocol.ScheduleSet, args...))
		args[17] = "1"
		q.refuse(protocol.ErrArity(protocol.ScheduleSet.Name), q.verb(protocol.ScheduleSet, args...))
		q.refuse(protocol.ErrArity(protocol.ScheduleSet.Name), q.verb(protocol.ScheduleSet, args[:17]...))
	})

	// SCHEDULE.PAUSE, SCHEDULE.RESUME, SCHEDULE.REMOVE
	for _, v := range []*protocol.Verb{protocol.SchedulePause, protocol.ScheduleResume, protocol.ScheduleRemove} {
		scenario(t, env, v.Name+" values before the fence", func(t *testing.T, q *queue) {
			fixtures[v](q)
			q.do("DEL", q.k.Version)
			q.refuse(protocol.ErrBadArg(v.Name, "id"), q.verb(v, ""))
		})
		scenario(t, env, v.Name+" of an absent schedule", func(t *testing.T, q *queue) {
			q.install()
			q.must(protocol.ScheduleSet, sched{id: "other"}.args()...)
			if v == protocol.ScheduleRemove {
				require.Equal(t, Int(0), q.call(v, fixtureSchedule))
				return
			}
			require.Equal(t, Int(0), q.unchanged(q.verb(v, fixtureSchedule)))
		})
	}
	scenario(t, env, "pause and resume", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		q.do("HSET", schedules(q), protocol.ScheduleStateField+fixtureSchedule, "1 3 1000 2000 0")
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.ScheduleResume, fixtureSchedule)))
		require.Equal(t, Int(1), q.call(protocol.SchedulePause, fixtureSchedule))
		require.Equal(t, schedState{2, 3, 1000, 0, 1}, q.schedState(fixtureSchedule))
		require.Equal(t, Int(0), q.r("EXISTS", due(q)))
		require.Equal(t, Int(0), q.unchanged(q.verb(protocol.SchedulePause, fixtureSchedule)))
		before := q.now()
		require.Equal(t, Int(1), q.call(protocol.ScheduleResume, fixtureSchedule))
		st := q.schedState(fixtureSchedule)
		require.Equal(t, int64(3), st.rev)
		require.GreaterOrEqual(t, st.last, before, "the pause's occurrences are skipped")
		require.Equal(t, st.last, st.next)
		require.Equal(t, st.next, q.score(due(q), fixtureSchedule))
	})
	scenario(t, env, "resume keeps a later last", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		far := int64(protocol.MaxScheduleTime)
		q.do("HSET", schedules(q), protocol.ScheduleStateField+fixtureSchedule, "1 0 "+i64(far)+" 0 1")
		require.Equal(t, Int(1), q.call(protocol.ScheduleResume, fixtureSchedule))
		require.Equal(t, far, q.schedState(fixtureSchedule).last)
	})
	scenario(t, env, "remove", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		q.must(protocol.ScheduleSet, sched{id: "keep"}.args()...)
		require.Equal(t, Int(1), q.call(protocol.ScheduleRemove, fixtureSchedule))
		require.Equal(t, Int(0), q.r("HEXISTS", schedules(q), protocol.ScheduleDefField+fixtureSchedule))
		require.Equal(t, Int(0), q.r("HEXISTS", schedules(q), protocol.ScheduleStateField+fixtureSchedule))
		require.Equal(t, Bulks("keep"), q.r("ZRANGE", due(q), "0", "-1"))
		require.Equal(t, Bulks("keep"), q.r("ZRANGE", ids(q), "0", "-1"))
		require.Equal(t, Int(0), q.call(protocol.ScheduleRemove, fixtureSchedule))
	})
	scenario(t, env, "remove takes a member without fields", func(t *testing.T, q *queue) {
		q.install()
		q.do("ZADD", due(q), "5", "ghost")
		q.do("ZADD", ids(q), "0", "ghost")
		require.Equal(t, Int(0), q.call(protocol.ScheduleRemove, "ghost"))
		require.Equal(t, Int(0), q.r("EXISTS", due(q), ids(q)))
	})

	// SCHEDULE.LIST
	scenario(t, env, "list pages in byte order", func(t *testing.T, q *queue) {
		q.install()
		for _, id := range []string{"c", "a", "b"} {
			q.must(protocol.ScheduleSet, sched{id: id}.args()...)
		}
		q.must(protocol.SchedulePause, "b")
		def := Bulk(protocol.EncodeList(sched{}.args()[1:]))
		row := func(id string) string { return Arr(Bulk(id), def, Bulk(q.schedState(id).String())) }
		require.Equal(t, Arr(row("a"), row("b")), q.call(protocol.ScheduleList, "", "2"))
		require.Equal(t, Arr(row("c")), q.call(protocol.ScheduleList, "b", "2"))
		require.Equal(t, Arr(), q.call(protocol.ScheduleList, "c", "2"))
		q.do("ZADD", ids(q), "0", "ghost")
		require.Equal(t, Arr(Arr(Bulk("ghost"), Nil, Nil)), q.call(protocol.ScheduleList, "c", "2"))
	})

	// SCHEDULE.DUE
	scenario(t, env, "due replies the server's time and the due schedules", func(t *testing.T, q *queue) {
		q.install()
		for _, id := range []string{"a", "b", "c"} {
			q.must(protocol.ScheduleSet, sched{id: id}.args()...)
		}
		q.do("ZADD", due(q), "20", "a", "10", "b", i64(protocol.MaxScheduleTime), "c")
		before := q.now()
		msg, err := q.exec(protocol.ScheduleDue, "10").ToArray()
		require.NoError(t, err)
		require.Len(t, msg, 3)
		now, err := msg[0].AsInt64()
		require.NoError(t, err)
		require.GreaterOrEqual(t, now, before)
		def := Bulk(protocol.EncodeList(sched{}.args()[1:]))
		require.Equal(t, Arr(Bulk("b"), def, Bulk(q.schedState("b").String())), RenderMessage(msg[1]))
		require.Equal(t, Arr(Bulk("a"), def, Bulk(q.schedState("a").String())), RenderMessage(msg[2]))
		msg, err = q.exec(protocol.ScheduleDue, "1").ToArray()
		require.NoError(t, err)
		require.Len(t, msg, 2, "bounded by limit")
	})
	scenario(t, env, "due with nothing due", func(t *testing.T, q *queue) {
		q.install()
		msg, err := q.exec(protocol.ScheduleDue, "10").ToArray()
		require.NoError(t, err)
		require.Len(t, msg, 1)
	})

	// SCHEDULE.FIRE
	scenario(t, env, "fire enqueues the occurrences and advances the schedule", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1", jitter: "60000", prio: "7",
			opts: []string{protocol.AddOptionHeaders, "h=1", protocol.AddOptionWait, "5000", protocol.AddOptionKind, "digest",
				protocol.AddOptionTimeout, "1500"}}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(st.last + 3)
		now := q.now()
		args := fireArgs(fixtureSchedule, st, st.last+3, st.last+4, [2]int64{st.last + 1, 0}, [2]int64{st.last + 2, 0},
			[2]int64{st.last + 3, 60000})
		require.Equal(t, Bulks("1", "2", "3"), q.call(protocol.ScheduleFire, args...))
		for i, id := range []string{"1", "2"} {
			require.Equal(t, protocol.StatePending, q.hget(id, "state"))
			require.Equal(t, Bulk(i64(st.last+1+int64(i))), q.r("HGET", q.k.Job(id), protocol.FieldScheduledAt))
			require.Equal(t, Bulk(fixtureSchedule), q.r("HGET", q.k.Job(id), protocol.FieldSchedule))
			require.Equal(t, Bulk("7"), q.r("HGET", q.k.Job(id), protocol.FieldPriority))
			require.Equal(t, Bulk("5000"), q.r("HGET", q.k.Job(id), protocol.FieldWait))
			require.Equal(t, Bulk("digest"), q.r("HGET", q.k.Job(id), protocol.FieldKind))
			require.Equal(t, Bulk("1500"), q.r("HGET", q.k.Job(id), protocol.FieldTimeout))
			require.Equal(t, Bulk("h=1"), q.r("HGET", q.k.Job(id), protocol.FieldHeaders))
		}
		require.Equal(t, Bulk(protocol.StateDelayed), q.r("HGET", q.k.Job("3"), "state"))
		runAt := q.score(q.k.Delayed, "3")
		require.GreaterOrEqual(t, runAt, st.last+3+60000-(q.now()-now)-1)
		require.LessOrEqual(t, runAt, st.last+3+60000)
		// the job options' fields, then the schedule fields, come last in
		// the row
		fields, err := q.cmd("HKEYS", q.k.Job("3")).AsStrSlice()
		require.NoError(t, err)
		require.Equal(t, []string{protocol.FieldKind, protocol.FieldTimeout, protocol.FieldHeaders,
			protocol.FieldSchedule, protocol.FieldScheduledAt}, fields[len(fields)-5:])
		require.Equal(t, schedState{st.rev, 3, st.last + 3, st.last + 4, 0}, q.schedState(fixtureSchedule))
		require.Equal(t, st.last+4, q.score(due(q), fixtureSchedule))
		require.Equal(t, Bulk("3"), q.r("HGET", q.k.Stats, "added"))
		require.Equal(t, Bulks("1"), q.r("LRANGE", q.k.Signal, "0", "-1"))
		// the template's kind flags the queue: claims read the job fields
		require.Equal(t, Bulk(protocol.JobFieldsOn), q.r("HGET", q.k.Meta, protocol.MetaJobFields))
		// INSPECT replies them
		require.Contains(t, q.call(protocol.Inspect, "1"), Bulk(protocol.FieldSchedule)+", "+Bulk(fixtureSchedule)+", "+
			Bulk(protocol.FieldScheduledAt)+", "+Bulk(i64(st.last+1)))
	})
	scenario(t, env, "fire of a plain template leaves meta jobfields unset", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, args...))
		require.Equal(t, Nil, q.r("HGET", q.k.Meta, protocol.MetaJobFields))
		require.Equal(t, Arr(Arr(Bulk("1"), Bulk("d"), Int(1), Int(3), Nil, Int(0), Nil)), q.claimExt(1))
	})
	scenario(t, env, "fire twice: the second is refused and writes nothing", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, args...))
		q.refuse(protocol.ErrScheduleChanged, q.verb(protocol.ScheduleFire, args...))
		require.Equal(t, Int(1), q.r("ZCARD", q.k.Pending))
	})
	scenario(t, env, "fire refuses a stale revision, last, pause or a gone schedule", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		st := q.schedState(fixtureSchedule)
		stale := append([]string(nil), args...)
		stale[1] = i64(st.rev + 1)
		q.refuse(protocol.ErrScheduleChanged, q.verb(protocol.ScheduleFire, stale...))
		stale = append([]string(nil), args...)
		stale[2] = i64(st.last - 1)
		q.refuse(protocol.ErrScheduleChanged, q.verb(protocol.ScheduleFire, stale...))
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1000"}.args()...)
		q.refuse(protocol.ErrScheduleChanged, q.verb(protocol.ScheduleFire, args...))
		q.do("HSET", schedules(q), protocol.ScheduleStateField+fixtureSchedule, st.String()[:len(st.String())-1]+"1")
		q.refuse(protocol.ErrScheduleChanged, q.verb(protocol.ScheduleFire, args...))
		q.do("HDEL", schedules(q), protocol.ScheduleStateField+fixtureSchedule)
		q.refuse(protocol.ErrScheduleChanged, q.verb(protocol.ScheduleFire, args...))
	})
	scenario(t, env, "fire of an occurrence the server's time has not reached", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		st := q.schedState(fixtureSchedule)
		far := st.last + 3_600_000
		q.refuse(protocol.ErrScheduleNotDue, q.verb(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, far, far+1, [2]int64{far, 0})...))
		q.refuse(protocol.ErrScheduleNotDue, q.verb(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, far, 0)...))
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, args...))
	})
	scenario(t, env, "fire outside the schedule", func(t *testing.T, q *queue) {
		q.install()
		// the schedule's times are put ahead of the clock by far more than
		// SCHEDULE.SET can be late on a busy machine: SET sets last to the
		// server's time, which must stay before start
		now := q.now() + 500
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1", jitter: "10",
			start: i64(now + 2), end: i64(now + 4), limit: "2"}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(now + 5)
		outside := func(upto int64, occ ...[2]int64) {
			t.Helper()
			q.refuse(protocol.ErrScheduleOutside, q.verb(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, upto, 0, occ...)...))
		}
		if st.last+1 < now+2 {
			outside(now+2, [2]int64{st.last + 1, 0})
		}
		outside(now+5, [2]int64{now + 5, 0})
		outside(now+4, [2]int64{now + 2, 0}, [2]int64{now + 3, 0}, [2]int64{now + 4, 0})
		outside(now+2, [2]int64{now + 2, 11})
		require.Equal(t, Bulks("1", "2"), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, now+3, now+4,
			[2]int64{now + 2, 10}, [2]int64{now + 3, 0})...))
		require.Equal(t, schedState{st.rev, 2, now + 3, 0, 0}, q.schedState(fixtureSchedule), "the cap finishes it")
		require.Equal(t, Int(0), q.r("EXISTS", due(q)))
	})
	scenario(t, env, "fire past the end finishes the schedule", func(t *testing.T, q *queue) {
		q.install()
		now := q.now()
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1", end: i64(now + 10)}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(st.last + 1)
		require.Equal(t, Arr(), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, st.last, now+11)...))
		require.Equal(t, schedState{st.rev, 0, st.last, 0, 0}, q.schedState(fixtureSchedule))
		require.Equal(t, Int(0), q.r("EXISTS", due(q), q.k.Pending))
	})
	scenario(t, env, "fire with no occurrence reschedules", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{}.args()...)
		st := q.schedState(fixtureSchedule)
		next := st.last + 3_600_000
		require.Equal(t, Arr(), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, st.last, next)...))
		require.Equal(t, schedState{st.rev, 0, st.last, next, 0}, q.schedState(fixtureSchedule))
		require.Equal(t, next, q.score(due(q), fixtureSchedule))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Meta, q.k.Stats, q.k.Pending))
	})
	scenario(t, env, "fire with a unique key adds one job, none while it is held", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1", unique: "u"}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(st.last + 4)
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, st.last+2, st.last+3,
			[2]int64{st.last + 1, 0}, [2]int64{st.last + 2, 0})...))
		require.Equal(t, Bulk(i64(st.last+2)), q.r("HGET", q.k.Job("1"), protocol.FieldScheduledAt), "the last time's job")
		require.Equal(t, Bulk("1"), q.r("GET", q.k.Unique("u")))
		st2 := q.schedState(fixtureSchedule)
		require.Equal(t, int64(2), st2.count)
		require.Equal(t, Arr(), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st2, st.last+4, st.last+5,
			[2]int64{st.last + 3, 0}, [2]int64{st.last + 4, 0})...))
		require.Equal(t, schedState{st.rev, 4, st.last + 4, st.last + 5, 0}, q.schedState(fixtureSchedule))
		require.Equal(t, Int(1), q.r("ZCARD", q.k.Pending))
	})
	scenario(t, env, "fire of a lane template", func(t *testing.T, q *queue) {
		q.install()
		q.must(protocol.ScheduleSet, sched{kind: protocol.ScheduleEvery, spec: "1000", opts: []string{protocol.AddOptionLane, "l"}}.args()...)
		st := q.schedState(fixtureSchedule)
		q.after(st.last + 1)
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, fireArgs(fixtureSchedule, st, st.last+1, st.last+1001, [2]int64{st.last + 1, 0})...))
		require.Equal(t, Bulks("1"), q.r("ZRANGE", q.k.Lane("l"), "0", "-1"))
		require.Equal(t, Arr(Int(1), Int(0), Int(0), Int(0)), q.call(protocol.Lane, "l"))
	})
	scenario(t, env, "fire publishes added events after its writes", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		q.eventsOn("100")
		require.Equal(t, Bulks("1"), q.call(protocol.ScheduleFire, args...))
		require.Equal(t, []string{evt(protocol.EventAdded, "1", protocol.EventStateField, protocol.StatePending)}, q.eventLog())
		require.Equal(t, Bulk("100"), q.r("HGET", q.k.Job("1"), protocol.FieldEvents))
	})
	scenario(t, env, "fire of a broken definition", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		field := protocol.ScheduleDefField + fixtureSchedule
		good := protocol.EncodeList(sched{kind: protocol.ScheduleEvery, spec: "1000"}.args()[1:])
		for _, def := range []string{"", "x", "3:ab", "01:x" + good[2:], good + "1:x",
			protocol.EncodeList(sched{kind: protocol.ScheduleEvery, spec: "1000", prio: "1001"}.args()[1:]),
			protocol.EncodeList(sched{kind: protocol.ScheduleEvery, spec: "1000", opts: []string{protocol.AddOptionParent, "1"}}.args()[1:])} {
			q.do("HSET", schedules(q), field, def)
			q.refuse(protocol.ErrScheduleBroken, q.verb(protocol.ScheduleFire, args...))
		}
		q.do("HDEL", schedules(q), field)
		q.refuse(protocol.ErrScheduleBroken, q.verb(protocol.ScheduleFire, args...))
	})
	scenario(t, env, "fire values", func(t *testing.T, q *queue) {
		args := fixtures[protocol.ScheduleFire](q)
		st := q.schedState(fixtureSchedule)
		bad := func(name string, a []string) {
			t.Helper()
			q.refuse(protocol.ErrBadArg(protocol.ScheduleFire.Name, name), q.verb(protocol.ScheduleFire, a...))
		}
		bad("rev", fireArgs(fixtureSchedule, schedState{rev: 0, last: st.last}, st.last+1, 0))
		bad("upto", fireArgs(fixtureSchedule, st, st.last-1, 0))
		bad("next", fireArgs(fixtureSchedule, st, st.last+1, st.last+1))
		bad("time", fireArgs(fixtureSchedule, st, st.last+1, 0, [2]int64{st.last, 0}))
		bad("time", fireArgs(fixtureSchedule, st, st.last+1, 0, [2]int64{st.last + 2, 0}))
		bad("time", fireArgs(fixtureSchedule, st, st.last+2, 0, [2]int64{st.last + 2, 0}, [2]int64{st.last + 2, 0}))
		bad("from", append([]string{fixtureSchedule, "1", "x"}, args[3:]...))
		a := append([]string(nil), args...)
		a[5] = "1001"
		bad("count", a)
		q.refuse(protocol.ErrArity(protocol.ScheduleFire.Name), q.verb(protocol.ScheduleFire, args[:5]...))
	})
}
