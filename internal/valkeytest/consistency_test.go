package valkeytest

import (
	"context"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// TestQueueProblems builds queues through the verbs, finds them consistent,
// then breaks one invariant in each and finds it.
func TestQueueProblems(t *testing.T) {
	t.Parallel()
	s := Start(t, valkeyserver.Options{})
	c := Client(t, s)
	lua := executor.NewLua(c)
	job := func(data, delay string) []string { return []string{data, "0", delay, "3", "fixed", "0", "", "0"} }
	// build makes queue name hold a dead job with logs (1), a completed one
	// (2), a pending one (3, then claimed), a delayed one (4), and jobs in
	// lanes: 5 (claimed) and 6 in lane t, 7 in lane u, capped at 1; and a
	// parent 8 waiting for its delayed children 9 and 10.
	build := func(t *testing.T, name string) protocol.Keys {
		k := protocol.KeysOf(name)
		run := func(v *protocol.Verb, args ...string) {
			t.Helper()
			if err := lua.Exec(context.Background(), v, v.KeyNames(k), args).Error(); err != nil {
				t.Fatalf("%s: %v", v.Command, err)
			}
		}
		run(protocol.Install)
		run(protocol.Add, append(append(append([]string{"3", "0"}, job("a", "0")...), job("b", "0")...), job("c", "0")...)...)
		run(protocol.Claim, "60000", "1")
		run(protocol.Log, "1", "1", "line", "10")
		run(protocol.Fail, "1", "1", "0", "boom")
		run(protocol.Claim, "60000", "1")
		run(protocol.Complete, "2", "1", "")
		run(protocol.Add, append([]string{"1", "0"}, job("d", "60000")...)...)
		// lane t: job 5 waiting, job 6 claimed; lane u: job 7 waiting, capped at 1
		run(protocol.LaneCap, "u", "1")
		run(protocol.Add, append(append(append([]string{"3", "1", "lane"}, job("e", "0")...), "t"), append(append(job("f", "0"), "t"), append(job("g", "0"), "u")...)...)...)
		run(protocol.Claim, "60000", "1") // job 3, the jobs without a lane come first
		run(protocol.Claim, "60000", "1") // job 5 of lane t
		// a flow: parent 8 waits for its delayed children 9 and 10
		run(protocol.Add, append(append(append([]string{"3", "1", "parent"}, job("p", "0")...), ""),
			append(append(job("c1", "60000"), "1"), append(job("c2", "60000"), "1")...)...)...)
		return k
	}
	build(t, "q")
	RequireConsistentQueue(t, s, "q")

	for i, tc := range []struct {
		name  string
		plant func(k protocol.Keys) []string
		want  string
	}{
		{"a member without a row", func(k protocol.Keys) []string { return []string{"ZADD", k.Pending, "1", "99"} }, "job 99 is in pending without a row"},
		{"a row in no set", func(k protocol.Keys) []string { return []string{"HSET", k.Job("98"), "state", "pending"} }, "job 98 (state pending) is in no set"},
		{"a state of another set", func(k protocol.Keys) []string { return []string{"HSET", k.Job("7"), "state", "dead"} }, "job 7 is in pending but its state is dead"},
		{"a job in two sets", func(k protocol.Keys) []string { return []string{"ZADD", k.Dead, "1", "7"} }, `job 7 is in lane "u" and dead`},
		{"logs without a row", func(k protocol.Keys) []string { return []string{"RPUSH", k.Logs("97"), "x"} }, "job 97 has logs without a row"},
		{"counters", func(k protocol.Keys) []string { return []string{"HINCRBY", k.Stats, "added", "1"} }, "counters: added 11"},
		{"a parent's deps", func(k protocol.Keys) []string { return []string{"HSET", k.Job("8"), protocol.FieldDeps, "5"} },
			`parent 8 has deps "5", 2 children are not finished`},
		{"a child without its parent", func(k protocol.Keys) []string { return []string{"DEL", k.Job("8")} },
			"job 9 (state delayed) has parent 8 without a row"},
		{"a parent in no set", func(k protocol.Keys) []string { return []string{"ZREM", k.Fixed(protocol.SuffixWaiting), "8"} },
			"job 8 (state waiting) is in no set"},
		{"a lane's active count", func(k protocol.Keys) []string {
			return []string{"HSET", k.Fixed(protocol.SuffixLaneInfo), protocol.FieldLaneActive + "t", "2"}
		}, `lane "t" counts 2 active, 1 are`},
		{"a lane not ready in turns", func(k protocol.Keys) []string {
			return []string{"HSET", k.Fixed(protocol.SuffixLaneInfo), protocol.FieldLanePaused + "u", "1"}
		}, `lane "u" (waiting 1, active 0, cap 1) ready false but in turns true`},
		{"a lane's job in pending", func(k protocol.Keys) []string { return []string{"ZADD", k.Pending, "1", "7"} }, `job 7 is in lane "u" and pending`},
		{"lanewait", func(k protocol.Keys) []string { return []string{"HSET", k.Meta, protocol.MetaLaneWait, "5"} }, "meta lanewait 5, 2 jobs wait in lanes"},
		{"rowopts 0 with a lane", func(k protocol.Keys) []string {
			return []string{"HSET", k.Meta, protocol.MetaRowOpts, protocol.RowOptsOff}
		},
			`meta rowopts "0", but job 7 holds lane`},
		{"no rowopts with a lane", func(k protocol.Keys) []string { return []string{"HDEL", k.Meta, protocol.MetaRowOpts} },
			`meta rowopts absent, but job 7 holds lane`},
		{"rowopts 2 with a parent", func(k protocol.Keys) []string {
			return []string{"HSET", k.Meta, protocol.MetaRowOpts, protocol.RowOptsEvents}
		},
			`meta rowopts "2", but job 9 holds parent`},
		{"lanesets", func(k protocol.Keys) []string {
			return []string{"HSET", k.Fixed(protocol.SuffixLaneInfo), protocol.FieldLaneCap + "t", "9"}
		}, `meta lanesets "1", 2 lanes have a cap or a pause`},
		{"no lanesets", func(k protocol.Keys) []string { return []string{"HDEL", k.Meta, protocol.MetaLaneSets} },
			`meta lanesets "0", 1 lanes have a cap or a pause`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "broken" + string(rune('a'+i))
			Do(t, s, tc.plant(build(t, name))...)
			problems, err := QueueProblems(context.Background(), s, name)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Fatalf("found %q, want %q", problems, tc.want)
			}
		})
	}
}

