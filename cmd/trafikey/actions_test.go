package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// deadJob adds a job with one attempt to q and fails it, so it is dead.
func deadJob(t *testing.T, q *trafikey.Queue, payload string) string {
	t.Helper()
	ctx := t.Context()
	id, err := q.Add(ctx, []byte(payload), &trafikey.JobOptions{MaxAttempts: 1})
	require.NoError(t, err)
	for {
		jobs, err := q.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		if jobs[0].ID != id {
			require.NoError(t, jobs[0].Complete(ctx))
			continue
		}
		retrying, err := jobs[0].Fail(ctx, errors.New("smtp: 550 no such user"), true)
		require.NoError(t, err)
		require.False(t, retrying)
		return id
	}
}

func TestPauseResumePromote(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	mail, err := trafikey.Open(ctx, c, "mail", nil)
	require.NoError(t, err)
	_, err = trafikey.Open(ctx, c, "sms", nil)
	require.NoError(t, err)

	out, _, code := run(t, "pause", "mail", "sms", "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	require.Equal(t, "paused mail\npaused sms\n", out)
	st, err := mail.Stats(ctx)
	require.NoError(t, err)
	require.True(t, st.Paused)

	// One queue found, one not: the code of the failure.
	out, errOut, code := run(t, "resume", "mail", "nosuch", "--addr", s.Addr())
	require.Equal(t, exitNotFound, code)
	require.Equal(t, "resumed mail\n", out)
	require.Contains(t, errOut, `resume nosuch: queue "nosuch" not found`)
	require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", "emq:{nosuch}:version"), "resume wrote nothing to a queue that is not there")
	st, err = mail.Stats(ctx)
	require.NoError(t, err)
	require.False(t, st.Paused)

	// Three jobs due almost at once, one much later.
	for _, d := range []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond, time.Hour} {
		_, err := mail.Add(ctx, []byte("later"), &trafikey.JobOptions{Delay: d})
		require.NoError(t, err)
	}
	time.Sleep(20 * time.Millisecond)
	out, _, code = run(t, "promote", "mail", "--addr", s.Addr(), "--json")
	require.Equal(t, exitOK, code)
	require.JSONEq(t, `{"queue":"mail","promoted":3}`, out)
	st, err = mail.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, st.Pending)
	require.Equal(t, 1, st.Delayed)
}

func TestRequeueAndRemove(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "mail", nil)
	require.NoError(t, err)
	dead1 := deadJob(t, q, "a")
	dead2 := deadJob(t, q, "b")
	pending, err := q.Add(ctx, []byte("c"), nil)
	require.NoError(t, err)

	// A pending job is not dead: refused, and the others go on.
	out, errOut, code := run(t, "requeue", "mail", dead1, pending, "--addr", s.Addr())
	require.Equal(t, exitRefused, code, errOut)
	require.Equal(t, "requeued 1 of 2 jobs of mail\n", out)
	require.Contains(t, errOut, "requeue "+pending+":")
	info, err := q.Inspect(ctx, dead1)
	require.NoError(t, err)
	require.Equal(t, trafikey.StatePending, info.State)

	// Ids from standard input, with --json.
	out, _, code = runWith(t, noEnv, dead2+"\n\n999\n", "requeue", "mail", "-", "--addr", s.Addr(), "--json", "--progress", "always")
	require.Equal(t, exitNotFound, code)
	res := decode[[]jobResult](t, out)
	require.Len(t, res, 2)
	require.Equal(t, jobResult{ID: dead2, OK: true}, res[0])
	require.Equal(t, "999", res[1].ID)
	require.False(t, res[1].OK)
	require.Contains(t, res[1].Error, "not found")

	// Remove: a claimed job is refused, a pending one goes.
	jobs, err := q.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	out, errOut, code = run(t, "remove", "mail", jobs[0].ID, "--addr", s.Addr())
	require.Equal(t, exitRefused, code)
	require.Equal(t, "removed 0 of 1 jobs of mail\n", out)
	require.Contains(t, errOut, "remove "+jobs[0].ID+":")
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	rest := []string{}
	for _, id := range []string{dead1, dead2, pending} {
		if id != jobs[0].ID {
			rest = append(rest, id)
		}
	}
	out, _, code = run(t, append([]string{"remove", "mail", "--addr", s.Addr()}, rest...)...)
	require.Equal(t, exitOK, code)
	require.Equal(t, "removed 2 of 2 jobs of mail\n", out)
	after, err := q.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, st.Pending-2, after.Pending)
	require.Equal(t, 1, after.Active)

	// Mixed failures: not found and refused give 1.
	_, _, code = run(t, "remove", "mail", jobs[0].ID, "999", "--addr", s.Addr())
	require.Equal(t, exitError, code)
	_, _, code = run(t, "requeue", "mail", "--addr", s.Addr())
	require.Equal(t, exitUsage, code, "no id")
}

