package conformance

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// maxScore is the largest cursor score and filter time, as an argument.
var maxScore = strconv.FormatInt(protocol.MaxScore, 10)

// deadFilter is the ARGV of REQUEUEDEAD and REMOVEDEAD from the start of
// dead, over every time of death, with the given limit, lane and error.
func deadFilter(limit, lane, errText string) []string {
	return []string{limit, "", "", "0", maxScore, lane, errText}
}

// deadJobs installs the queue (unless it is), adds jobs of one attempt
// each, claims them and fails every one to dead, their times of death in id
// order; it returns their ids.
func (q *queue) deadJobs(jobs ...job) []string {
	q.t.Helper()
	if q.r("EXISTS", q.k.Version) == Int(0) {
		q.install()
	}
	for i := range jobs {
		jobs[i].attempts = "1"
	}
	ids := q.add(jobs...)
	cs := q.claim(600000, len(ids))
	require.Len(q.t, cs, len(ids))
	for _, c := range cs {
		require.Equal(q.t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "1", "boom "+c.id))
	}
	// claims come in lane turns, not id order: times of death one ms apart
	// in id order make the dead set's order the ids'
	died := q.score(q.k.Dead, ids[0])
	for i, id := range ids {
		q.do("ZADD", q.k.Dead, "XX", strconv.FormatInt(died+int64(i), 10), id)
	}
	return ids
}

// jrow is one row of a JOBS reply; an empty text field renders as null.
type jrow struct {
	id                                       string
	score                                    int64
	state, lane, parent, err, prog, preview  string
	kind                                     string // empty: null
	att, max, prio, deps, at, errSize, dsize int64
	emptyPreview                             bool // preview is an empty bulk, not null
	emptyTexts                               bool // err and prog are empty bulks, not null
}

func (r jrow) String() string {
	orNil := func(s string) string {
		if s == "" {
			return Nil
		}
		return Bulk(s)
	}
	preview, errText, prog := orNil(r.preview), orNil(r.err), orNil(r.prog)
	if r.emptyPreview {
		preview = Bulk("")
	}
	if r.emptyTexts {
		errText, prog = Bulk(""), Bulk("")
	}
	return Arr(Bulk(r.id), Int(r.score), orNil(r.state), Int(r.att), Int(r.max), Int(r.prio), orNil(r.lane),
		orNil(r.parent), Int(r.deps), Int(r.at), errText, Int(r.errSize), prog, Int(r.dsize),
		preview, orNil(r.kind))
}

// absentRow is the row of a member without a job row.
func absentRow(id string, score int64) jrow { return jrow{id: id, score: score} }

