package trafikey_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// testBundle is what one test runs against: a fresh server, a client, the
// executor under test and a queue opened on it.
type testBundle struct {
	server *valkeyserver.Server
	client valkey.Client
	exec   executor.Executor
	q      *trafikey.Queue
}

// executor is one way to run the verbs: each test runs once per executor.
type executorCase struct {
	name  string
	start func(t *testing.T, o valkeyserver.Options) (*valkeyserver.Server, valkey.Client, executor.Executor)
}

// executors lists the executors the suite runs on: Lua, and native, which
// fails unless the module builds and registers every job-core verb.
func executors() []executorCase {
	return []executorCase{
		{name: "lua", start: func(t *testing.T, o valkeyserver.Options) (*valkeyserver.Server, valkey.Client, executor.Executor) {
			s := valkeytest.Start(t, o)
			c := valkeytest.Client(t, s)
			return s, c, executor.NewLua(c)
		}},
		{name: "native", start: func(t *testing.T, o valkeyserver.Options) (*valkeyserver.Server, valkey.Client, executor.Executor) {
			o.Module = valkeytest.ModulePath(t)
			s := valkeytest.Start(t, o)
			c := valkeytest.Client(t, s)
			valkeytest.RequireVerbs(t, c)
			return s, c, executor.NewNative(c)
		}},
	}
}

// forEachExecutorOf runs test once per executor, in parallel subtests
// named for it, for the tests that start servers of their own.
func forEachExecutorOf(t *testing.T, test func(t *testing.T, exec trafikey.Executor)) {
	for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
		t.Run(string(exec), func(t *testing.T) {
			t.Parallel()
			test(t, exec)
		})
	}
}

// forEachExecutor runs test as a parallel subtest on every executor, each on
// its own server with queue "test" opened.
func forEachExecutor(t *testing.T, test func(t *testing.T, b *testBundle)) {
	t.Helper()
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			s, c, exec := e.start(t, valkeyserver.Options{})
			q, err := trafikey.Open(t.Context(), c, "test", trafikey.WithRunner(exec, nil))
			require.NoError(t, err)
			require.Equal(t, trafikey.Executor(e.name), q.Executor())
			test(t, &testBundle{server: s, client: c, exec: exec, q: q})
		})
	}
}

// open opens another queue on the bundle's server and executor.
// opts, when given, are the queue's options (only the first is read).
func (b *testBundle) open(t *testing.T, name string, opts ...trafikey.QueueOptions) *trafikey.Queue {
	t.Helper()
	var o trafikey.QueueOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	q, err := trafikey.Open(t.Context(), b.client, name, trafikey.WithRunner(b.exec, &o))
	require.NoError(t, err)
	return q
}

// do runs a raw command on the bundle's server.
func (b *testBundle) do(t *testing.T, args ...string) any {
	t.Helper()
	return valkeytest.Do(t, b.server, args...)
}

func stats(t *testing.T, q *trafikey.Queue) trafikey.Stats {
	t.Helper()
	s, err := q.Stats(t.Context())
	require.NoError(t, err)
	return s
}

// claimOne claims exactly one job.
func claimOne(t *testing.T, q *trafikey.Queue, lease time.Duration) *trafikey.Job {
	t.Helper()
	jobs, err := q.Claim(t.Context(), lease, 1)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	return jobs[0]
}

// expireLeases makes every lease of q expired now, as if its workers had
// stalled past their deadlines, so a test needs no sleeps to reach recovery.
func expireLeases(t *testing.T, b *testBundle, q *trafikey.Queue) {
	t.Helper()
	key := protocol.KeysOf(q.Name()).Active
	v := b.do(t, "ZRANGE", key, "0", "-1")
	for _, id := range v.([]any) {
		b.do(t, "ZADD", key, "XX", "1", id.(string))
	}
}

// runWorker runs w until the test ends (or stop is called) and returns
// stop, which cancels Run and returns its error.
func runWorker(t *testing.T, w *trafikey.Worker) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- w.Run(ctx) }()
	var err error
	stopped := false
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			err = <-errc
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// blockedClients counts the server's clients blocked waiting for a job: in
// BLPOP on a signal list, or, an idle worker on the native executor, in a
// CLAIM with a block time.
func blockedClients(t *testing.T, b *testBundle) int {
	t.Helper()
	return blockedIn(t, b, "blpop") + blockedIn(t, b, "emq.claim")
}

// blockedIn counts the server's clients blocked in command cmd (lower case).
func blockedIn(t *testing.T, b *testBundle, cmd string) int {
	t.Helper()
	list, _ := b.do(t, "CLIENT", "LIST").(string)
	return countBlocked(list, cmd)
}

// countBlocked counts the clients of a CLIENT LIST reply blocked in command
// cmd (lower case): flags b, beside P when the connection also carries a
// worker's cancel notices subscription.
func countBlocked(list, cmd string) int {
	n := 0
	for line := range strings.Lines(list) {
		_, rest, _ := strings.Cut(line, " flags=")
		flags, _, _ := strings.Cut(rest, " ")
		if strings.Contains(strings.ToLower(line), " cmd="+cmd+" ") && strings.Trim(flags, "P") == "b" {
			n++
		}
	}
	return n
}

// shardSubscribers is how many connections of s are subscribed to the
// sharded channel (PUBSUB SHARDNUMSUB); on a cluster, the node owning the
// channel's slot counts them.
func shardSubscribers(t *testing.T, s *valkeyserver.Server, channel string) int {
	t.Helper()
	reply, _ := valkeytest.Do(t, s, "PUBSUB", "SHARDNUMSUB", channel).([]any)
	require.Len(t, reply, 2, "PUBSUB SHARDNUMSUB %s", channel)
	n, ok := reply[1].(int64)
	require.True(t, ok, "PUBSUB SHARDNUMSUB %s: %v", channel, reply)
	return int(n)
}

// skipInShort skips t under -short: it stops, crashes or restarts servers,
// or runs for seconds (what says how), and the full run covers it.
func skipInShort(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s takes seconds; the full run (go test ., as scripts/test.sh runs it in CI) covers it", what)
	}
}

// eventually is a generous bound for something the worker does on its own.
const eventually = 10 * time.Second

const tick = 10 * time.Millisecond

// counters keeps only the counters of a worker's info.
func counters(i trafikey.WorkerInfo) trafikey.WorkerInfo {
	return trafikey.WorkerInfo{
		Processed: i.Processed, Failed: i.Failed, Retried: i.Retried, Dead: i.Dead,
		Lost: i.Lost, Abandoned: i.Abandoned, Cancelled: i.Cancelled,
	}
}

// requireCancelled waits for a handler's context cause on causes, which must
// come within eventually and be ErrCancelled; msg and args say whose.
func requireCancelled(t *testing.T, causes <-chan error, msg string, args ...any) {
	t.Helper()
	select {
	case cause := <-causes:
		require.ErrorIs(t, cause, trafikey.ErrCancelled)
	case <-time.After(eventually):
		t.Fatalf(msg, args...)
	}
}
