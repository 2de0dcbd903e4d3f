// Package conformance is the scenario suite every executor of the trafikey
// protocol passes: each verb's success paths (the job core, the lanes with
// fair claiming, the rate limit) and every refusal of docs/PROTOCOL.md, with
// replies stated exactly (see Render) and, for each refused call, proof that
// the queue's dataset is unchanged.
//
// Run takes the executor from its caller, so the same scenarios run on the
// Lua executor (the oracle, lua_test.go) and on the native module
// (native_test.go). A scenario's name starts with the verb's name, like the
// verb's section in docs/PROTOCOL.md, its script in lua/ and its handler in
// module/; the lane groups are named lanes/<topic>.
package conformance

import (
	"testing"

	"github.com/trafikey/trafikey/internal/executor"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// Env is what a scenario needs: a server and an executor on it.
type Env struct {
	// Server is the server under test; snapshots read it directly.
	Server *valkeyserver.Server
	// Client is connected to Server; scenarios plant and read keys with it.
	Client valkey.Client
	// Exec is the executor under test, on Client.
	Exec executor.Executor
	// NewExec makes the executor under test on another client (another
	// ACL user's).
	NewExec func(valkey.Client) executor.Executor
}

// shards is how many servers Run spreads the scenario groups over. A
// snapshot's SCAN visits every key of its server, however few match, and
// one server runs its commands on one core: on four servers a snapshot
// visits a quarter of the keys and the servers share the cores.
const shards = 4

// Run runs every scenario against the executor setup returns. setup is
// called once per shard; the groups are dealt round the shards, and every
// scenario runs in parallel on its own queue of its shard's server.
func Run(t *testing.T, setup func(t *testing.T) Env) {
	envs := make([]Env, shards)
	for i := range envs {
		envs[i] = setup(t)
	}
	groups := []struct {
		name string
		run  func(t *testing.T, env Env)
	}{
		{"shape", testShape},
		{"layout", testLayout},
		{"fence", testFence},
		{"values", testValues},
		{"wrongtype", testWrongType},
		{"integers", testIntegers},
		{"acl", testACL},
		{protocol.Install.Name, testInstall},
		{protocol.Add.Name, testAdd},
		{protocol.Claim.Name, testClaim},
		{protocol.Extend.Name, testExtend},
		{protocol.Complete.Name, testComplete},
		{protocol.CompleteMany.Name, testCompleteMany},
		{protocol.Fail.Name, testFail},
		{protocol.Recover.Name, testRecover},
		{protocol.Promote.Name, testPromote},
		{protocol.Pause.Name, testPause},
		{protocol.Resume.Name, testResume},
		{protocol.Remove.Name, testRemove},
		{protocol.Requeue.Name, testRequeue},
		{protocol.Log.Name, testLog},
		{protocol.Progress.Name, testProgress},
		{protocol.Stats.Name, testStats},
		{protocol.Inspect.Name, testInspect},
		{"signal", testSignal},
		{"binary", testBinary},
		{"unique", testUnique},
		{"lanes/add", testLaneAdd},
		{"lanes/claim", testLaneClaim},
		{"lanes/caps", testLaneCaps},
		{"lanes/pause", testLanePause},
		{protocol.LaneResume.Name, testLaneResume},
		{"lanes/read", testLaneRead},
		{"lanes/counts", testLaneCounts},
		{"lanes/refusals", testLaneRefusals},
		{"lanes/invariants", testLaneInvariants},
		{"lanes/sets", testLaneSets},
		{protocol.Rate.Name, testRate},
		{"flows/add", testFlowAdd},
		{"flows/release", testFlowRelease},
		{"flows/policies", testFlowPolicies},
		{"flows/results", testFlowResults},
		{"flows/wait", testFlowWait},
		{"flows/retention", testFlowRetention},
		{"flows/trim", testFlowTrim},
		{"flows/remove", testFlowRemove},
		{"flows/requeue", testFlowRequeue},
		{"flows/refusals", testFlowRefusals},
		{protocol.Children.Name, testChildren},
		{"flows/invariants", testFlowInvariants},
		{protocol.Append.Name, testAppend},
		{protocol.Publish.Name, testPublish},
		{protocol.FailuresIncr.Name, testFailuresIncr},
		{protocol.Events.Name, testEvents},
		{"events/invariants", testEventInvariants},
		{"events/kinds", testEventKinds},
		{protocol.Jobs.Name, testJobs},
		{protocol.RequeueDead.Name, testRequeueDead},
		{protocol.RemoveDead.Name, testRemoveDead},
		{protocol.PromoteAll.Name, testPromoteAll},
		{protocol.Retry.Name, testRetry},
		{"ops/refusals", testOpsRefusals},
		{"ops/invariants", testOpsInvariants},
		{"options", testJobOptions},
		{protocol.Reschedule.Name, testReschedule},
		{protocol.Cancel.Name, testCancel},
		{protocol.ScheduleSet.Name, testScheduleSet},
		{"schedules/ids", testScheduleIDs},
		{protocol.SchedulePause.Name, testSchedulePause},
		{protocol.ScheduleResume.Name, testScheduleResume},
		{protocol.ScheduleRemove.Name, testScheduleRemove},
		{protocol.ScheduleList.Name, testScheduleList},
		{protocol.ScheduleDue.Name, testScheduleDue},
		{protocol.ScheduleFire.Name, testScheduleFire},
		{"rowopts", testRowOpts},
		{"leanrow", testLeanRow},
		{"claim/block", testClaimBlock},
	}
	for i, g := range groups {
		env := envs[i%shards]
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, env)
		})
	}
}

