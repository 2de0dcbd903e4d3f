package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// delete-queue asks for the queue's name on a terminal, refuses without
// one unless --yes, shows the counts first and deletes every key.
func TestDeleteQueue(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, s *valkeyserver.Server, c valkey.Client) {
		ctx := t.Context()
		fill := func(name string) *trafikey.Queue {
			q, err := trafikey.Open(ctx, c, name, nil)
			require.NoError(t, err)
			_, err = q.Add(ctx, []byte("a"), nil)
			require.NoError(t, err)
			_, err = q.Add(ctx, []byte("b"), &trafikey.JobOptions{Lane: "acme"})
			require.NoError(t, err)
			_, err = q.Add(ctx, []byte("c"), &trafikey.JobOptions{Delay: time.Hour})
			require.NoError(t, err)
			_, err = q.AddFlow(ctx, trafikey.JobSpec{Payload: []byte("p"), Children: []trafikey.JobSpec{{Payload: []byte("k")}}})
			require.NoError(t, err)
			_, err = q.Schedules().Set(ctx, trafikey.Schedule{ID: "tick", Every: time.Hour, Payload: []byte("t")})
			require.NoError(t, err)
			return q
		}
		fill("mail")
		keep := fill("keep")
		keepKeys := valkeytest.Snapshot(t, s, "emq:{keep}:*")

		// no terminal, no --yes: refused, nothing deleted
		_, errOut, code := run(t, "delete-queue", "mail", "--addr", s.Addr())
		require.Equal(t, exitUsage, code, errOut)
		require.Contains(t, errOut, "give --yes")
		require.Contains(t, errOut, "queue mail on "+s.Addr()+" holds 3 pending (1 in 1 lanes), 1 delayed, 0 active, 0 dead, 1 waiting parents, 0 retained completed, 1 schedules")
		require.Equal(t, int64(1), valkeytest.Do(t, s, "EXISTS", "emq:{mail}:version"))

		// a terminal, the wrong name typed: refused
		_, errOut, code = runOnTerminal(t, "keep\n", "delete-queue", "mail", "--addr", s.Addr())
		require.Equal(t, exitError, code, errOut)
		require.Contains(t, errOut, "type the queue's name to delete it: ")
		require.Contains(t, errOut, "queue mail not deleted: the name typed does not match")
		_, _, code = runOnTerminal(t, "", "delete-queue", "mail", "--addr", s.Addr())
		require.Equal(t, exitError, code, "nothing typed")
		require.Equal(t, int64(1), valkeytest.Do(t, s, "EXISTS", "emq:{mail}:version"))

		// the right name: deleted, the other queue untouched
		out, errOut, code := runOnTerminal(t, "mail\n", "delete-queue", "mail", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Regexp(t, `^deleted queue mail: \d+ keys\n$`, out)
		require.Empty(t, valkeytest.Snapshot(t, s, "emq:{mail}*"), "every key of the queue is gone")
		valkeytest.RequireUnchanged(t, keepKeys, valkeytest.Snapshot(t, s, "emq:{keep}:*"))
		_, _, code = run(t, "delete-queue", "mail", "--yes", "--addr", s.Addr())
		require.Equal(t, exitNotFound, code, "deleted already")

		// --yes in a script, with JSON
		out, errOut, code = run(t, "delete-queue", "keep", "--yes", "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		v := decode[deleteQueueJSON](t, out)
		require.Equal(t, "keep", v.Queue)
		require.Equal(t, 3, v.Before.Pending)
		require.Equal(t, 1, v.Before.Waiting)
		require.Equal(t, 1, *v.Schedules)
		require.Positive(t, v.DeletedKeys)
		require.Empty(t, valkeytest.Snapshot(t, s, "emq:{keep}*"))
		_, err := keep.Add(ctx, []byte("late"), nil)
		require.ErrorIs(t, err, trafikey.ErrWire, "a handle opened before is refused")

		// a queue of another wire version: no counts, deleted all the same
		fill("old")
		valkeytest.Do(t, s, "SET", "emq:{old}:version", "1")
		out, errOut, code = run(t, "delete-queue", "old", "--yes", "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Contains(t, errOut, "queue old on "+s.Addr()+" was written by another wire version: its counts cannot be read")
		v = decode[deleteQueueJSON](t, out)
		require.Nil(t, v.Before)
		require.Positive(t, v.DeletedKeys)
		require.Empty(t, valkeytest.Snapshot(t, s, "emq:{old}*"))
	})
}

// stats and queues show the waiting parents and the retained completed
// jobs.
func TestStatsShowWaitingAndRetained(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "flows", nil)
	require.NoError(t, err)
	require.NoError(t, q.Admin().SetRetention(ctx, trafikey.RetentionPolicy{KeepCompleted: time.Hour}))
	_, err = q.AddFlow(ctx, trafikey.JobSpec{Payload: []byte("p"), Children: []trafikey.JobSpec{{Payload: []byte("a")}, {Payload: []byte("b")}}})
	require.NoError(t, err)
	jobs, err := q.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.NoError(t, jobs[0].Complete(ctx))

	out, errOut, code := run(t, "stats", "flows", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, `(?m)^pending\s+1$`, out)
	require.Regexp(t, `(?m)^waiting parents\s+1$`, out)
	require.Regexp(t, `(?m)^retained completed\s+1$`, out)
	out, _, code = run(t, "stats", "flows", "--json", "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	st := decode[map[string]any](t, out)
	require.EqualValues(t, 1, st["waiting"])
	require.EqualValues(t, 1, st["retained"])

	out, errOut, code = run(t, "queues", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, `(?m)^queue\s+partitions\s+pending\s+delayed\s+active\s+dead\s+waiting\s+retained\s+lanes\s+paused\s*$`, out)
	require.Regexp(t, `(?m)^flows\s+-\s+1\s+0\s+0\s+0\s+1\s+1\s+0\s+no\s*$`, out)
	out, _, code = run(t, "queues", "--json", "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	rows := decode[[]map[string]any](t, out)
	require.Len(t, rows, 1)
	require.EqualValues(t, 1, rows[0]["waiting"])
	require.EqualValues(t, 1, rows[0]["retained"])
}
