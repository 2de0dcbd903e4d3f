package conformance

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// argCount is each verb's ARGV count (ADD's and COMPLETEMANY's vary with
// their jobs: countGroups).
var argCount = map[*protocol.Verb]int{
	protocol.Install: 0, protocol.Claim: 2, protocol.Extend: 3, protocol.Complete: 3,
	protocol.Fail: 4, protocol.Recover: 1, protocol.Promote: 1, protocol.Pause: 0,
	protocol.Resume: 0, protocol.Remove: 2, protocol.Requeue: 1, protocol.Log: 4,
	protocol.Progress: 3, protocol.Stats: 0, protocol.Inspect: 1,
	protocol.LaneCap: 2, protocol.LanePause: 1, protocol.LaneResume: 1, protocol.Lane: 1,
	protocol.Lanes: 2, protocol.Rate: 2,
	protocol.Retain: 5, protocol.Trim: 1, protocol.Children: 3,
	protocol.Jobs: 7, protocol.RequeueDead: 7, protocol.RemoveDead: 7, protocol.PromoteAll: 1, protocol.Retry: 1,
	protocol.Reschedule: 3, protocol.Cancel: 1,
}

// argRef names one argument of a verb: its ARGV index (from 0) and its name
// in "bad <name>".
type argRef struct {
	index int
	name  string
}

// firstValue is the first checked argument of each verb that has one.
var firstValue = map[*protocol.Verb]argRef{
	protocol.Add: {3, "priority"}, protocol.Claim: {0, "lease"}, protocol.Extend: {0, "id"},
	protocol.Complete: {0, "id"}, protocol.CompleteMany: {1, "id"}, protocol.Fail: {0, "id"}, protocol.Recover: {0, "limit"},
	protocol.Promote: {0, "limit"}, protocol.Remove: {0, "id"}, protocol.Requeue: {0, "id"},
	protocol.Log: {0, "id"}, protocol.Progress: {0, "id"}, protocol.Inspect: {0, "id"},
	// the lane verbs' first argument is a lane, which "x" is: their second
	protocol.LaneCap: {1, "cap"}, protocol.Lanes: {1, "count"}, protocol.Rate: {0, "max"},
	protocol.Retain: {0, "keep_done"}, protocol.Trim: {0, "limit"}, protocol.Children: {0, "id"},
	protocol.Jobs: {0, "state"}, protocol.RequeueDead: {0, "limit"}, protocol.RemoveDead: {0, "limit"},
	protocol.PromoteAll: {0, "limit"}, protocol.Retry: {0, "id"},
	protocol.Reschedule: {0, "id"}, protocol.Cancel: {0, "id"},
}

// intDomain is an integer argument and its inclusive domain.
type intDomain struct {
	verb   *protocol.Verb
	arg    argRef
	lo, hi int64
}