// page renders a JOBS reply: total, the next cursor (none when member is
// empty) and the rows.
func page(total int64, score int64, member string, rows ...jrow) string {
	next := []string{Nil, Nil}
	if member != "" {
		next = []string{Int(score), Bulk(member)}
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	return Arr(Int(total), next[0], next[1], Arr(out...))
}

// ids renders a JOBS reply's ids only, for order checks.
func (q *queue) jobsIDs(args ...string) []string {
	q.t.Helper()
	arr, err := q.exec(protocol.Jobs, args...).ToArray()
	require.NoError(q.t, err)
	rows, err := arr[3].ToArray()
	require.NoError(q.t, err)
	out := []string{}
	for _, r := range rows {
		f, err := r.ToArray()
		require.NoError(q.t, err)
		s, err := f[0].ToString()
		require.NoError(q.t, err)
		out = append(out, s)
	}
	return out
}

// jobsHead renders a JOBS reply's total and next cursor: [total, score,
// member].
func (q *queue) jobsHead(args ...string) string {
	q.t.Helper()
	arr, err := q.exec(protocol.Jobs, args...).ToArray()
	require.NoError(q.t, err)
	return Arr(RenderMessage(arr[0]), RenderMessage(arr[1]), RenderMessage(arr[2]))
}

// at is a row's added-at time as stored.
func (q *queue) at(id string) int64 {
	q.t.Helper()
	v, err := q.cmd("HGET", q.k.Job(id), "at").AsInt64()
	require.NoError(q.t, err)
	return v
}

// walk renders a REQUEUEDEAD or REMOVEDEAD reply.
func walk(taken, examined int64, score int64, member string) string {
	if member == "" {
		return Arr(Int(taken), Int(examined), Nil, Nil)
	}
	return Arr(Int(taken), Int(examined), Int(score), Bulk(member))
}

// hget is a row field as every verb reads it ("" when absent): a field a
// present row leaves out at its default reads as the default.
func (q *queue) hget(id, field string) string {
	q.t.Helper()
	f, err := q.cmd("HMGET", q.k.Job(id), field, protocol.FieldAttempts).ToArray()
	require.NoError(q.t, err)
	v, err := f[0].ToString()
	if err == nil || !f[1].IsString() {
		return v
	}
	return rowDefaults[field]
}

// rowDefaults are the values of the fields ADD leaves out of a row at their
// defaults.
var rowDefaults = map[string]string{
	protocol.FieldState: protocol.DefaultState, protocol.FieldMax: protocol.DefaultMax,
	protocol.FieldPriority: protocol.DefaultPriority, protocol.FieldBackoff: protocol.DefaultBackoff,
}

// testOpsRefusals: the operations verbs' refusals that the generic groups
// (shape, values, wrongtype, acl) do not reach.
func testOpsRefusals(t *testing.T, env Env) {
	// A denied row is refused where it is read: an earlier row of another
	// type is refused first (JOBS, REQUEUEDEAD, PROMOTEALL, as CLAIM and
	// PROMOTE); REMOVEDEAD checks every key it deletes before any read, as
	// TRIM does.
	twoRows := map[*protocol.Verb]func(q *queue) []string{
		protocol.Jobs: func(q *queue) []string {
			q.deadJobs(job{data: "a"}, job{data: "b"})
			return []string{protocol.StateDead, "", "0", "", "", "10", "0"}
		},
		protocol.RequeueDead: func(q *queue) []string {
			q.deadJobs(job{data: "a"}, job{data: "b"})
			return deadFilter("10", "", "")
		},
		protocol.RemoveDead: func(q *queue) []string {
			q.deadJobs(job{data: "a"}, job{data: "b"})
			return deadFilter("10", "", "")
		},
		protocol.PromoteAll: func(q *queue) []string {
			q.install()
			q.add(job{data: "a", delay: "600000"}, job{data: "b", delay: "700000"})
			return []string{"10"}
		},
	}
	for _, v := range []*protocol.Verb{protocol.Jobs, protocol.RequeueDead, protocol.RemoveDead, protocol.PromoteAll} {
		scenario(t, env, v.Name+": an earlier row's type and a later denied row", func(t *testing.T, q *queue) {
			args := twoRows[v](q)
			q.plant(q.k.Job("1"), "hash")
			user := q.as(map[string]string{classRows: ""}, "%RW~"+q.k.Job("1"))
			want := protocol.ErrWrongType
			if v == protocol.RemoveDead {
				want = protocol.ErrNoPerm
			}
			user.refuse(want, user.verb(v, args...))
		})
		scenario(t, env, v.Name+": a later denied row refuses the whole call", func(t *testing.T, q *queue) {
			args := twoRows[v](q)
			user := q.as(map[string]string{classRows: ""}, "%RW~"+q.k.Job("1"))
			user.refuse(protocol.ErrNoPerm, user.verb(v, args...))
		})
	}

	scenario(t, env, "jobs: a lane's set of another type", func(t *testing.T, q *queue) {
		q.install()
		q.plant(q.k.Lane("x"), "zset")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Jobs, "pending", "x", "0", "", "", "10", "0"))
	})
	for _, state := range []string{protocol.StateCompleted, protocol.StateWaiting} {
		scenario(t, env, "jobs: "+state+" denied", func(t *testing.T, q *queue) {
			q.install()
			user := q.as(map[string]string{classFlows: ""})
			user.refuse(protocol.ErrNoPerm, user.verb(protocol.Jobs, state, "", "0", "", "", "10", "0"))
			q.do("ZADD", q.k.Fixed(state), "1", "1")
			q.plant(q.k.Fixed(state), "zset")
			q.refuse(protocol.ErrWrongType, q.verb(protocol.Jobs, state, "", "0", "", "", "10", "0"))
		})
	}
	scenario(t, env, "jobs: a lane denied", func(t *testing.T, q *queue) {
		q.install()
		user := q.as(map[string]string{classLanes: ""})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Jobs, "pending", "x", "0", "", "", "10", "0"))
		require.NoError(t, user.exec(protocol.Jobs, "pending", "", "0", "", "", "10", "0").Error())
	})
	scenario(t, env, "jobs: a fixed set denied", func(t *testing.T, q *queue) {
		q.install()
		user := q.as(map[string]string{protocol.SuffixDelayed: ""})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Jobs, "delayed", "", "0", "", "", "10", "0"))
	})
	// with job events on, the events stream must be writable: a caller
	// denied it, or a key of another type, refuses the whole call; a
	// stream of another brand gets the events appended
	for _, v := range []*protocol.Verb{protocol.RequeueDead, protocol.RemoveDead, protocol.PromoteAll, protocol.Retry} {
		scenario(t, env, v.Name+": events stream denied, of another type, of another brand", func(t *testing.T, q *queue) {
			args := fixtures[v](q)
			q.do("HSET", q.k.Job("1"), protocol.FieldEvents, "100") // as if added with events on
			user := q.as(map[string]string{protocol.SuffixEvents: ""})
			user.refuse(protocol.ErrNoPerm, user.verb(v, args...))
			q.do("SET", q.k.Fixed(protocol.SuffixEvents), "not a stream")
			q.refuse(protocol.ErrWrongType, q.verb(v, args...))
			q.do("DEL", q.k.Fixed(protocol.SuffixEvents))
			q.do("XADD", q.k.Fixed(protocol.SuffixEvents), "*", "brand", "other")
			require.False(t, isErr(q.call(v, args...)))
			require.Equal(t, Int(2), q.r("XLEN", q.k.Fixed(protocol.SuffixEvents)), "the events appended after the foreign entry")
		})
	}
	for _, v := range []*protocol.Verb{protocol.RequeueDead, protocol.RemoveDead} {
		scenario(t, env, v.Name+": values in order", func(t *testing.T, q *queue) {
			args := fixtures[v](q)
			for _, tc := range []struct {
				bad  map[int]string
				want string
			}{
				{map[int]string{1: "", 2: "x"}, "after"},
				{map[int]string{1: "x", 2: "1"}, "after"},
				{map[int]string{3: "-1"}, "min"},
				{map[int]string{3: "9007199254740992"}, "min"},
				{map[int]string{4: "01"}, "max"},
				{map[int]string{4: ""}, "max"},
				{map[int]string{0: "0", 3: "x"}, "limit"},
				{map[int]string{1: "1.5", 2: "1", 3: "x"}, "after"},
				{map[int]string{3: "x", 4: "x"}, "min"},
				{map[int]string{4: "x", 5: strings.Repeat("l", protocol.MaxLaneName+1)}, "max"},
				{map[int]string{5: strings.Repeat("l", protocol.MaxLaneName+1), 6: strings.Repeat("e", protocol.MaxText+1)}, "lane"},
			} {
				a := append([]string(nil), args...)
				for i, s := range tc.bad {
					a[i] = s
				}
				q.refuse(protocol.ErrBadArg(v.Name, tc.want), q.verb(v, a...))
			}
			a := append([]string(nil), args...)
			a[3], a[4] = maxScore, maxScore
			require.NoError(t, q.exec(v, a...).Error())
		})
	}
}

