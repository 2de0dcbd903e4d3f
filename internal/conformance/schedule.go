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
	// scenarios of testScheduleIDs
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

// schedulesKey, dueKey and idsKey are the queue's schedule keys.
func (q *queue) schedulesKey() string { return q.k.Fixed(protocol.SuffixSchedules) }
func (q *queue) dueKey() string       { return q.k.Fixed(protocol.SuffixScheduleDue) }
func (q *queue) idsKey() string       { return q.k.Fixed(protocol.SuffixScheduleIDs) }

// testScheduleIDs: SCHEDULE.PAUSE, SCHEDULE.RESUME and SCHEDULE.REMOVE: the id
// verbs' values and an absent schedule.
func testScheduleIDs(t *testing.T, env Env) {
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
}
