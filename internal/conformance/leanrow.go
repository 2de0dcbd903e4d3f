package conformance

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// testLeanRow: ADD leaves out of a row the fields that hold their defaults
// (state pending, max 3, prio 0, bo exponential:1000) and every verb reads a
// present row's absent field as its default, so a queue of such rows and a
// queue whose rows hold every field answer every verb alike and end with
// the same fields read (docs/PROTOCOL.md, "Job row fields").
func testLeanRow(t *testing.T, env Env) {
	// plain is a job's ADD group with every field at its default
	plain := func(data string) []string { return []string{data, "0", "0", "3", "exponential", "1000", "", "0"} }
	add := func(q *queue, jobs ...[]string) string {
		args := []string{strconv.Itoa(len(jobs)), "0"}
		for _, j := range jobs {
			args = append(args, j...)
		}
		return q.call(protocol.Add, args...)
	}
	scenario(t, env, "a plain job's row holds data att at", func(t *testing.T, q *queue) {
		q.install()
		t0 := q.now()
		unique := plain("b")
		unique[6], unique[7] = "u", "60000"
		delayed := plain("c")
		delayed[2] = "5000"
		require.Equal(t, Bulks("1", "2", "3"), add(q, plain("a"), unique, delayed))
		t1 := q.now()
		row := q.hgetall(q.k.Job("1"))
		require.Equal(t, []string{"data", "a", "att", "0", "at"}, row[:5])
		require.Len(t, row, 6)
		at, err := strconv.ParseInt(row[5], 10, 64)
		require.NoError(t, err)
		within(t, at, t0, t1, "at")
		require.Equal(t, Bulks("data", "att", "at", "uniq"), q.r("HKEYS", q.k.Job("2")))
		require.Equal(t, Bulks("data", "state", "att", "at"), q.r("HKEYS", q.k.Job("3")), "a delayed job keeps its state")
		require.Equal(t, Bulk("listpack"), q.r("OBJECT", "ENCODING", q.k.Job("1")))
	})
	scenario(t, env, "a field at its default is left out alone", func(t *testing.T, q *queue) {
		q.install()
		prio, max, bo := plain("a"), plain("b"), plain("c")
		prio[1], max[3], bo[5] = "1", "4", "999"
		fixed := plain("d")
		fixed[4] = protocol.BackoffFixed
		add(q, prio, max, bo, fixed)
		require.Equal(t, Bulks("data", "att", "prio", "at"), q.r("HKEYS", q.k.Job("1")))
		require.Equal(t, Bulks("data", "att", "max", "at"), q.r("HKEYS", q.k.Job("2")))
		require.Equal(t, Arr(Bulk("exponential:999")), q.fields("3", "bo"))
		require.Equal(t, Arr(Bulk("fixed:1000")), q.fields("4", "bo"))
	})
	scenario(t, env, "rows with every field read as rows without the defaults", func(t *testing.T, q *queue) {
		lean, full := q, q.other()
		lean.install()
		full.install()
		add(lean, plain("a"), plain("b"), plain("c"))
		// the same queue, its rows written with every field
		for _, k := range []string{protocol.SuffixMeta, protocol.SuffixStats} {
			f := lean.hgetall(lean.k.Fixed(k))
			full.do(append([]string{"HSET", full.k.Fixed(k)}, f...)...)
		}
		full.do("RPUSH", full.k.Signal, "1")
		for i := int64(1); i <= 3; i++ {
			id := strconv.FormatInt(i, 10)
			data := lean.hget(id, "data")
			full.do("HSET", full.k.Job(id), "data", data, "state", "pending", "att", "0", "max", "3", "prio", "0",
				"bo", "exponential:1000", "at", lean.hget(id, "at"))
			full.do("ZADD", full.k.Pending, strconv.FormatInt(protocol.PendingScore(0, i), 10), id)
		}
		require.Equal(t, lean.snapshotOf(), full.snapshotOf(), "the same jobs")
		// waits are the claims' waits, the one reply that tells a row whose
		// state is absent (never moved since its ADD) from one that holds
		// pending: rendered apart from the claims' other entries
		waits := map[*queue][]string{}
		steps := func(q *queue) []string {
			var out []string
			call := func(v *protocol.Verb, args ...string) string {
				var r string
				if v == protocol.Claim {
					var known int
					r, known = q.claimWaitsSplit(true, args[0], args[1])
					waits[q] = append(waits[q], strconv.Itoa(known))
				} else {
					r = q.call(v, args...)
				}
				out = append(out, v.Name+" "+r)
				return r
			}
			// delay checks a job's time in delayed against the retry delay
			delay := func(id string, ms, t0, t1 int64) {
				within(t, q.score(q.k.Delayed, id), t0+ms, t1+ms, "retry of "+id)
			}
			for _, id := range []string{"1", "2", "3"} {
				call(protocol.Inspect, id)
			}
			call(protocol.Jobs, "pending", "", "0", "", "", "10", "16")
			call(protocol.Claim, "600000", "2", "1")
			t0 := q.now()
			call(protocol.Fail, "1", "1", "1", "e1")
			call(protocol.Fail, "2", "1", "0", "e2")
			delay("1", 1000, t0, q.now())
			call(protocol.Retry, "1")
			call(protocol.Claim, "600000", "1", "1")
			t0 = q.now()
			call(protocol.Fail, "1", "2", "1", "e3")
			delay("1", 2000, t0, q.now())
			call(protocol.Retry, "1")
			call(protocol.Claim, "600000", "1", "1")
			call(protocol.Fail, "1", "3", "1", "e4")
			call(protocol.Inspect, "1")
			call(protocol.Requeue, "1")
			call(protocol.RequeueDead, "10", "", "", "0", strconv.FormatInt(protocol.MaxScore, 10), "", "")
			call(protocol.Jobs, "pending", "", "0", "", "", "10", "16")
			call(protocol.Reschedule, "3", "0", "60000")
			call(protocol.Reschedule, "3", "0", "0")
			call(protocol.Cancel, "3")
			call(protocol.Remove, "1", "0")
			call(protocol.Claim, "1", "1", "1")
			q.after(q.now() + 5)
			call(protocol.Recover, "10")
			for _, id := range []string{"1", "2", "3"} {
				call(protocol.Inspect, id)
			}
			return out
		}
		got := steps(lean)
		require.Equal(t, steps(full), got)
		// the first claim's two jobs: known on the rows ADD left, not on
		// the rows that hold state pending; every later claim's are retries
		require.Equal(t, []string{"2", "0", "0", "0"}, waits[lean])
		require.Equal(t, []string{"0", "0", "0", "0"}, waits[full])
		require.Equal(t, "fail "+Bulk(protocol.FailDead), got[12], "the third failure, at max 3, kills")
		// requeued, att + the default max: 1 at 3 + 3, 2 at 1 + 3
		require.Contains(t, got[16], Bulk("pending")+", "+Int(3)+", "+Int(6), "JOBS after REQUEUE")
		require.Contains(t, got[16], Bulk("pending")+", "+Int(1)+", "+Int(4), "JOBS after REQUEUEDEAD")
		require.Equal(t, lean.snapshotOf(), full.snapshotOf(), "the same jobs")
	})
	scenario(t, env, "a lean child reads as pending", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, job{data: "c", parent: "1", backoff: "exponential", backoffMS: "1000"})
		require.Equal(t, Int(0), q.r("HEXISTS", q.k.Job("2"), "state"))
		require.Equal(t, Arr(Arr(Bulk("2"), Bulk("pending"), Nil, Nil)), q.call(protocol.Children, "1", "0", "10"))
		problems, err := valkeytest.QueueProblems(t.Context(), q.env.Server, q.name)
		require.NoError(t, err)
		require.Empty(t, problems, "the consistency check reads the lean child as pending")
	})
}

// snapshotOf is every job as the verbs read it: per row, its id and the
// fields INSPECT replies, and the queue's sets; the same for a queue whose
// rows hold every field and one whose rows leave out the defaults.
func (q *queue) snapshotOf() map[string]string {
	q.t.Helper()
	out := map[string]string{}
	for _, s := range []string{protocol.SuffixPending, protocol.SuffixDelayed, protocol.SuffixActive, protocol.SuffixDead} {
		out[s] = q.r("ZRANGE", q.k.Fixed(s), "0", "-1")
	}
	for _, id := range []string{"1", "2", "3"} {
		out[id] = q.call(protocol.Inspect, id)
	}
	return out
}
