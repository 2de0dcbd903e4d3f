package conformance

import (
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testCompleteMany: EMQ.COMPLETEMANY is COMPLETE for up to 1000 jobs, each
// with its own outcome (1 completed, 0 gone, -1 stale, -2 not active); only
// the completed jobs are written, and a refusal of the call writes nothing.
// Its shape (count, arity), layout, fence, first id, types and counter are
// in the generic groups, with ADD's count rules (countGroups).
func testCompleteMany(t *testing.T, env Env) {
	const (
		completed, gone, stale, notActive = 1, 0, -1, -2
	)
	many := func(q *queue, ps ...pair) func() valkey.ValkeyResult {
		return q.verb(protocol.CompleteMany, manyArgs(ps...)...)
	}

	// success: outcomes, order, writes
	scenario(t, env, "every outcome in one call, in argument order", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"}, job{data: "d"}, job{data: "e"})
		cs := q.claim(600000, 3) // 1, 2 and 3 active with token 1; 4 and 5 pending with att 0
		q.must(protocol.Log, cs[0].id, cs[0].token(), "line", "10")
		q.must(protocol.Log, cs[2].id, cs[2].token(), "line", "10")
		q.must(protocol.Log, cs[1].id, cs[1].token(), "kept", "10")
		reply := q.written(many(q,
			cs[0].pair(),    // 1
			pair{"99", "1"}, // gone
			pair{"2", "2"},  // stale
			pair{"4", "0"},  // the token matches, not active
			cs[2].pair(),    // 3
			pair{"5", "1"},  // stale, pending
		), []string{q.k.Job("1"), q.k.Logs("1"), q.k.Job("3"), q.k.Logs("3")}, []string{q.k.Active, q.k.Stats})
		require.Equal(t, outcomes(completed, gone, stale, notActive, completed, stale), reply)
		require.Equal(t, Bulks("2"), q.r("ZRANGE", q.k.Active, "0", "-1"))
		require.Equal(t, Bulks("4", "5"), q.r("ZRANGE", q.k.Pending, "0", "-1"))
		require.Equal(t, Bulk("2"), q.r("HGET", q.k.Stats, "completed"))
		require.Equal(t, Bulk("5"), q.r("HGET", q.k.Stats, "added"))
	})
	scenario(t, env, "reply order is argument order, not id order", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"})
		cs := q.claim(600000, 3)
		reply := q.written(many(q, pair{"3", "1"}, pair{"7", "1"}, pair{"1", "1"}, pair{"2", "9"}),
			[]string{q.k.Job("3"), q.k.Job("1")}, []string{q.k.Active, q.k.Stats})
		require.Equal(t, outcomes(completed, gone, completed, stale), reply)
		require.Equal(t, Bulks(cs[1].id), q.r("ZRANGE", q.k.Active, "0", "-1"))
	})
	scenario(t, env, "one job is COMPLETE", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.must(protocol.Log, c.id, c.token(), "line", "10")
		reply := q.written(many(q, c.pair()), []string{q.k.Job(c.id), q.k.Logs(c.id), q.k.Active}, []string{q.k.Stats})
		require.Equal(t, outcomes(completed), reply)
		require.Equal(t, Bulk("1"), q.r("HGET", q.k.Stats, "completed"))
		require.Equal(t, Int(0), q.call(protocol.Complete, c.id, c.token(), ""), "COMPLETE finds the row gone")
	})
	scenario(t, env, "twice: the rows are gone", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		cs := q.claim(600000, 2)
		require.Equal(t, outcomes(completed, completed), q.call(protocol.CompleteMany, manyArgs(cs[0].pair(), cs[1].pair())...))
		require.Equal(t, outcomes(gone, gone), q.unchanged(many(q, cs[1].pair(), cs[0].pair())))
		require.Equal(t, Bulk("2"), q.r("HGET", q.k.Stats, "completed"))
	})
	scenario(t, env, "stats completed counts k, not n", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"}, job{data: "d"})
		cs := q.claim(600000, 4)
		q.do("HSET", q.k.Stats, "completed", "5")
		require.Equal(t, outcomes(completed, stale, completed, completed),
			q.call(protocol.CompleteMany, manyArgs(cs[0].pair(), pair{cs[1].id, "2"}, cs[2].pair(), cs[3].pair())...))
		require.Equal(t, Bulk("8"), q.r("HGET", q.k.Stats, "completed"))
	})
	scenario(t, env, "stats created when absent", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		cs := q.claim(600000, 2)
		q.do("DEL", q.k.Stats)
		require.Equal(t, outcomes(completed, completed), q.call(protocol.CompleteMany, manyArgs(cs[0].pair(), cs[1].pair())...))
		require.Equal(t, []string{"completed", "2"}, q.hgetall(q.k.Stats))
	})
	scenario(t, env, "logs of any type are deleted", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		cs := q.claim(600000, 2)
		q.do("SET", q.k.Logs(cs[0].id), "planted")
		q.do("HSET", q.k.Logs(cs[1].id), "f", "v")
		require.Equal(t, outcomes(completed, completed), q.call(protocol.CompleteMany, manyArgs(cs[0].pair(), cs[1].pair())...))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Logs(cs[0].id), q.k.Logs(cs[1].id)))
	})
	scenario(t, env, "unique keys released only when they hold the id", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", unique: "u"}, job{data: "b", unique: "v"}, job{data: "c", unique: "w"},
			job{data: "d", unique: "x"}, job{data: "e", unique: "y"}, job{data: "f", unique: "z"})
		q.claim(600000, 6)
		q.do("SET", q.k.Unique("v"), "99") // held by another job
		q.do("DEL", q.k.Unique("w"))       // expired
		q.do("SET", q.k.Unique("x"), "1")  // held by another job of the call
		q.do("SET", q.k.Unique("z"), "06") // the id spelled otherwise
		reply := q.written(many(q, pair{"1", "1"}, pair{"2", "1"}, pair{"3", "1"}, pair{"4", "1"}, pair{"5", "2"}, pair{"6", "1"}),
			[]string{q.k.Job("1"), q.k.Job("2"), q.k.Job("3"), q.k.Job("4"), q.k.Job("6"), q.k.Unique("u")},
			[]string{q.k.Active, q.k.Stats})
		require.Equal(t, outcomes(completed, completed, completed, completed, stale, completed), reply)
		require.Equal(t, Bulks("99", "1", "5", "06"), q.r("MGET", q.k.Unique("v"), q.k.Unique("x"), q.k.Unique("y"), q.k.Unique("z")))
	})
	for _, holder := range []string{"1", "2"} {
		// the key is deleted once, whichever job of the call holds it
		scenario(t, env, "two jobs of the call sharing a unique key held by "+holder, func(t *testing.T, q *queue) {
			q.install()
			q.add(job{data: "a"}, job{data: "b"})
			q.claim(600000, 2)
			q.do("HSET", q.k.Job("1"), "uniq", "s")
			q.do("HSET", q.k.Job("2"), "uniq", "s")
			q.do("SET", q.k.Unique("s"), holder)
			reply := q.written(many(q, pair{"1", "1"}, pair{"2", "1"}),
				[]string{q.k.Job("1"), q.k.Job("2"), q.k.Active, q.k.Unique("s")}, []string{q.k.Stats})
			require.Equal(t, outcomes(completed, completed), reply)
		})
	}
	scenario(t, env, "the unique key of a job left alone stays", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", unique: "u"}, job{data: "b", unique: "v"})
		q.claim(600000, 1) // 2 stays pending
		require.Equal(t, outcomes(stale, notActive), q.unchanged(many(q, pair{"1", "0"}, pair{"2", "0"})))
	})

	// nothing completed: no write, and stats is not read
	scenario(t, env, "no job completed writes nothing", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		q.claim(600000, 1)
		q.do("HSET", q.k.Job("7"), "data", "no att") // a row without att reads as absent
		require.Equal(t, outcomes(gone, stale, notActive, gone),
			q.unchanged(many(q, pair{"9", "1"}, pair{"1", "2"}, pair{"2", "0"}, pair{"7", ""})))
	})
	for name, plant := range map[string]func(q *queue){
		"stats of another type":  func(q *queue) { q.plant(q.k.Stats, "hash") },
		"completed not a number": func(q *queue) { q.do("HSET", q.k.Stats, "completed", "abc") },
		"completed at int64 max": func(q *queue) { q.do("HSET", q.k.Stats, "completed", int64Max) },
	} {
		scenario(t, env, "nothing completed does not read stats: "+name, func(t *testing.T, q *queue) {
			c := q.active(job{data: "a"})
			plant(q)
			require.Equal(t, outcomes(stale, gone), q.unchanged(many(q, pair{c.id, "2"}, pair{"2", "1"})))
		})
	}
	scenario(t, env, "a dead job is not active", func(t *testing.T, q *queue) {
		id := q.dead(job{data: "a"})
		require.Equal(t, outcomes(notActive), q.unchanged(many(q, pair{id, "1"})))
	})
	scenario(t, env, "an expired lease still completes", func(t *testing.T, q *queue) {
		q.install()
		q.addOne("a")
		c := q.expired()
		require.Equal(t, outcomes(completed), q.call(protocol.CompleteMany, manyArgs(c.pair())...))
	})

	// tokens are bytes, compared with att
	for _, token := range []string{"", "0", "2", "01", "1 ", " 1", "1.0", "+1", "1\x00", "\x00", "\xff\xfe", "١"} {
		scenario(t, env, "stale token "+strconv.Quote(token), func(t *testing.T, q *queue) {
			c := q.active(job{data: "a"})
			require.Equal(t, outcomes(stale), q.unchanged(many(q, pair{c.id, token})))
		})
	}
	for _, att := range []string{"", "\x00", "\xff\x00z", "1\r\n", "not a number"} {
		scenario(t, env, "binary att "+strconv.Quote(att)+" and its token", func(t *testing.T, q *queue) {
			q.install()
			q.add(job{data: "a"}, job{data: "b"})
			q.claim(600000, 2)
			q.do("HSET", q.k.Job("1"), "att", att)
			q.do("HSET", q.k.Job("2"), "att", att+"x")
			require.Equal(t, outcomes(completed, stale), q.call(protocol.CompleteMany, manyArgs(pair{"1", att}, pair{"2", att})...))
			require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("1")))
		})
	}

	// 1000 jobs
	scenario(t, env, "1000 jobs in one call", func(t *testing.T, q *queue) {
		q.install()
		jobs := make([]job, protocol.MaxCount)
		for i := range jobs {
			jobs[i] = job{data: "j"}
		}
		q.add(jobs...)
		cs := q.claim(600000, protocol.MaxCount)
		require.Len(t, cs, protocol.MaxCount)
		// odd positions stale, then every job again: the completed are gone
		first, want := make([]pair, len(cs)), make([]int64, len(cs))
		for i, c := range cs {
			first[i], want[i] = c.pair(), completed
			if i%2 == 1 {
				first[i].token, want[i] = "2", stale
			}
		}
		require.Equal(t, outcomes(want...), q.call(protocol.CompleteMany, manyArgs(first...)...))
		require.Equal(t, Int(protocol.MaxCount/2), q.r("ZCARD", q.k.Active))
		require.Equal(t, Bulk("500"), q.r("HGET", q.k.Stats, "completed"))
		second := make([]pair, len(cs))
		for i, c := range slices.Backward(cs) {
			second[len(cs)-1-i], want[len(cs)-1-i] = c.pair(), gone
			if i%2 == 1 {
				want[len(cs)-1-i] = completed
			}
		}
		require.Equal(t, outcomes(want...), q.call(protocol.CompleteMany, manyArgs(second...)...))
		require.Equal(t, Bulk("1000"), q.r("HGET", q.k.Stats, "completed"))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Active))
		require.Equal(t, Arr(), q.r("KEYS", "emq:{"+q.name+"}:job:*"))
	})

	// values: id by id, then repeats
	for _, tc := range []struct {
		name string
		argv []string
		want string
	}{
		{"bad id in a later pair", manyArgs(pair{"1", "1"}, pair{"2", "1"}, pair{"0", "1"}), protocol.ErrBadArg("completemany", "id")},
		{"id 01 is bad, not a repeat", manyArgs(pair{"1", "1"}, pair{"01", "1"}), protocol.ErrBadArg("completemany", "id")},
		{"id past 2^42 - 1", manyArgs(pair{"1", "1"}, pair{"4398046511104", "1"}), protocol.ErrBadArg("completemany", "id")},
		{"repeated id", manyArgs(pair{"1", "1"}, pair{"1", "1"}), protocol.ErrCompleteManyRepeated},
		{"repeated with another token", manyArgs(pair{"1", "1"}, pair{"1", "2"}), protocol.ErrCompleteManyRepeated},
		{"repeated later in the call", manyArgs(pair{"1", "1"}, pair{"5", "1"}, pair{"6", "1"}, pair{"5", "1"}), protocol.ErrCompleteManyRepeated},
		{"repeated gone id", manyArgs(pair{"1", "1"}, pair{"9", "1"}, pair{"9", "1"}), protocol.ErrCompleteManyRepeated},
		{"repeated largest id", manyArgs(pair{"4398046511103", "1"}, pair{"4398046511103", "1"}), protocol.ErrCompleteManyRepeated},
		{"a repeat before a later bad id", manyArgs(pair{"1", "1"}, pair{"1", "1"}, pair{"x", "1"}), protocol.ErrCompleteManyRepeated},
		{"a bad id before a later repeat", manyArgs(pair{"1", "1"}, pair{"x", "1"}, pair{"1", "1"}), protocol.ErrBadArg("completemany", "id")},
	} {
		scenario(t, env, tc.name, func(t *testing.T, q *queue) {
			fixtures[protocol.CompleteMany](q)
			q.refuse(tc.want, q.verb(protocol.CompleteMany, tc.argv...))
		})
		scenario(t, env, tc.name+" before the fence", func(t *testing.T, q *queue) {
			fixtures[protocol.CompleteMany](q)
			q.do("DEL", q.k.Version)
			q.refuse(tc.want, q.verb(protocol.CompleteMany, tc.argv...))
		})
	}
	scenario(t, env, "layout before a repeat", func(t *testing.T, q *queue) {
		fixtures[protocol.CompleteMany](q)
		keys := protocol.CompleteMany.KeyNames(q.k)
		keys[3] += "x"
		q.refuseKeys(protocol.ErrLayout("completemany"), keys,
			q.keys(protocol.CompleteMany, keys, manyArgs(pair{"1", "1"}, pair{"1", "1"})...))
	})
	scenario(t, env, "1000 pairs with the last one a repeat", func(t *testing.T, q *queue) {
		fixtures[protocol.CompleteMany](q)
		ps := make([]pair, protocol.MaxCount)
		for i := range ps {
			ps[i] = pair{strconv.Itoa(i + 1), "1"}
		}
		ps[len(ps)-1].id = "1"
		q.refuse(protocol.ErrCompleteManyRepeated, many(q, ps...))
	})

	// fence before the domain reads
	scenario(t, env, "fence before a wrong-typed row", func(t *testing.T, q *queue) {
		args := fixtures[protocol.CompleteMany](q)
		q.plant(q.k.Job("1"), "hash")
		q.do("SET", q.k.Version, "1")
		q.refuse(protocol.ErrWireFound("1"), q.verb(protocol.CompleteMany, args...))
	})

	// WRONGTYPE, job by job; the first refusal wins over later reads
	scenario(t, env, "row of a later job", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		q.claim(600000, 2)
		q.plant(q.k.Job("2"), "hash")
		q.refuse(protocol.ErrWrongType, many(q, pair{"1", "1"}, pair{"2", "1"}))
	})
	scenario(t, env, "row after gone, stale and not active jobs", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"}, job{data: "c"})
		q.claim(600000, 1)
		q.plant(q.k.Job("3"), "hash")
		q.refuse(protocol.ErrWrongType, many(q, pair{"9", "1"}, pair{"1", "2"}, pair{"2", "0"}, pair{"3", "1"}))
	})
	scenario(t, env, "row before the stats prediction", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		q.claim(600000, 2)
		q.do("HSET", q.k.Stats, "completed", "abc")
		q.plant(q.k.Job("2"), "hash")
		q.refuse(protocol.ErrWrongType, many(q, pair{"1", "1"}, pair{"2", "1"}))
	})
	scenario(t, env, "unique key of a later job before the stats prediction", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b", unique: "u"})
		q.claim(600000, 2)
		q.do("HSET", q.k.Stats, "completed", int64Max)
		q.plant(q.k.Unique("u"), "string")
		q.refuse(protocol.ErrWrongType, many(q, pair{"1", "1"}, pair{"2", "1"}))
	})
	scenario(t, env, "active of another type after a gone job", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.plant(q.k.Active, "zset")
		q.refuse(protocol.ErrWrongType, many(q, pair{"9", "1"}, c.pair()))
	})
	scenario(t, env, "active is read only for a matching token", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		q.plant(q.k.Active, "zset")
		require.Equal(t, outcomes(gone, stale), q.unchanged(many(q, pair{"9", "1"}, pair{c.id, "2"})))
	})
	scenario(t, env, "a unique key is read only for an active job", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a", unique: "u"}, job{data: "b", unique: "v"})
		q.claim(600000, 1) // 2 stays pending, att 0
		q.plant(q.k.Unique("u"), "string")
		q.plant(q.k.Unique("v"), "string")
		require.Equal(t, outcomes(stale, notActive), q.unchanged(many(q, pair{"1", "2"}, pair{"2", "0"})))
	})

	// the counter, predicted with +k
	for _, tc := range []struct {
		name, stored string
		ps           []pair
		want         string // a refusal, or the value after the call
	}{
		{"not an integer", "abc", []pair{{"1", "1"}, {"2", "1"}, {"3", "1"}}, protocol.ErrHashNotInteger},
		{"not canonical", "007", []pair{{"1", "1"}}, protocol.ErrHashNotInteger},
		{"overflow by k", "9223372036854775805", []pair{{"1", "1"}, {"2", "1"}, {"3", "1"}}, protocol.ErrOverflow},
		{"reaches int64 max by k", "9223372036854775804", []pair{{"1", "1"}, {"2", "1"}, {"3", "1"}}, int64Max},
		{"k, not n, is predicted", int64MaxLess1, []pair{{"1", "1"}, {"2", "2"}, {"9", "1"}}, int64Max},
		{"negative", "-5", []pair{{"1", "1"}, {"2", "1"}, {"3", "1"}}, "-2"},
	} {
		scenario(t, env, "completed "+tc.name, func(t *testing.T, q *queue) {
			q.install()
			q.add(job{data: "a"}, job{data: "b"}, job{data: "c"})
			q.claim(600000, 3)
			q.do("HSET", q.k.Stats, "completed", tc.stored)
			if tc.want == protocol.ErrHashNotInteger || tc.want == protocol.ErrOverflow {
				q.refuse(tc.want, many(q, tc.ps...))
				return
			}
			q.must(protocol.CompleteMany, manyArgs(tc.ps...)...)
			require.Equal(t, Bulk(tc.want), q.r("HGET", q.k.Stats, "completed"))
		})
	}
}