// testOpsInvariants: a fixed pseudo-random run of the job verbs and the
// operations verbs over a few lanes, checking after each call that the
// lane keys hold what they must (laneInvariants), that every member of a
// state's set has a row of that state, that the counters add up (added =
// completed + removed + trimmed + the jobs in the sets), and that a JOBS
// walk in small pages, either way, lists each set exactly in its order.
func testOpsInvariants(t *testing.T, env Env) {
	for seed := uint64(1); seed <= 4; seed++ {
		scenario(t, env, "seed "+strconv.FormatUint(seed, 10), func(t *testing.T, q *queue) {
			q.install()
			rng := rand.New(rand.NewPCG(seed, 11))
			lanes := []string{"a", "b\x00", ""}
			pick := func(key string) string {
				ids, err := q.cmd("ZRANGE", key, "0", "-1").AsStrSlice()
				require.NoError(t, err)
				if len(ids) == 0 {
					return ""
				}
				return ids[rng.IntN(len(ids))]
			}
			for step := range 120 {
				var what string
				switch op := rng.IntN(10); op {
				case 0, 1:
					n := 1 + rng.IntN(4)
					jobs := make([]job, n)
					for i := range jobs {
						jobs[i] = job{data: "d", lane: lanes[rng.IntN(len(lanes))], prio: strconv.Itoa(rng.IntN(3)),
							attempts: strconv.Itoa(1 + rng.IntN(2))}
						if rng.IntN(3) == 0 {
							jobs[i].delay = "600000"
						}
					}
					what = "add"
					q.add(jobs...)
				case 2:
					what = "claim and fail"
					for _, c := range q.claim(600000, 1+rng.IntN(3)) {
						q.must(protocol.Fail, c.id, c.token(), strconv.Itoa(rng.IntN(2)), "e"+strconv.Itoa(rng.IntN(3)))
					}
				case 3:
					what = "claim and complete"
					for _, c := range q.claim(600000, 1+rng.IntN(2)) {
						q.must(protocol.Complete, c.id, c.token(), "")
					}
				case 4:
					if id := pick(q.k.Delayed); id != "" {
						what = "retry " + id
						q.must(protocol.Retry, id)
					}
				case 5:
					what = "promoteall"
					q.must(protocol.PromoteAll, strconv.Itoa(1+rng.IntN(3)))
				case 6, 7:
					v := protocol.RequeueDead
					if op == 7 {
						v = protocol.RemoveDead
					}
					lane := []string{"", "a", "b\x00"}[rng.IntN(3)]
					errText := []string{"", "e1", "e"}[rng.IntN(3)]
					score, member := "", ""
					what = v.Name + " lane " + strconv.Quote(lane) + " error " + errText
					for range 100 {
						arr, err := q.exec(v, strconv.Itoa(1+rng.IntN(3)), score, member, "0", maxScore, lane, errText).ToArray()
						require.NoError(t, err, what)
						if arr[2].IsNil() {
							break
						}
						sc, err := arr[2].AsInt64()
						require.NoError(t, err)
						score = strconv.FormatInt(sc, 10)
						member, err = arr[3].ToString()
						require.NoError(t, err)
					}
				case 8:
					if id := pick(q.k.Dead); id != "" {
						what = "requeue " + id
						q.must(protocol.Requeue, id)
					}
				case 9:
					what = "claim"
					q.claim(600000, 1)
				}
				where := "step " + strconv.Itoa(step) + ": " + what
				q.laneInvariants(lanes[:len(lanes)-1], where)
				q.opsInvariants(lanes[:len(lanes)-1], rng, where)
			}
		})
	}
}

