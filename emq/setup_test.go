package emq_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"trafikey/emq"
	"trafikey/internal/valkeyserver"
	"trafikey/internal/valkeytest"
	"trafikey/protocol"
)

// testBundle is what one test runs against: a fresh server, a client, the
// executor under test and a queue opened on it.
type testBundle struct {
	server *valkeyserver.Server
	client valkey.Client
	exec   emq.Executor
	q      *emq.Queue
}

// executor is one way to run the verbs: each test runs once per executor.
type executor struct {
	name  string
	start func(t *testing.T, o valkeyserver.Options) (*valkeyserver.Server, valkey.Client, emq.Executor)
}

// executors lists the executors the suite runs on: Lua always, native when
// the module builds and registers every job-core verb (it skips otherwise).
func executors() []executor {
	return []executor{
		{name: "lua", start: func(t *testing.T, o valkeyserver.Options) (*valkeyserver.Server, valkey.Client, emq.Executor) {
			s := valkeytest.Start(t, o)
			c := valkeytest.Client(t, s)
			return s, c, emq.NewLua(c)
		}},
		{name: "native", start: func(t *testing.T, o valkeyserver.Options) (*valkeyserver.Server, valkey.Client, emq.Executor) {
			o.Module = valkeytest.ModulePath(t)
			s := valkeytest.Start(t, o)
			c := valkeytest.Client(t, s)
			requireModuleVerbs(t, c)
			return s, c, emq.NewNative(c)
		}},
	}
}

// requireModuleVerbs skips the test unless the loaded module answers
// EMQ.VERSION and registers every job-core verb.
func requireModuleVerbs(t *testing.T, c valkey.Client) {
	t.Helper()
	ctx := t.Context()
	if !emq.Probe(ctx, c) {
		t.Skip("the trafikey module does not answer " + protocol.VersionCommand)
	}
	for _, v := range protocol.JobCore {
		info, err := c.Do(ctx, c.B().CommandInfo().CommandName(v.Command).Build()).ToArray()
		if err != nil || len(info) == 0 || info[0].IsNil() {
			t.Skipf("the trafikey module does not register %s yet", v.Command)
		}
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
			q, err := emq.Open(t.Context(), c, "test", emq.WithExecutor(exec))
			require.NoError(t, err)
			require.Equal(t, e.name, q.Executor())
			test(t, &testBundle{server: s, client: c, exec: exec, q: q})
		})
	}
}

// open opens another queue on the bundle's server and executor.
func (b *testBundle) open(t *testing.T, name string, opts ...emq.QueueOption) *emq.Queue {
	t.Helper()
	q, err := emq.Open(t.Context(), b.client, name, append([]emq.QueueOption{emq.WithExecutor(b.exec)}, opts...)...)
	require.NoError(t, err)
	return q
}

// do runs a raw command on the bundle's server.
func (b *testBundle) do(t *testing.T, args ...string) any {
	t.Helper()
	return valkeytest.Do(t, b.server, args...)
}

func stats(t *testing.T, q *emq.Queue) emq.Stats {
	t.Helper()
	s, err := q.Stats(t.Context())
	require.NoError(t, err)
	return s
}

// claimOne claims exactly one job.
func claimOne(t *testing.T, q *emq.Queue, lease time.Duration) *emq.Job {
	t.Helper()
	jobs, err := q.Claim(t.Context(), lease, 1)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	return jobs[0]
}

// expireLeases makes every lease of q expired now, as if its workers had
// stalled past their deadlines, so a test needs no sleeps to reach recovery.
func expireLeases(t *testing.T, b *testBundle, q *emq.Queue) {
	t.Helper()
	key := protocol.KeysOf(q.Name()).Active
	v := b.do(t, "ZRANGE", key, "0", "-1")
	for _, id := range v.([]any) {
		b.do(t, "ZADD", key, "XX", "1", id.(string))
	}
}

// runWorker runs w until the test ends (or stop is called) and returns
// stop, which cancels Run and returns its error.
func runWorker(t *testing.T, w *emq.Worker) (stop func() error) {
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

// blockedClients counts the server's clients blocked in BLPOP.
func blockedClients(t *testing.T, b *testBundle) int {
	t.Helper()
	list, _ := b.do(t, "CLIENT", "LIST").(string)
	n := 0
	for line := range strings.Lines(list) {
		if strings.Contains(line, " cmd=blpop ") && strings.Contains(line, " flags=b ") {
			n++
		}
	}
	return n
}

// eventually is a generous bound for something the worker does on its own.
const eventually = 10 * time.Second

const tick = 10 * time.Millisecond