var intDomains = []intDomain{
	{protocol.Add, argRef{3, "priority"}, 0, protocol.MaxPriority},
	{protocol.Add, argRef{4, "delay"}, 0, protocol.MaxDelayMS},
	{protocol.Add, argRef{5, "attempts"}, 1, protocol.MaxAttempts},
	{protocol.Add, argRef{7, "backoff_ms"}, 0, protocol.MaxBackoffMS},
	{protocol.Add, argRef{9, "unique_ttl"}, 0, protocol.MaxDelayMS}, // no unique key: 0 is fine
	{protocol.Claim, argRef{0, "lease"}, 1, protocol.MaxLeaseMS},
	{protocol.Claim, argRef{1, "count"}, 1, protocol.MaxCount},
	{protocol.Extend, argRef{0, "id"}, 1, protocol.MaxJobID},
	{protocol.Extend, argRef{2, "lease"}, 1, protocol.MaxLeaseMS},
	{protocol.Complete, argRef{0, "id"}, 1, protocol.MaxJobID},
	{protocol.CompleteMany, argRef{1, "id"}, 1, protocol.MaxJobID},
	{protocol.Fail, argRef{0, "id"}, 1, protocol.MaxJobID},
	{protocol.Recover, argRef{0, "limit"}, 1, protocol.MaxCount},
	{protocol.Promote, argRef{0, "limit"}, 1, protocol.MaxCount},
	{protocol.Remove, argRef{0, "id"}, 1, protocol.MaxJobID},
	{protocol.Requeue, argRef{0, "id"}, 1, protocol.MaxJobID},
	{protocol.Log, argRef{0, "id"}, 1, protocol.MaxJobID},
	{protocol.Log, argRef{3, "cap"}, 1, protocol.MaxLogCap},
	{protocol.Progress, argRef{0, "id"}, 1, protocol.MaxJobID},
	{protocol.Inspect, argRef{0, "id"}, 1, protocol.MaxJobID},
	{protocol.LaneCap, argRef{1, "cap"}, 0, protocol.MaxLaneCap},
	{protocol.Lanes, argRef{1, "count"}, 1, protocol.MaxCount},
	{protocol.Remove, argRef{1, "cascade"}, 0, 1},
	{protocol.Retain, argRef{0, "keep_done"}, 0, protocol.MaxDelayMS},
	{protocol.Retain, argRef{1, "keep_done_max"}, 0, protocol.MaxKeepCount},
	{protocol.Retain, argRef{2, "keep_dead"}, 0, protocol.MaxDelayMS},
	{protocol.Retain, argRef{3, "keep_dead_max"}, 0, protocol.MaxKeepCount},
	{protocol.Retain, argRef{4, "result_max"}, 0, protocol.MaxResult},
	{protocol.Trim, argRef{0, "limit"}, 1, protocol.MaxCount},
	{protocol.Children, argRef{0, "id"}, 1, protocol.MaxJobID},
	{protocol.Children, argRef{1, "after"}, 0, protocol.MaxJobID},
	{protocol.Children, argRef{2, "count"}, 1, protocol.MaxCount},
	{protocol.Jobs, argRef{2, "newest"}, 0, 1},
	{protocol.Jobs, argRef{5, "count"}, 1, protocol.MaxCount},
	{protocol.Jobs, argRef{6, "clip"}, 0, protocol.MaxClip},
	{protocol.RequeueDead, argRef{0, "limit"}, 1, protocol.MaxCount},
	{protocol.RemoveDead, argRef{0, "limit"}, 1, protocol.MaxCount},
	{protocol.PromoteAll, argRef{0, "limit"}, 1, protocol.MaxCount},
	{protocol.Retry, argRef{0, "id"}, 1, protocol.MaxJobID},
	{protocol.Reschedule, argRef{0, "id"}, 1, protocol.MaxJobID},
	{protocol.Reschedule, argRef{1, "due"}, 0, protocol.MaxDueMS},
	{protocol.Reschedule, argRef{2, "delay"}, 0, protocol.MaxDelayMS},
	{protocol.Cancel, argRef{0, "id"}, 1, protocol.MaxJobID},
}

// textDomain is an argument checked for its length or its words.
type textDomain struct {
	verb *protocol.Verb
	arg  argRef
	ok   []string
	bad  []string
	also map[int]string // other arguments every case sets
}

var textDomains = []textDomain{
	{protocol.Add, argRef{6, "backoff"}, []string{"fixed", "exponential"},
		[]string{"", "Fixed", "linear", "fixed ", "exponential:1", "fixed\x00"}, nil},
	{protocol.Add, argRef{8, "unique_key"}, []string{strings.Repeat("u", protocol.MaxUniqueKey), "k"},
		[]string{strings.Repeat("u", protocol.MaxUniqueKey+1)}, map[int]string{9: "60000"}},
	{protocol.Fail, argRef{2, "retry"}, []string{"0", "1"}, []string{"2", "", "01", "-1", "true", "1 "}, nil},
	{protocol.Fail, argRef{3, "error"}, []string{"", strings.Repeat("e", protocol.MaxText)},
		[]string{strings.Repeat("e", protocol.MaxText+1)}, nil},
	{protocol.Log, argRef{2, "line"}, []string{"", strings.Repeat("l", protocol.MaxText)},
		[]string{strings.Repeat("l", protocol.MaxText+1)}, nil},
	{protocol.Progress, argRef{2, "value"}, []string{"", strings.Repeat("p", protocol.MaxText)},
		[]string{strings.Repeat("p", protocol.MaxText+1)}, nil},
	{protocol.Complete, argRef{2, "result"}, []string{"", "r"}, []string{strings.Repeat("r", protocol.MaxResult+1)}, nil},
	{protocol.LaneCap, argRef{0, "lane"}, laneNamesOK, laneNamesBad, nil},
	{protocol.LanePause, argRef{0, "lane"}, laneNamesOK, laneNamesBad, nil},
	{protocol.LaneResume, argRef{0, "lane"}, laneNamesOK, laneNamesBad, nil},
	{protocol.Lane, argRef{0, "lane"}, laneNamesOK, laneNamesBad, nil},
	{protocol.Lanes, argRef{0, "after"}, []string{"", "l", strings.Repeat("a", protocol.MaxLaneName), "\x00\xff"},
		[]string{strings.Repeat("a", protocol.MaxLaneName+1)}, nil},
	{protocol.Jobs, argRef{0, "state"}, protocol.JobsStates,
		[]string{"", "Dead", "dead ", "retained", "lanes", "dead\x00"}, nil},
	{protocol.Jobs, argRef{1, "lane"}, append([]string{""}, laneNamesOK...),
		[]string{strings.Repeat("n", protocol.MaxLaneName+1)}, map[int]string{0: protocol.StatePending}},
	{protocol.RequeueDead, argRef{5, "lane"}, []string{"", "l", strings.Repeat("n", protocol.MaxLaneName)},
		[]string{strings.Repeat("n", protocol.MaxLaneName+1)}, nil},
	{protocol.RequeueDead, argRef{6, "error"}, []string{"", strings.Repeat("e", protocol.MaxText)},
		[]string{strings.Repeat("e", protocol.MaxText+1)}, nil},
	{protocol.RemoveDead, argRef{5, "lane"}, []string{"", "l", strings.Repeat("n", protocol.MaxLaneName)},
		[]string{strings.Repeat("n", protocol.MaxLaneName+1)}, nil},
	{protocol.RemoveDead, argRef{6, "error"}, []string{"", strings.Repeat("e", protocol.MaxText)},
		[]string{strings.Repeat("e", protocol.MaxText+1)}, nil},
}