func TestQueuesOnANode(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	for _, name := range []string{"sms", "mail", "a:b c", "push"} {
		q, err := trafikey.Open(ctx, c, name, nil)
		require.NoError(t, err)
		_, err = q.Add(ctx, []byte("x"), &trafikey.JobOptions{Lane: "l}:version"})
		require.NoError(t, err)
	}
	// Keys that look like a version key but are no queue's.
	valkeytest.Do(t, s, "SET", "emq:{x}:lane:{y}:version", "1")
	valkeytest.Do(t, s, "HSET", "emq:{h}:version", "f", "v")

	out, _, code := run(t, "queues", "--addr", s.Addr(), "--names")
	require.Equal(t, exitOK, code)
	require.Equal(t, "a:b c\nmail\npush\nsms\n", out)

	out, _, code = run(t, "queues", "--addr", s.Addr(), "--json")
	require.Equal(t, exitOK, code)
	rows := decode[[]queueRow](t, out)
	require.Len(t, rows, 4)
	require.Equal(t, "a:b c", rows[0].Name)
	require.Equal(t, 1, rows[0].Pending)
	require.Equal(t, 1, rows[0].Lanes)

	out, _, code = run(t, "queues", "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	require.Regexp(t, `(?m)^mail\s+-\s+1\s+0\s+0\s+0\s+0\s+0\s+1\s+no\s*$`, out)

	empty := valkeytest.Start(t, valkeyserver.Options{})
	out, _, code = run(t, "queues", "--addr", empty.Addr(), "--json")
	require.Equal(t, exitOK, code)
	require.Equal(t, "[]\n", out)
}

func TestQueuesOnACluster(t *testing.T) {
	t.Parallel()
	cl := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 3, ReplicasPerPrimary: 1})
	c := valkeytest.ClusterClient(t, cl)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var want []string
	for i := range 30 {
		name := "q" + string(rune('a'+i/10)) + string(rune('0'+i%10))
		want = append(want, name)
		q, err := trafikey.Open(ctx, c, name, nil)
		require.NoError(t, err)
		_, err = q.Add(ctx, []byte("x"), nil)
		require.NoError(t, err)
	}
	// The queues live on every primary.
	spread := 0
	for _, p := range cl.Primaries() {
		if valkeytest.Do(t, p, "DBSIZE").(int64) > 0 {
			spread++
		}
	}
	require.Equal(t, 3, spread)

	addrs := cl.Addrs()
	out, errOut, code := run(t, "queues", "--cluster", addrs[0]+","+addrs[1], "--json")
	require.Equal(t, exitOK, code, errOut)
	rows := decode[[]queueRow](t, out)
	var got []string
	for _, r := range rows {
		require.Empty(t, r.Error)
		require.Equal(t, 1, r.Pending, r.Name)
		got = append(got, r.Name)
	}
	require.Equal(t, want, got, "every queue once, in order")

	// One node given with --addr brings in its cluster.
	out, errOut, code = run(t, "queues", "--names", "--addr", addrs[4])
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, strings.Join(want, "\n")+"\n", out)

	// The cluster from the environment; stats on a queue of any node.
	env := envOf(map[string]string{"TRAFIKEY_CLUSTER": addrs[2]})
	out, errOut, code = runWith(t, env, "", "stats", "qc9", "--json")
	require.Equal(t, exitOK, code, errOut)
	require.EqualValues(t, 1, decode[map[string]any](t, out)["pending"])
}

