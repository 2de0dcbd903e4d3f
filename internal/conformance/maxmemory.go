package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// serverOOM is the server's own refusal of a deny-oom command (or a script
// without allow-oom) at maxmemory, the same bytes on both executors.
const serverOOM = "OOM command not allowed when used memory > 'maxmemory'."

// RunMaxmemory checks every verb at maxmemory (noeviction): a verb whose
// mode grows the dataset is refused with the server's OOM text and writes
// nothing; every other verb runs as it would with memory to spare, so a
// full queue drains. It sets the server's maxmemory, so env's server must
// be the test's own; the verbs run one at a time.
func RunMaxmemory(t *testing.T, env Env) {
	for _, v := range protocol.All {
		t.Run(v.Name, func(t *testing.T) {
			q := newQueue(t, env)
			args := fixtures[v](q)
			q.do("CONFIG", "SET", "maxmemory", "1")
			defer q.do("CONFIG", "SET", "maxmemory", "0")
			if v.Mode == protocol.Grows {
				q.refuse(serverOOM, q.verb(v, args...))
				return
			}
			reply := q.exec(v, args...)
			require.NoError(t, reply.Error(), "%s runs at maxmemory", v.Command)
		})
	}
	// The worker's whole cycle at maxmemory: a job added before the server
	// filled up is claimed, completed, and its memory freed.
	t.Run("drain", func(t *testing.T) {
		q := newQueue(t, env)
		q.install()
		q.addOne("a")
		q.addOne("b")
		q.do("CONFIG", "SET", "maxmemory", "1")
		defer q.do("CONFIG", "SET", "maxmemory", "0")
		q.refuse(serverOOM, q.verb(protocol.Add, addArgs(job{data: "c"})...))
		for _, c := range q.claim(30000, 2) {
			require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		}
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Pending))
		require.Equal(t, Int(0), q.r("ZCARD", q.k.Active))
		require.Equal(t, Int(0), q.r("EXISTS", q.k.Job("1"), q.k.Job("2")))
	})
	// With job events on: the drain publishes its events (the stream is
	// bounded), and EVENTS runs.
	t.Run("drain with events", func(t *testing.T) {
		q := newQueue(t, env)
		q.install()
		q.must(protocol.Events, "100")
		q.addOne("a")
		q.do("CONFIG", "SET", "maxmemory", "1")
		defer q.do("CONFIG", "SET", "maxmemory", "0")
		c := q.claimOne()
		require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		require.Equal(t, []string{evt("added", "1", "state", "pending"), evt("claimed", "1", "att", "1"), evt("completed", "1")}, q.eventLog())
		require.Equal(t, Int(1), q.call(protocol.Events, "0"))
	})
	// The same with lanes: a lane's counts move at maxmemory, and a lane
	// paused before the server filled up can be resumed.
	t.Run("drain lanes", func(t *testing.T) {
		q := newQueue(t, env)
		q.install()
		q.add(job{data: "a", lane: "x"}, job{data: "b", lane: "y"}, job{data: "c", lane: "y"})
		q.must(protocol.LanePause, "y")
		q.do("CONFIG", "SET", "maxmemory", "1")
		defer q.do("CONFIG", "SET", "maxmemory", "0")
		q.refuse(serverOOM, q.verb(protocol.LaneCap, "x", "1"))
		require.Equal(t, Int(1), q.call(protocol.LaneResume, "y"))
		for _, c := range q.claim(30000, 3) {
			require.Equal(t, Int(1), q.call(protocol.Complete, c.id, c.token(), ""))
		}
		for _, s := range []string{protocol.SuffixLanes, protocol.SuffixTurns, protocol.SuffixLaneInfo} {
			require.Equal(t, Int(0), q.r("EXISTS", q.k.Fixed(s)), s)
		}
		require.Equal(t, Bulk("0"), q.r("HGET", q.k.Meta, protocol.MetaLaneWait))
	})
}
