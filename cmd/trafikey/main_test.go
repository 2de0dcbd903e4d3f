package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// noEnv is an environment without any variable.
func noEnv(string) (string, bool) { return "", false }

// run runs the CLI with args and an empty environment, and returns its
// standard output, its standard error and its exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runWith(t, noEnv, "", args...)
}

// runWith runs the CLI with args, the environment env and the standard
// input stdin.
func runWith(t *testing.T, env func(string) (string, bool), stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := newRootCmd(env)
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	return out.String(), errOut.String(), exitCode(err)
}

// runOnTerminal runs the CLI as run does, with stdin taken for a terminal
// a person types on.
func runOnTerminal(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	a := &app{lookupEnv: noEnv, terminal: func(io.Reader) bool { return true }}
	cmd := a.rootCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	return out.String(), errOut.String(), exitCode(err)
}

// forEachExecutor runs test as a parallel subtest on a server of each
// executor the commands pick: a plain server (the Lua scripts) and one with
// the trafikey module loaded (its verbs), which fails unless the module
// builds and registers every verb.
func forEachExecutor(t *testing.T, test func(t *testing.T, s *valkeyserver.Server, c valkey.Client)) {
	t.Helper()
	t.Parallel()
	for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
		t.Run(string(exec), func(t *testing.T) {
			t.Parallel()
			var o valkeyserver.Options
			if exec == trafikey.ExecutorNative {
				o.Module = valkeytest.ModulePath(t)
			}
			s := valkeytest.Start(t, o)
			c := valkeytest.Client(t, s)
			if exec == trafikey.ExecutorNative {
				valkeytest.RequireVerbs(t, c)
			}
			// the commands open queues with the executor's default choice
			probe, err := trafikey.Open(t.Context(), c, "probe", nil)
			require.NoError(t, err)
			require.Equal(t, exec, probe.Executor())
			_, err = probe.Admin().DeleteQueue(t.Context())
			require.NoError(t, err)
			test(t, s, c)
		})
	}
}

// envOf is an environment of the given variables.
func envOf(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(s), &v), "JSON output:\n%s", s)
	return v
}

func TestStatsAndInspect(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	q, err := trafikey.Open(t.Context(), c, "mail", nil)
	require.NoError(t, err)
	id, err := q.Add(t.Context(), []byte("hello\x00world"), &trafikey.JobOptions{Priority: 5})
	require.NoError(t, err)
	_, err = q.Add(t.Context(), []byte(`{"to":"ada"}`), &trafikey.JobOptions{Lane: "tenant-1"})
	require.NoError(t, err)

	out, _, code := run(t, "stats", "mail", "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	require.Regexp(t, `pending\s+2\n`, out)
	require.Regexp(t, `in lanes\s+1\n`, out)
	require.Regexp(t, `added\s+2\n`, out)
	require.Contains(t, out, "tenant-1")

	out, _, code = run(t, "stats", "mail", "--addr", s.Addr(), "--json")
	require.Equal(t, exitOK, code)
	st := decode[map[string]any](t, out)
	require.EqualValues(t, 2, st["pending"])
	require.EqualValues(t, 1, st["lanes"])
	require.EqualValues(t, 2, st["totals"].(map[string]any)["added"])
	require.Equal(t, "tenant-1", st["lane_list"].([]any)[0].(map[string]any)["name"])

	out, _, code = run(t, "inspect", "mail", id, "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	require.Regexp(t, `state\s+pending\n`, out)
	require.Regexp(t, `priority\s+5\n`, out)
	require.Contains(t, out, `"hello\x00world"`)

	out, _, code = run(t, "inspect", "mail", id, "--addr", s.Addr(), "--json")
	require.Equal(t, exitOK, code)
	job := decode[map[string]any](t, out)
	require.Equal(t, "pending", job["state"])
	require.Equal(t, "aGVsbG8Ad29ybGQ=", job["payload"], "payload in base64")
	require.Equal(t, "binary", job["payload_format"])
	require.Contains(t, job["payload_text"], "|hello.world|")

	_, errOut, code := run(t, "inspect", "mail", "999", "--addr", s.Addr())
	require.Equal(t, exitNotFound, code)
	require.Contains(t, errOut, "has no job 999")
	_, errOut, code = run(t, "stats", "nosuchqueue", "--addr", s.Addr())
	require.Equal(t, exitNotFound, code)
	require.Contains(t, errOut, `queue "nosuchqueue" not found`)
	require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", "emq:{nosuchqueue}:version"), "stats wrote nothing")

	out, _, code = run(t, "lanes", "mail", "--addr", s.Addr(), "--json")
	require.Equal(t, exitOK, code)
	require.JSONEq(t, `[{"name":"tenant-1","waiting":1,"active":0,"cap":0,"paused":false}]`, out)
}

func TestExitCodesOfUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"stats"},                        // a missing argument
		{"stats", "a", "b"},              // one too many
		{"stats", "a", "--no-such-flag"}, // an unknown flag
		{"no-such-command"},
		{"stats", "a{b}", "--addr", "127.0.0.1:1"}, // not a queue name
	} {
		_, _, code := run(t, args...)
		require.Equal(t, exitUsage, code, "%q", args)
	}
	_, _, code := runWith(t, envOf(map[string]string{"TRAFIKEY_TIMEOUT": "soon"}), "", "stats", "a")
	require.Equal(t, exitUsage, code, "a bad environment variable")
	// Nothing listens on port 1.
	_, errOut, code := run(t, "stats", "a", "--addr", "127.0.0.1:1")
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "connect to 127.0.0.1:1")
}