// Lane names are 1..128 bytes, any bytes.
var (
	laneNamesOK  = []string{"l", strings.Repeat("n", protocol.MaxLaneName), "\x00", "\xff\xfe", "a b\r\n", "{x}"}
	laneNamesBad = []string{"", strings.Repeat("n", protocol.MaxLaneName+1)}
)

// badInts are spellings no integer argument accepts, whatever its domain.
var badInts = []string{
	"01", "00", "-1", "-0", "+1", " 1", "1 ", "1.5", "1.0", "", "1e3", "0x1", "1_000",
	"1000000000000000",                              // 16 digits
	"999999999999999",                               // 15 digits, above every domain
	"18446744073709551616", "\x001", "\xef\xbc\x91", // a NUL; a full-width one
}

// testValues: every argument's domain edges (step 3). A refused value writes
// nothing; an accepted edge passes the value checks.
func testValues(t *testing.T, env Env) {
	accepted := func(q *queue, v *protocol.Verb, name string, args []string) {
		reply := q.call(v, args...)
		require.NotEqual(q.t, Err(protocol.ErrBadArg(v.Name, name)), reply)
		require.False(q.t, strings.HasPrefix(reply, `(error) "ERR EMQ`), "%s %q: %s", v.Command, args, reply)
	}
	for _, d := range intDomains {
		t.Run(d.verb.Name+"/"+d.arg.name, func(t *testing.T) {
			t.Parallel()
			bad := append([]string{strconv.FormatInt(d.hi+1, 10)}, badInts...)
			if d.lo > 0 {
				bad = append(bad, strconv.FormatInt(d.lo-1, 10))
			}
			for _, s := range bad {
				scenario(t, env, "bad "+strconv.Quote(s), func(t *testing.T, q *queue) {
					args := fixtures[d.verb](q)
					args[d.arg.index] = s
					q.refuse(protocol.ErrBadArg(d.verb.Name, d.arg.name), q.verb(d.verb, args...))
				})
			}
			for _, n := range []int64{d.lo, d.hi} {
				scenario(t, env, "ok "+strconv.FormatInt(n, 10), func(t *testing.T, q *queue) {
					args := fixtures[d.verb](q)
					args[d.arg.index] = strconv.FormatInt(n, 10)
					accepted(q, d.verb, d.arg.name, args)
				})
			}
		})
	}
	for _, d := range textDomains {
		t.Run(d.verb.Name+"/"+d.arg.name, func(t *testing.T) {
			t.Parallel()
			for _, s := range d.bad {
				scenario(t, env, "bad "+strconv.Quote(abbrev(s)), func(t *testing.T, q *queue) {
					args := fixtures[d.verb](q)
					for i, a := range d.also {
						args[i] = a
					}
					args[d.arg.index] = s
					q.refuse(protocol.ErrBadArg(d.verb.Name, d.arg.name), q.verb(d.verb, args...))
				})
			}
			for _, s := range d.ok {
				scenario(t, env, "ok "+strconv.Quote(abbrev(s)), func(t *testing.T, q *queue) {
					args := fixtures[d.verb](q)
					for i, a := range d.also {
						args[i] = a
					}
					args[d.arg.index] = s
					accepted(q, d.verb, d.arg.name, args)
				})
			}
		})
	}

	t.Run("add/unique_ttl with a unique key", func(t *testing.T) {
		t.Parallel()
		for _, s := range []string{"0", "", "01", strconv.FormatInt(protocol.MaxDelayMS+1, 10)} {
			scenario(t, env, "bad "+strconv.Quote(s), func(t *testing.T, q *queue) {
				fixtures[protocol.Add](q)
				q.refuse(protocol.ErrBadArg("add", "unique_ttl"),
					q.verb(protocol.Add, "1", "0", "a", "0", "0", "3", "fixed", "0", "u", s))
			})
		}
		for _, s := range []string{"1", strconv.FormatInt(protocol.MaxDelayMS, 10)} {
			scenario(t, env, "ok "+s, func(t *testing.T, q *queue) {
				fixtures[protocol.Add](q)
				require.Equal(t, Bulks("2"), q.call(protocol.Add, addArgs(job{data: "a", unique: "u", uniqueTTL: s})...))
			})
		}
	})
	t.Run("add/count", func(t *testing.T) {
		t.Parallel()
		scenario(t, env, "ok 1000", func(t *testing.T, q *queue) {
			fixtures[protocol.Add](q)
			jobs := make([]job, protocol.MaxCount)
			for i := range jobs {
				jobs[i] = job{data: "j"}
			}
			ids, err := q.exec(protocol.Add, addArgs(jobs...)...).AsStrSlice()
			require.NoError(t, err)
			require.Len(t, ids, protocol.MaxCount)
		})
	})

	// ARGV order: the first bad argument names the refusal
	t.Run("order", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name string
			verb *protocol.Verb
			bad  map[int]string
			want string
		}{
			{"claim lease before count", protocol.Claim, map[int]string{0: "0", 1: "0"}, "lease"},
			{"extend id before lease", protocol.Extend, map[int]string{0: "0", 2: "0"}, "id"},
			{"fail id before retry and error", protocol.Fail, map[int]string{0: "0", 2: "2", 3: strings.Repeat("e", protocol.MaxText+1)}, "id"},
			{"fail retry before error", protocol.Fail, map[int]string{2: "2", 3: strings.Repeat("e", protocol.MaxText+1)}, "retry"},
			{"log line before cap", protocol.Log, map[int]string{2: strings.Repeat("l", protocol.MaxText+1), 3: "0"}, "line"},
			{"log id before line", protocol.Log, map[int]string{0: "x", 2: strings.Repeat("l", protocol.MaxText+1)}, "id"},
			{"progress id before value", protocol.Progress, map[int]string{0: "", 2: strings.Repeat("p", protocol.MaxText+1)}, "id"},
			{"add priority before delay", protocol.Add, map[int]string{3: "1001", 4: "x", 5: "0"}, "priority"},
			{"add delay before attempts", protocol.Add, map[int]string{4: "x", 5: "0"}, "delay"},
			{"add attempts before backoff", protocol.Add, map[int]string{5: "0", 6: "x"}, "attempts"},
			{"add backoff before backoff_ms", protocol.Add, map[int]string{6: "x", 7: "x"}, "backoff"},
			{"add backoff_ms before unique_key", protocol.Add, map[int]string{7: "x", 8: strings.Repeat("u", 513)}, "backoff_ms"},
			{"add unique_key before unique_ttl", protocol.Add, map[int]string{8: strings.Repeat("u", 513), 9: "x"}, "unique_key"},
		} {
			scenario(t, env, tc.name, func(t *testing.T, q *queue) {
				args := fixtures[tc.verb](q)
				for i, s := range tc.bad {
					args[i] = s
				}
				q.refuse(protocol.ErrBadArg(tc.verb.Name, tc.want), q.verb(tc.verb, args...))
			})
		}
		scenario(t, env, "add job by job", func(t *testing.T, q *queue) {
			fixtures[protocol.Add](q)
			args := addArgs(job{data: "a", unique: "u", uniqueTTL: "0"}, job{data: "b", prio: "1001"})
			q.refuse(protocol.ErrBadArg("add", "unique_ttl"), q.verb(protocol.Add, args...))
		})
		scenario(t, env, "add a later job", func(t *testing.T, q *queue) {
			fixtures[protocol.Add](q)
			args := addArgs(job{data: "a"}, job{data: "b"}, job{data: "c", attempts: "0"})
			q.refuse(protocol.ErrBadArg("add", "attempts"), q.verb(protocol.Add, args...))
		})
	})
}

// abbrev shortens a long argument for a scenario name.
func abbrev(s string) string {
	if len(s) > 12 {
		return s[:4] + "…(" + strconv.Itoa(len(s)) + " bytes)"
	}
	return s
}