// opsInvariants checks the sets against their rows, the counters against
// the sets, and JOBS walks against the sets.
func (q *queue) opsInvariants(lanes []string, rng *rand.Rand, where string) {
	q.t.Helper()
	sets := map[string]string{
		q.k.Pending: protocol.StatePending, q.k.Delayed: protocol.StateDelayed,
		q.k.Active: protocol.StateActive, q.k.Dead: protocol.StateDead,
	}
	for _, l := range lanes {
		sets[q.laneKey(l)] = protocol.StatePending
	}
	var held int64
	for key, state := range sets {
		ids, err := q.cmd("ZRANGE", key, "0", "-1").AsStrSlice()
		require.NoError(q.t, err)
		held += int64(len(ids))
		for _, id := range ids {
			require.Equal(q.t, state, q.hget(id, "state"), "%s: job %s in %s", where, id, key)
		}
	}
	counter := func(name string) int64 {
		v, err := q.cmd("HGET", q.k.Stats, name).AsInt64()
		if err != nil {
			return 0
		}
		return v
	}
	require.Equal(q.t, counter("added"), counter("completed")+counter("removed")+counter("trimmed")+held, "%s: added", where)

	// one state, one lane and one direction per step keep the run short
	states := []string{protocol.StatePending, protocol.StateDelayed, protocol.StateActive, protocol.StateDead}
	state, lane, newest := states[rng.IntN(len(states))], "", rng.IntN(2)
	key := q.k.Fixed(state)
	if state == protocol.StatePending && rng.IntN(2) == 0 {
		lane = lanes[rng.IntN(len(lanes))]
		key = q.laneKey(lane)
	}
	want, err := q.cmd("ZRANGE", key, "0", "-1").AsStrSlice()
	require.NoError(q.t, err)
	if newest == 1 {
		slices.Reverse(want)
	}
	got := []string{}
	score, member := "", ""
	for range 1000 {
		arr, err := q.exec(protocol.Jobs, state, lane, strconv.Itoa(newest), score, member, "2", "0").ToArray()
		require.NoError(q.t, err, where)
		rows, err := arr[3].ToArray()
		require.NoError(q.t, err)
		for _, r := range rows {
			f, err := r.ToArray()
			require.NoError(q.t, err)
			id, err := f[0].ToString()
			require.NoError(q.t, err)
			got = append(got, id)
		}
		if arr[1].IsNil() {
			break
		}
		sc, err := arr[1].AsInt64()
		require.NoError(q.t, err)
		score = strconv.FormatInt(sc, 10)
		member, err = arr[2].ToString()
		require.NoError(q.t, err)
	}
	require.Equal(q.t, want, got, "%s: JOBS %s %q newest %d", where, state, lane, newest)
}
