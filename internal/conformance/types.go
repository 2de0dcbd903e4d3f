package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// keyTypes is the type each key of a queue holds. "row" is job:1, "logs"
// job:1:logs: every fixture's first job has id 1.
var keyTypes = map[string]string{
	protocol.SuffixVersion: "string", protocol.SuffixMeta: "hash", protocol.SuffixStats: "hash",
	protocol.SuffixPending: "zset", protocol.SuffixDelayed: "zset", protocol.SuffixActive: "zset",
	protocol.SuffixDead: "zset", protocol.SuffixSignal: "list", "row": "hash", "logs": "list",
	protocol.SuffixLaneInfo: "hash", protocol.SuffixLanes: "zset", protocol.SuffixTurns: "zset",
	protocol.SuffixRate: "string", fixtureLaneKey: "zset",
	protocol.SuffixWaiting: "zset", protocol.SuffixCompleted: "zset",
	"kids": "zset", "results": "hash", "failures": "hash",
}

// fixtureLaneKey is the lane key of the lane verbs' fixtures (lane "l").
const fixtureLaneKey = protocol.SuffixLane + fixtureLane

// planted lists, per verb, the keys it reads or writes past the fence; a key
// of another type there is refused with the server's WRONGTYPE text, before
// any write.
var planted = map[*protocol.Verb][]string{
	protocol.Install:      {"version"},
	protocol.Add:          {"meta", "stats", "pending", "delayed", "signal"},
	protocol.Claim:        {"meta", "pending", "turns", "active", "row"},
	protocol.Extend:       {"active", "row"},
	protocol.Complete:     {"stats", "active", "row", "meta"},
	protocol.CompleteMany: {"stats", "active", "row", "meta"},
	protocol.Fail:         {"stats", "active", "delayed", "dead", "row"},
	protocol.Recover:      {"stats", "pending", "active", "dead", "signal", "row"},
	protocol.Promote:      {"pending", "delayed", "signal", "row"},
	protocol.Pause:        {"meta"},
	protocol.Resume:       {"meta", "pending", "signal"},
	protocol.Remove:       {"stats", "pending", "row"},
	protocol.Requeue:      {"stats", "pending", "dead", "signal", "row"},
	protocol.Log:          {"row", "logs"},
	protocol.Progress:     {"row"},
	protocol.Stats:        {"meta", "stats", "pending", "delayed", "active", "dead", "lanes", "waiting", "completed"},
	protocol.Inspect:      {"row", "logs"},
	protocol.LaneCap:      laneAccountingKeys,
	protocol.LanePause:    laneAccountingKeys,
	protocol.LaneResume:   laneAccountingKeys,
	protocol.Lane:         {"laneinfo", fixtureLaneKey},
	protocol.Lanes:        {"lanes", "laneinfo", fixtureLaneKey},
	protocol.Rate:         {"meta"},
	protocol.Retain:       {"meta"},
	protocol.Trim:         {"meta", "completed", "dead", "row"},
	protocol.Children:     {"kids", "results", "failures"},
	protocol.Jobs:         {"dead", "row"},
	protocol.RequeueDead:  {"stats", "pending", "dead", "signal", "row"},
	protocol.RemoveDead:   {"stats", "dead", "row"},
	protocol.PromoteAll:   {"pending", "delayed", "signal", "row"},
	protocol.Retry:        {"pending", "delayed", "signal", "row"},
	protocol.Reschedule:   {"pending", "delayed", "signal", "row"},
	protocol.Cancel:       {"stats", "pending", "dead", "row"},
}

// laneAccountingKeys are the keys the lane accounting reads, in its order.
var laneAccountingKeys = []string{"laneinfo", fixtureLaneKey, "meta", "turns", "lanes", "signal"}

func (q *queue) keyOf(name string) string {
	switch name {
	case "row":
		return q.k.Job("1")
	case "logs":
		return q.k.Logs("1")
	case "kids":
		return q.k.Kids("1")
	case "results":
		return q.k.Results("1")
	case "failures":
		return q.k.Failures("1")
	}
	return q.k.Base + name
}

