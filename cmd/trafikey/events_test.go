package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

func TestEvents(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "mail", nil)
	require.NoError(t, err)
	require.NoError(t, q.Admin().SetEvents(ctx, 1000))
	id, err := q.Add(ctx, []byte("hello"), nil)
	require.NoError(t, err)
	jobs, err := q.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.NoError(t, jobs[0].Progress(ctx, "half\nway"))

	out, _, code := run(t, "events", "mail", "--addr", s.Addr(), "--from", "0", "--count", "3")
	require.Equal(t, exitOK, code)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 3)
	require.Regexp(t, `^\d+-\d+  \d{4}-\d\d-\d\dT[0-9:.]+Z  added  `+id+`  state=pending$`, lines[0])
	require.Regexp(t, `  claimed  `+id+`  att=1$`, lines[1])
	require.Regexp(t, `  progress  `+id+`  value="half\\nway"$`, lines[2])

	out, _, code = run(t, "events", "mail", "--addr", s.Addr(), "--from", "0", "--count", "2", "--json")
	require.Equal(t, exitOK, code)
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2)
	first := decode[map[string]any](t, lines[0])
	require.Equal(t, "added", first["event"])
	require.Equal(t, id, first["job"])
	require.Equal(t, map[string]any{"state": "pending"}, first["fields"])

	// resume after the first entry: the rest, and no gap
	out, _, code = run(t, "events", "mail", "--addr", s.Addr(), "--from", first["id"].(string), "--count", "1", "--json")
	require.Equal(t, exitOK, code)
	require.Equal(t, "claimed", decode[map[string]any](t, out)["event"])

	// from now: waits for the next event; an interrupt ends it cleanly
	tail, cancel := context.WithCancel(ctx)
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	cmd := newRootCmd(noEnv)
	var buf strings.Builder
	cmd.SetOut(&buf)
	cmd.SetArgs([]string{"events", "mail", "--addr", s.Addr()})
	require.Equal(t, exitOK, exitCode(cmd.ExecuteContext(tail)))
	require.Empty(t, buf.String())

	// a call's events share an entry: each its own id, and a resume from
	// the first yields the second
	b, err := trafikey.Open(ctx, c, "batch", nil)
	require.NoError(t, err)
	require.NoError(t, b.Admin().SetEvents(ctx, 1000))
	ids, err := b.AddBatch(ctx, []trafikey.JobSpec{{Payload: []byte("a")}, {Payload: []byte("b")}})
	require.NoError(t, err)
	out, _, code = run(t, "events", "batch", "--addr", s.Addr(), "--from", "0", "--count", "2")
	require.Equal(t, exitOK, code)
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2)
	require.Regexp(t, `^\d+-\d+\.0  \S+  added  `+ids[0]+`  state=pending$`, lines[0])
	require.Regexp(t, `^\d+-\d+\.1  \S+  added  `+ids[1]+`  state=pending$`, lines[1])
	out, _, code = run(t, "events", "batch", "--addr", s.Addr(), "--from", strings.Fields(lines[0])[0], "--count", "1")
	require.Equal(t, exitOK, code)
	require.Equal(t, lines[1]+"\n", out)

	for _, bad := range []string{"x", "1-0.x", "1.2"} {
		_, _, code = run(t, "events", "mail", "--addr", s.Addr(), "--from", bad)
		require.Equal(t, exitUsage, code, bad)
	}
	_, _, code = run(t, "events", "nosuch", "--addr", s.Addr(), "--from", "0", "--count", "1")
	require.Equal(t, exitNotFound, code)
}