func TestDemoSmall(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "demo", "--jobs", "300", "--steady-jobs", "20", "--idle-probes", "3", "--progress=false", "--no-module")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, errOut, "lua executor")
	require.Contains(t, out, "completed 323")
}

// demo --addr runs on a queue of its own on the server given and deletes
// it at the end; a queue named with --queue stays.
func TestDemoOnServerDeletesItsQueue(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	out, errOut, code := run(t, "demo", "--addr", s.Addr(), "--jobs", "50", "--steady-jobs", "5", "--idle-probes", "1", "--progress=false")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "completed 56")
	require.Regexp(t, `demo: deleted queue demo-\d+ \(\d+ keys\)`, errOut)
	require.Empty(t, valkeytest.Snapshot(t, s, "*"), "the server holds nothing")

	_, errOut, code = run(t, "demo", "--addr", s.Addr(), "--queue", "bench", "--jobs", "10", "--steady-rate", "0", "--idle-probes", "0", "--progress=false")
	require.Equal(t, exitOK, code, errOut)
	require.NotContains(t, errOut, "deleted queue")
	require.Equal(t, int64(1), valkeytest.Do(t, s, "EXISTS", "emq:{bench}:version"))
}

// inspect shows a flow: a parent's children with their results, a child's
// parent, a retained job's result.
func TestInspectFlow(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	q, err := trafikey.Open(t.Context(), c, "flows", nil)
	require.NoError(t, err)
	require.NoError(t, q.Admin().SetRetention(t.Context(), trafikey.RetentionPolicy{KeepCompleted: time.Hour}))
	ids, err := q.AddFlow(t.Context(), trafikey.JobSpec{Payload: []byte("report"), Children: []trafikey.JobSpec{{Payload: []byte("a")}, {Payload: []byte("b")}}})
	require.NoError(t, err)
	jobs, err := q.Claim(t.Context(), time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	jobs[0].SetResult([]byte("42"))
	require.NoError(t, jobs[0].Complete(t.Context()))

	out, _, code := run(t, "inspect", "flows", ids.ID, "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	require.Regexp(t, `state\s+waiting\n`, out)
	require.Regexp(t, `waiting for\s+1 children\n`, out)
	require.Contains(t, out, "children (2):")
	require.Regexp(t, jobs[0].ID+`\s+completed\s+result 42`, out)

	out, _, code = run(t, "inspect", "flows", jobs[0].ID, "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	require.Regexp(t, `parent\s+`+ids.ID+`\n`, out)
	require.Regexp(t, `result\s+2 bytes: 42\n`, out)

	out, _, code = run(t, "inspect", "flows", ids.ID, "--addr", s.Addr(), "--json")
	require.Equal(t, exitOK, code)
	job := decode[map[string]any](t, out)
	require.EqualValues(t, 1, job["waiting_children"])
	require.Len(t, job["children"], 2)
}

// inspect shows a job's kind, timeout and headers, and a cancelled job.
func TestInspectJobOptions(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	q, err := trafikey.Open(t.Context(), c, "mail", nil)
	require.NoError(t, err)
	id, err := q.Add(t.Context(), []byte("x"), &trafikey.JobOptions{Kind: "welcome", Timeout: 90 * time.Second, Headers: map[string]string{"traceparent": "00-1-2-01"}})
	require.NoError(t, err)
	require.NoError(t, q.Cancel(t.Context(), id))

	out, _, code := run(t, "inspect", "mail", id, "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	require.Regexp(t, `state\s+dead \(cancelled\)\n`, out)
	require.Regexp(t, `kind\s+welcome\n`, out)
	require.Regexp(t, `timeout\s+1m30s per attempt\n`, out)
	require.Regexp(t, `header\s+traceparent: 00-1-2-01\n`, out)
	out, _, code = run(t, "stats", "mail", "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	require.Regexp(t, `cancelled\s+1\n`, out)

	out, _, code = run(t, "inspect", "mail", id, "--addr", s.Addr(), "--json")
	require.Equal(t, exitOK, code)
	job := decode[map[string]any](t, out)
	require.Equal(t, "welcome", job["kind"])
	require.EqualValues(t, 90000, job["timeout_ms"])
	require.Equal(t, true, job["cancelled"])
	require.Equal(t, map[string]any{"traceparent": "00-1-2-01"}, job["headers"])

	out, _, code = run(t, "stats", "mail", "--addr", s.Addr(), "--json")
	require.Equal(t, exitOK, code)
	require.EqualValues(t, 1, decode[map[string]any](t, out)["totals"].(map[string]any)["cancelled"])
}