// testWrongType: a key of the wrong type on every key a verb types (step 6).
func testWrongType(t *testing.T, env Env) {
	for _, v := range protocol.All {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			for _, name := range planted[v] {
				scenario(t, env, name, func(t *testing.T, q *queue) {
					args := fixtures[v](q)
					q.plant(q.keyOf(name), keyTypes[name])
					q.refuse(protocol.ErrWrongType, q.verb(v, args...))
				})
			}
		})
	}
	// the derived keys the fixtures do not reach
	t.Run("derived", func(t *testing.T) {
		t.Parallel()
		scenario(t, env, "add unique", func(t *testing.T, q *queue) {
			q.install()
			q.plant(q.k.Unique("u"), "string")
			q.refuse(protocol.ErrWrongType, q.verb(protocol.Add, addArgs(job{data: "a", unique: "u"})...))
		})
		scenario(t, env, "complete unique", func(t *testing.T, q *queue) {
			c := q.active(job{data: "a", unique: "u"})
			q.plant(q.k.Unique("u"), "string")
			q.refuse(protocol.ErrWrongType, q.verb(protocol.Complete, c.id, c.token(), ""))
		})
		scenario(t, env, "completemany unique", func(t *testing.T, q *queue) {
			c := q.active(job{data: "a", unique: "u"})
			q.plant(q.k.Unique("u"), "string")
			q.refuse(protocol.ErrWrongType, q.verb(protocol.CompleteMany, "1", c.id, c.token(), ""))
		})
		scenario(t, env, "remove unique", func(t *testing.T, q *queue) {
			q.install()
			id := q.add(job{data: "a", unique: "u"})[0]
			q.plant(q.k.Unique("u"), "string")
			q.refuse(protocol.ErrWrongType, q.verb(protocol.Remove, id, "0"))
		})
		scenario(t, env, "remove delayed", func(t *testing.T, q *queue) {
			q.install()
			id := q.add(job{data: "a", delay: "60000"})[0]
			q.plant(q.k.Delayed, "zset")
			q.refuse(protocol.ErrWrongType, q.verb(protocol.Remove, id, "0"))
		})
		scenario(t, env, "remove dead", func(t *testing.T, q *queue) {
			id := q.dead(job{data: "a"})
			q.plant(q.k.Dead, "zset")
			q.refuse(protocol.ErrWrongType, q.verb(protocol.Remove, id, "0"))
		})
		scenario(t, env, "fail to dead types delayed", func(t *testing.T, q *queue) {
			c := q.active(job{data: "a"})
			q.plant(q.k.Delayed, "zset")
			q.refuse(protocol.ErrWrongType, q.verb(protocol.Fail, c.id, c.token(), "0", "x"))
		})
		scenario(t, env, "recover to dead types pending", func(t *testing.T, q *queue) {
			q.install()
			q.add(job{data: "a", attempts: "1"})
			q.expired()
			q.plant(q.k.Pending, "zset")
			q.refuse(protocol.ErrWrongType, q.verb(protocol.Recover, "10"))
		})
		scenario(t, env, "claim of a popped row", func(t *testing.T, q *queue) {
			q.install()
			q.add(job{data: "a"}, job{data: "b"})
			q.plant(q.k.Job("2"), "hash")
			q.refuse(protocol.ErrWrongType, q.verb(protocol.Claim, "1000", "2"))
		})
	})
}

// The server's integer rules, as HINCRBY applies them to a stored field.
const (
	int64Max      = "9223372036854775807"
	int64MaxLess1 = "9223372036854775806"
)

// notIntegers are stored values HINCRBY refuses (string2ll fails).
var notIntegers = []string{
	"abc", "", "-0", "+1", " 1", "1 ", "01", "1.5", "1e3", "0x10", "-",
	"9223372036854775808", "-9223372036854775809", "18446744073709551616", "99999999999999999999",
	"\x001",
}

