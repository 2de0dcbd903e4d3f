package valkeytest

import (
	"context"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/protocol"
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
	// (2), a pending one (3) and a delayed one (4).
	build := func(t *testing.T, name string) protocol.Keys {
		k := protocol.KeysOf(name)
		run := func(v *protocol.Verb, args ...string) {
			t.Helper()
			if err := lua.Exec(context.Background(), v, v.KeyNames(k), args).Error(); err != nil {
				t.Fatalf("%s: %v", v.Command, err)
			}
		}
		run(protocol.Install)
		run(protocol.Add, append(append(append([]string{"3"}, job("a", "0")...), job("b", "0")...), job("c", "0")...)...)
		run(protocol.Claim, "60000", "1")
		run(protocol.Log, "1", "1", "line", "10")
		run(protocol.Fail, "1", "1", "0", "boom")
		run(protocol.Claim, "60000", "1")
		run(protocol.Complete, "2", "1")
		run(protocol.Add, append([]string{"1"}, job("d", "60000")...)...)
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
		{"a state of another set", func(k protocol.Keys) []string { return []string{"HSET", k.Job("3"), "state", "dead"} }, "job 3 is in pending but its state is dead"},
		{"a job in two sets", func(k protocol.Keys) []string { return []string{"ZADD", k.Dead, "1", "3"} }, "job 3 is in pending and dead"},
		{"logs without a row", func(k protocol.Keys) []string { return []string{"RPUSH", k.Logs("97"), "x"} }, "job 97 has logs without a row"},
		{"counters", func(k protocol.Keys) []string { return []string{"HINCRBY", k.Stats, "added", "1"} }, "counters: added 5"},
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