func TestCancelCommand(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "mail", nil)
	require.NoError(t, err)
	dead := deadJob(t, q, "b")
	pending, err := q.Add(ctx, []byte("a"), nil)
	require.NoError(t, err)

	out, errOut, code := run(t, "cancel", "mail", pending, dead, "--addr", s.Addr())
	require.Equal(t, exitRefused, code, errOut)
	require.Equal(t, "cancelled 1 of 2 jobs of mail\n", out)
	require.Contains(t, errOut, "cancel "+dead+":")
	info, err := q.Inspect(ctx, pending)
	require.NoError(t, err)
	require.Equal(t, trafikey.StateDead, info.State)
	require.True(t, info.Cancelled)
}

// remove of a parent waiting for its children removes its flow and says
// so; a flow with a claimed job is refused whole.
func TestRemoveFlow(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, s *valkeyserver.Server, c valkey.Client) {
		ctx := t.Context()
		q, err := trafikey.Open(ctx, c, "flows", nil)
		require.NoError(t, err)
		flow := func() trafikey.FlowIDs {
			ids, err := q.AddFlow(ctx, trafikey.JobSpec{Payload: []byte("report"), Children: []trafikey.JobSpec{
				{Payload: []byte("a")},
				{Payload: []byte("b"), Children: []trafikey.JobSpec{{Payload: []byte("b1")}}},
			}})
			require.NoError(t, err)
			return ids
		}
		gone := func(ids ...string) {
			t.Helper()
			for _, id := range ids {
				_, err := q.Inspect(ctx, id)
				require.ErrorIs(t, err, trafikey.ErrNotFound, id)
			}
		}
		f := flow()
		plain, err := q.Add(ctx, []byte("alone"), nil)
		require.NoError(t, err)

		out, errOut, code := run(t, "remove", "flows", f.ID, plain, "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Equal(t, "removed job "+f.ID+" and its flow\nremoved 2 of 2 jobs of flows\n", out)
		gone(f.ID, f.Children[0].ID, f.Children[1].ID, f.Children[1].Children[0].ID, plain)

		// a child alone is a job like another; its parent goes on waiting
		f = flow()
		out, errOut, code = run(t, "remove", "flows", f.Children[0].ID, "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.JSONEq(t, `[{"id":"`+f.Children[0].ID+`","ok":true}]`, out)
		info, err := q.Inspect(ctx, f.ID)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateWaiting, info.State)
		require.Equal(t, 1, info.Waiting)

		// a claimed descendant refuses the removal of the whole flow
		jobs, err := q.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		require.Equal(t, f.Children[1].Children[0].ID, jobs[0].ID)
		_, errOut, code = run(t, "remove", "flows", f.ID, "--addr", s.Addr())
		require.Equal(t, exitRefused, code, errOut)
		require.NotContains(t, errOut, "and its flow")
		_, err = q.Inspect(ctx, f.Children[1].ID)
		require.NoError(t, err, "nothing of the flow removed")
		require.NoError(t, jobs[0].Complete(ctx))
		out, errOut, code = run(t, "remove", "flows", f.ID, "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.JSONEq(t, `[{"id":"`+f.ID+`","ok":true,"flow":true}]`, out)
		gone(f.ID, f.Children[1].ID)
		valkeytest.RequireConsistentQueue(t, s, "flows")
	})
}