// scenario runs f as a parallel subtest with a fresh queue; f's t is the
// subtest's.
func scenario(t *testing.T, env Env, name string, f func(t *testing.T, q *queue)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		f(t, newQueue(t, env))
	})
}

// fixtures prepare a queue so that the verb, called with the ARGV returned,
// would pass every check and write (or, for STATS and INSPECT, read a row).
// Refusal scenarios start from a fixture and break one thing, so a refused
// call that wrote anyway would show in the snapshot.
var fixtures = map[*protocol.Verb]func(q *queue) []string{
	protocol.Install: func(q *queue) []string { return nil },
	protocol.Add: func(q *queue) []string {
		q.install()
		q.addOne("first")
		return addArgs(job{data: "a"})
	},
	protocol.Claim: func(q *queue) []string {
		q.install()
		q.addOne("a")
		return []string{"30000", "1"}
	},
	protocol.Extend: func(q *queue) []string {
		c := q.active(job{data: "a"})
		return []string{c.id, c.token(), "30000"}
	},
	protocol.Complete: func(q *queue) []string {
		c := q.active(job{data: "a"})
		return []string{c.id, c.token(), "r"}
	},
	protocol.CompleteMany: func(q *queue) []string {
		c := q.active(job{data: "a"})
		return []string{"1", c.id, c.token(), "r"}
	},
	protocol.Fail: func(q *queue) []string {
		c := q.active(job{data: "a"})
		return []string{c.id, c.token(), "1", "boom"}
	},
	protocol.Recover: func(q *queue) []string {
		q.install()
		q.addOne("a")
		q.expired()
		return []string{"10"}
	},
	protocol.Promote: func(q *queue) []string {
		q.install()
		q.add(job{data: "a", delay: "1"})
		pause(leaseWait)
		return []string{"10"}
	},
	protocol.Pause: func(q *queue) []string {
		q.install()
		return nil
	},
	protocol.Resume: func(q *queue) []string {
		q.install()
		q.addOne("a")
		q.must(protocol.Pause)
		q.do("DEL", q.k.Signal)
		return nil
	},
	protocol.Remove: func(q *queue) []string {
		q.install()
		return []string{q.addOne("a"), "0"}
	},
	protocol.Requeue: func(q *queue) []string {
		return []string{q.dead(job{data: "a"})}
	},
	protocol.Log: func(q *queue) []string {
		c := q.active(job{data: "a"})
		return []string{c.id, c.token(), "line", "10"}
	},
	protocol.Progress: func(q *queue) []string {
		c := q.active(job{data: "a"})
		return []string{c.id, c.token(), "50"}
	},
	protocol.Stats: func(q *queue) []string {
		q.install()
		q.addOne("a")
		return nil
	},
	protocol.Inspect: func(q *queue) []string {
		q.install()
		return []string{q.addOne("a")}
	},
	protocol.LaneCap: func(q *queue) []string {
		q.install()
		q.add(job{data: "a", lane: fixtureLane})
		return []string{fixtureLane, "2"}
	},
	protocol.LanePause: func(q *queue) []string {
		q.install()
		q.add(job{data: "a", lane: fixtureLane})
		return []string{fixtureLane}
	},
	protocol.LaneResume: func(q *queue) []string {
		q.install()
		q.add(job{data: "a", lane: fixtureLane})
		q.must(protocol.LanePause, fixtureLane)
		q.do("DEL", q.k.Signal)
		return []string{fixtureLane}
	},
	protocol.Lane: func(q *queue) []string {
		q.install()
		q.add(job{data: "a", lane: fixtureLane})
		return []string{fixtureLane}
	},
	protocol.Lanes: func(q *queue) []string {
		q.install()
		q.add(job{data: "a", lane: fixtureLane})
		return []string{"", "10"}
	},
	protocol.Rate: func(q *queue) []string {
		q.install()
		return []string{"10", "1000"}
	},
	protocol.Retain: func(q *queue) []string {
		q.install()
		return []string{"60000", "10", "60000", "10", "1000"}
	},
	protocol.Trim: func(q *queue) []string {
		q.install()
		q.must(protocol.Retain, "0", "1", "0", "10", "0")
		q.add(job{data: "a"}, job{data: "b"})
		for _, c := range q.claim(600000, 2) {
			q.must(protocol.Complete, c.id, c.token(), "r")
		}
		return []string{"10"}
	},
	protocol.Events: func(q *queue) []string {
		q.install()
		return []string{"100"}
	},
	protocol.Children: func(q *queue) []string {
		q.install()
		q.add(job{data: "p"}, job{data: "c", parent: "1"})
		return []string{"1", "0", "10"}
	},
	protocol.Jobs: func(q *queue) []string {
		q.dead(job{data: "a"})
		return []string{protocol.StateDead, "", "0", "", "", "10", "64"}
	},
	protocol.RequeueDead: func(q *queue) []string {
		q.dead(job{data: "a"})
		return deadFilter("10", "", "")
	},
	protocol.RemoveDead: func(q *queue) []string {
		q.dead(job{data: "a"})
		return deadFilter("10", "", "")
	},
	protocol.PromoteAll: func(q *queue) []string {
		q.install()
		q.add(job{data: "a", delay: "600000"})
		return []string{"10"}
	},
	protocol.Retry: func(q *queue) []string {
		q.install()
		return []string{q.add(job{data: "a", delay: "600000"})[0]}
	},
	protocol.Reschedule: func(q *queue) []string {
		q.install()
		return []string{q.addOne("a"), "0", "60000"}
	},
	protocol.Cancel: func(q *queue) []string {
		q.install()
		return []string{q.addOne("a")}
	},
}

// fixtureLane is the lane of the lane verbs' fixtures.
const fixtureLane = "l"
