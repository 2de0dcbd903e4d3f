package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// run runs the CLI with args and returns its output.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}

func TestStatsAndInspect(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	q, err := trafikey.Open(t.Context(), c, "mail")
	require.NoError(t, err)
	id, err := q.Add(t.Context(), []byte("hello\x00world"), trafikey.Priority(5))
	require.NoError(t, err)
	_, err = q.Add(t.Context(), []byte("second"))
	require.NoError(t, err)

	out, err := run(t, "stats", "mail", "--addr", s.Addr())
	require.NoError(t, err)
	require.Regexp(t, `pending\s+2\n`, out)
	require.Regexp(t, `added\s+2\n`, out)

	out, err = run(t, "inspect", "mail", id, "--addr", s.Addr())
	require.NoError(t, err)
	require.Regexp(t, `state\s+pending\n`, out)
	require.Regexp(t, `priority\s+5\n`, out)
	require.Contains(t, out, `"hello\x00world"`)

	_, err = run(t, "inspect", "mail", "999", "--addr", s.Addr())
	require.ErrorContains(t, err, "has no job 999")
	_, err = run(t, "stats", "nosuchqueue", "--addr", s.Addr())
	require.ErrorIs(t, err, trafikey.ErrWire)
	require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", "emq:{nosuchqueue}:version"), "stats wrote nothing")
}

func TestDemoSmall(t *testing.T) {
	t.Parallel()
	out, err := run(t, "demo", "--jobs", "300", "--steady-jobs", "20", "--idle-probes", "3", "--progress=false", "--no-module")
	require.NoError(t, err)
	require.Contains(t, out, "lua executor")
	require.Contains(t, out, "completed 323")
}