// TestQueueProblemsRowFlag: a queue of plain jobs (meta rowopts 0) and one
// with events on (2) are consistent; a row field either flag says no row
// holds is found.
func TestQueueProblemsRowFlag(t *testing.T) {
	t.Parallel()
	s := Start(t, valkeyserver.Options{})
	lua := executor.NewLua(Client(t, s))
	job := []string{"a", "0", "0", "3", "fixed", "0", "", "0"}
	for _, tc := range []struct {
		name, flag string
		events     bool
		field      string
	}{
		{"plain", protocol.RowOptsOff, false, protocol.FieldEvents},
		{"events", protocol.RowOptsEvents, true, protocol.FieldKeep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := protocol.KeysOf(tc.name)
			run := func(v *protocol.Verb, args ...string) {
				t.Helper()
				if err := lua.Exec(context.Background(), v, v.KeyNames(k), args).Error(); err != nil {
					t.Fatalf("%s: %v", v.Command, err)
				}
			}
			run(protocol.Install)
			if tc.events {
				run(protocol.Events, "100")
			}
			run(protocol.Add, append([]string{"2", "0"}, append(job, job...)...)...)
			if got := Do(t, s, "HGET", k.Meta, protocol.MetaRowOpts); got != tc.flag {
				t.Fatalf("meta rowopts %v, want %s", got, tc.flag)
			}
			RequireConsistentQueue(t, s, tc.name)
			Do(t, s, "HSET", k.Job("2"), tc.field, "1")
			problems, err := QueueProblems(context.Background(), s, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			want := `meta rowopts "` + tc.flag + `", but job 2 holds ` + tc.field
			if strings.Join(problems, "\n") != want {
				t.Fatalf("found %q, want %q", problems, want)
			}
		})
	}
}