// testIntegers: every counter a verb increments is predicted before the
// first write (step 6).
func testIntegers(t *testing.T, env Env) {
	notInt, overflow := protocol.ErrHashNotInteger, protocol.ErrOverflow

	// the string2ll and overflow rules, on COMPLETE's counter
	t.Run("rules", func(t *testing.T) {
		t.Parallel()
		for _, stored := range notIntegers {
			scenario(t, env, "refused "+quote(stored), func(t *testing.T, q *queue) {
				args := fixtures[protocol.Complete](q)
				q.do("HSET", q.k.Stats, "completed", stored)
				q.refuse(notInt, q.verb(protocol.Complete, args...))
			})
		}
		scenario(t, env, "overflow", func(t *testing.T, q *queue) {
			args := fixtures[protocol.Complete](q)
			q.do("HSET", q.k.Stats, "completed", int64Max)
			q.refuse(overflow, q.verb(protocol.Complete, args...))
		})
		for stored, next := range map[string]string{
			int64MaxLess1:          int64Max,
			"-9223372036854775808": "-9223372036854775807",
			"-5":                   "-4",
			"0":                    "1",
			"4398046511104":        "4398046511105",
		} {
			scenario(t, env, "accepted "+stored, func(t *testing.T, q *queue) {
				args := fixtures[protocol.Complete](q)
				q.do("HSET", q.k.Stats, "completed", stored)
				require.Equal(t, Int(1), q.call(protocol.Complete, args...))
				require.Equal(t, Bulk(next), q.r("HGET", q.k.Stats, "completed"))
			})
		}
	})

	// each counter of each verb
	type counter struct {
		name    string
		verb    *protocol.Verb
		setup   func(q *queue) []string
		field   string
		key     func(q *queue) string
		refused bool // false: the verb does not increment it on this path
	}
	stats := func(q *queue) string { return q.k.Stats }
	failWith := func(retry string) func(q *queue) []string {
		return func(q *queue) []string {
			c := q.active(job{data: "a"})
			return []string{c.id, c.token(), retry, "boom"}
		}
	}
	recoverTo := func(attempts string) func(q *queue) []string {
		return func(q *queue) []string {
			q.install()
			q.add(job{data: "a", attempts: attempts})
			q.expired()
			return []string{"10"}
		}
	}
	for _, c := range []counter{
		{"add added", protocol.Add, fixtures[protocol.Add], "added", stats, true},
		{"add seq", protocol.Add, fixtures[protocol.Add], "seq", func(q *queue) string { return q.k.Meta }, true},
		{"claim att", protocol.Claim, fixtures[protocol.Claim], "att", func(q *queue) string { return q.k.Job("1") }, true},
		{"complete completed", protocol.Complete, fixtures[protocol.Complete], "completed", stats, true},
		{"completemany completed", protocol.CompleteMany, fixtures[protocol.CompleteMany], "completed", stats, true},
		{"fail retry failed", protocol.Fail, failWith("1"), "failed", stats, true},
		{"fail retry retried", protocol.Fail, failWith("1"), "retried", stats, true},
		{"fail retry dead", protocol.Fail, failWith("1"), "dead", stats, false},
		{"fail dead failed", protocol.Fail, failWith("0"), "failed", stats, true},
		{"fail dead dead", protocol.Fail, failWith("0"), "dead", stats, true},
		{"fail dead retried", protocol.Fail, failWith("0"), "retried", stats, false},
		{"recover to pending recovered", protocol.Recover, recoverTo("3"), "recovered", stats, true},
		{"recover to pending dead", protocol.Recover, recoverTo("3"), "dead", stats, false},
		{"recover to dead dead", protocol.Recover, recoverTo("1"), "dead", stats, true},
		{"recover to dead recovered", protocol.Recover, recoverTo("1"), "recovered", stats, false},
		{"remove removed", protocol.Remove, fixtures[protocol.Remove], "removed", stats, true},
		{"requeue requeued", protocol.Requeue, fixtures[protocol.Requeue], "requeued", stats, true},
		{"cancel cancelled", protocol.Cancel, fixtures[protocol.Cancel], "cancelled", stats, true},
		{"cancel dead", protocol.Cancel, fixtures[protocol.Cancel], "dead", stats, false},
		{"trim of completed jobs trimmed", protocol.Trim, fixtures[protocol.Trim], "trimmed", stats, false},
		{"trim of dead jobs trimmed", protocol.Trim, func(q *queue) []string {
			q.install()
			q.must(protocol.Retain, "0", "0", "0", "1", "0")
			q.add(job{data: "a", attempts: "1"}, job{data: "b", attempts: "1"})
			for _, c := range q.claim(600000, 2) {
				q.must(protocol.Fail, c.id, c.token(), "0", "x")
			}
			return []string{"10"}
		}, "trimmed", stats, true},
		{"fail a child to dead stats dead", protocol.Fail, func(q *queue) []string {
			q.install()
			q.add(job{data: "p"}, job{data: "c", parent: "1", attempts: "1"})
			c := q.claimOne()
			return []string{c.id, c.token(), "0", "x"}
		}, "dead", stats, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for stored, want := range map[string]string{"abc": notInt, int64Max: overflow} {
				scenario(t, env, stored, func(t *testing.T, q *queue) {
					args := c.setup(q)
					q.do("HSET", c.key(q), c.field, stored)
					if c.refused {
						q.refuse(want, q.verb(c.verb, args...))
						return
					}
					q.must(c.verb, args...)
					require.Equal(t, Bulk(stored), q.r("HGET", c.key(q), c.field), "a counter the call does not increment")
				})
			}
		})
	}

	// ADD increments by n, and seq also bounds the ids
	t.Run("add by n", func(t *testing.T) {
		t.Parallel()
		two := addArgs(job{data: "a"}, job{data: "b"})
		scenario(t, env, "added overflows by 2", func(t *testing.T, q *queue) {
			fixtures[protocol.Add](q)
			q.do("HSET", q.k.Stats, "added", "9223372036854775806")
			q.refuse(overflow, q.verb(protocol.Add, two...))
		})
		scenario(t, env, "added reaches int64 max", func(t *testing.T, q *queue) {
			fixtures[protocol.Add](q)
			q.do("HSET", q.k.Stats, "added", "9223372036854775805")
			require.Equal(t, Bulks("2", "3"), q.call(protocol.Add, two...))
			require.Equal(t, Bulk(int64Max), q.r("HGET", q.k.Stats, "added"))
		})
		for stored, want := range map[string]string{
			"9223372036854775806": overflow, // HINCRBY's own refusal comes first
			"9223372036854775000": protocol.ErrAddIDSpace,
			"4398046511103":       protocol.ErrAddIDSpace, // the last id is taken
			"4398046511102":       protocol.ErrAddIDSpace, // one id left, two asked
			"-1":                  protocol.ErrAddIDSpace, // the first id would be 0
			"007":                 notInt,
		} {
			scenario(t, env, "seq "+stored, func(t *testing.T, q *queue) {
				fixtures[protocol.Add](q)
				q.do("HSET", q.k.Meta, "seq", stored)
				q.refuse(want, q.verb(protocol.Add, two...))
			})
		}
		scenario(t, env, "seq gives the last id", func(t *testing.T, q *queue) {
			fixtures[protocol.Add](q)
			q.do("HSET", q.k.Meta, "seq", "4398046511102")
			require.Equal(t, Bulks("4398046511103"), q.call(protocol.Add, addArgs(job{data: "a"})...))
			require.Equal(t, protocol.PendingScore(0, protocol.MaxJobID), q.score(q.k.Pending, "4398046511103"))
		})
		scenario(t, env, "seq behind an existing row", func(t *testing.T, q *queue) {
			fixtures[protocol.Add](q)
			q.do("HSET", q.k.Meta, "seq", "0")
			require.Equal(t, Err(protocol.ErrAddIDExists), q.call(protocol.Add, addArgs(job{data: "a"})...))
		})
	})
}

func quote(s string) string {
	if s == "" {
		return `""`
	}
	return abbrev(s)
}