// pair is one job of a COMPLETEMANY call.
type pair struct{ id, token string }

// pair is the claimed job with its attempt token.
func (c claimed) pair() pair { return pair{c.id, c.token()} }

// manyArgs is COMPLETEMANY's ARGV for the pairs, each with no result.
func manyArgs(ps ...pair) []string {
	out := []string{strconv.Itoa(len(ps))}
	for _, p := range ps {
		out = append(out, p.id, p.token, "")
	}
	return out
}

// triple is one job of a COMPLETEMANY call with its result.
type triple struct{ id, token, result string }

// with is the claimed job with its attempt token and result r.
func (c claimed) with(r string) triple { return triple{c.id, c.token(), r} }

// manyResults is COMPLETEMANY's ARGV for the triples.
func manyResults(ts ...triple) []string {
	out := []string{strconv.Itoa(len(ts))}
	for _, t := range ts {
		out = append(out, t.id, t.token, t.result)
	}
	return out
}

// outcomes is COMPLETEMANY's reply, rendered.
func outcomes(os ...int64) string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = Int(o)
	}
	return Arr(out...)
}

// written runs call and requires that it deleted exactly the keys removed
// and wrote (created or changed) exactly the keys changed: every other key
// of the queue is left as it was. It returns the rendered reply.
func (q *queue) written(call func() valkey.ValkeyResult, removed, changed []string) string {
	q.t.Helper()
	before := q.snapshot()
	reply := Render(call())
	after := q.snapshot()
	got := map[string]string{}
	for k, b := range before {
		if a, ok := after[k]; !ok {
			got[k] = "removed"
		} else if a != b {
			got[k] = "written"
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			got[k] = "written"
		}
	}
	want := map[string]string{}
	for _, k := range removed {
		want[k] = "removed"
	}
	for _, k := range changed {
		want[k] = "written"
	}
	require.Equal(q.t, want, got, "the keys the call deleted and wrote (reply %s)", reply)
	return reply
}
