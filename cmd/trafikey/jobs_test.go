package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

func TestJobsCommand(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "mail", nil)
	require.NoError(t, err)
	var dead []string
	for _, p := range []string{"a", "b", "c"} {
		dead = append(dead, deadJob(t, q, p))
	}
	_, err = q.Add(ctx, []byte(`{"to":"ada"}`), &trafikey.JobOptions{Lane: "tenant-1", Priority: 5})
	require.NoError(t, err)

	// the latest deaths first, two a page
	out, errOut, code := run(t, "jobs", "mail", "--state", "dead", "--newest", "--limit", "2", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	require.Regexp(t, `^ID\s+KIND\s+DIED\s+ATTEMPTS\s+PRIO\s+LANE\s+PARENT\s+ADDED\s+SIZE\s+ERROR / PREVIEW$`, lines[0])
	require.Regexp(t, `^`+dead[2]+`\s+-\s+\d+s ago\s+1/1\s+0\s+-\s+-\s+\d+s ago\s+1\s+smtp: 550 no such user$`, lines[1])
	require.True(t, strings.HasPrefix(lines[2], dead[1]+" "), lines[2])
	cursor, ok := strings.CutPrefix(lines[3], "2 of 3 dead jobs; next page: --cursor ")
	require.True(t, ok, lines[3])
	out, errOut, code = run(t, "jobs", "mail", "--state", "dead", "--newest", "--limit", "2", "--cursor", cursor, "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "\n"+dead[0]+" ")
	require.Contains(t, out, "1 dead jobs on this page, 3 in all; no more pages\n")

	// JSON: the page, its rows and the cursor
	out, errOut, code = run(t, "jobs", "mail", "--state", "dead", "--limit", "1", "--clip", "4", "--json", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	page := decode[admin.JobsPageView](t, out)
	require.Equal(t, "mail", page.Queue)
	require.Equal(t, 3, page.Total)
	require.Len(t, page.Rows, 1)
	require.Equal(t, dead[0], page.Rows[0].ID)
	require.Equal(t, "smtp", page.Rows[0].LastError)
	require.Equal(t, len("smtp: 550 no such user"), page.Rows[0].ErrorSize)
	require.Equal(t, []byte("a"), page.Rows[0].Preview)
	require.NotNil(t, page.Rows[0].At)
	require.NotEmpty(t, page.Next)
	next := decode[admin.JobsPageView](t, func() string {
		out, _, code := run(t, "jobs", "mail", "--state", "dead", "--limit", "5", "--cursor", page.Next, "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code)
		return out
	}())
	require.Len(t, next.Rows, 2)
	require.Empty(t, next.Next)

	// a lane's pending jobs, with a preview of the payload
	out, errOut, code = run(t, "jobs", "mail", "--state", "pending", "--lane", "tenant-1", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, `(?m)^4\s+-\s+0/3\s+5\s+tenant-1\s+-\s+\d+s ago\s+12\s+\{"to":"ada"\}$`, out)
	out, _, code = run(t, "jobs", "mail", "--state", "pending", "--no-lane", "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	require.Equal(t, "no pending jobs in mail on this page (0 in all)\n", out)

	// refusals
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"jobs", "mail"}, exitUsage, "--state is required"},
		{[]string{"jobs", "mail", "--state", "retained"}, exitUsage, "state"},
		{[]string{"jobs", "mail", "--state", "dead", "--lane", "x"}, exitUsage, "lane"},
		{[]string{"jobs", "mail", "--state", "dead", "--limit", "1001"}, exitUsage, "limit"},
		{[]string{"jobs", "mail", "--state", "dead", "--clip", "2000"}, exitUsage, "clip"},
		{[]string{"jobs", "mail", "--state", "dead", "--cursor", "nope"}, exitUsage, "cursor"},
		{[]string{"jobs", "nosuch", "--state", "dead"}, exitNotFound, "not found"},
		{[]string{"jobs", "mail", "--state", "dead", "--no-lane"}, exitUsage, "--no-lane"},
		{[]string{"jobs", "mail", "--state", "pending", "--no-lane", "--lane", "x"}, exitUsage, "--no-lane"},
		{[]string{"jobs", "mail", "--state", "pending", "--per-lane", "0"}, exitUsage, "--per-lane"},
	} {
		_, errOut, code := run(t, append(tc.args, "--addr", s.Addr())...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, tc.msg, tc.args)
	}
}

func TestBulkRequeueRemovePromoteRetry(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "mail", nil)
	require.NoError(t, err)
	keys := protocol.KeysOf("mail")
	var ids []string
	for i := range 1205 {
		ids = append(ids, deadJob(t, q, "j"+strconv.Itoa(i)))
	}
	valkeytest.Do(t, s, "HSET", keys.Job(ids[10]), "err", "upstream 502")
	valkeytest.Do(t, s, "HSET", keys.Job(ids[20]), "err", "upstream 503")

	// a filter flag without --all-dead, and no ids, are usage errors
	_, errOut, code := run(t, "requeue", "mail", "--error-contains", "upstream", "--addr", s.Addr())
	require.Equal(t, exitUsage, code, errOut)
	_, _, code = run(t, "requeue", "mail", "1", "--error-contains", "x", "--addr", s.Addr())
	require.Equal(t, exitUsage, code)
	_, _, code = run(t, "requeue", "mail", "--all-dead", "--died-after", "yesterday", "--addr", s.Addr())
	require.Equal(t, exitUsage, code)
	_, _, code = run(t, "requeue", "mail", "1", "--all-dead", "--addr", s.Addr())
	require.Equal(t, exitUsage, code, "ids and --all-dead")

	out, errOut, code := run(t, "requeue", "mail", "--all-dead", "--error-contains", "upstream", "--json", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	require.JSONEq(t, `{"queue":"mail","requeued":2,"examined":1205}`, out)
	for _, id := range []string{ids[10], ids[20]} {
		info, err := q.Inspect(ctx, id)
		require.NoError(t, err)
		require.Equal(t, trafikey.StatePending, info.State)
	}

	// remove the dead jobs of more than an hour ago, with a progress bar
	for _, id := range ids[:5] {
		valkeytest.Do(t, s, "ZADD", keys.Dead, "XX", "1000", id)
	}
	out, errOut, code = run(t, "remove", "mail", "--dead-before", "1h", "--progress", "always", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "removed 5 dead jobs of mail (5 examined)\n", out)
	require.Contains(t, errOut, "remove dead")
	_, _, code = run(t, "remove", "mail", "--dead-before", "soon", "--addr", s.Addr())
	require.Equal(t, exitUsage, code)
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, 1198, st.Dead)

	// remove before an absolute time: none died before 2001
	out, _, code = run(t, "remove", "mail", "--dead-before", "2001-01-01T00:00:00Z", "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	require.Equal(t, "removed 0 dead jobs of mail (0 examined)\n", out)

	// requeue the rest
	out, errOut, code = run(t, "requeue", "mail", "--all-dead", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "requeued 1198 dead jobs of mail (1198 examined)\n", out)

	// promote --all and retry
	d1, err := q.Add(ctx, []byte("later"), &trafikey.JobOptions{Delay: time.Hour})
	require.NoError(t, err)
	d2, err := q.Add(ctx, []byte("later"), &trafikey.JobOptions{Delay: time.Hour})
	require.NoError(t, err)
	out, errOut, code = run(t, "retry", "mail", d1, "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "retried 1 of 1 jobs of mail\n", out)
	claimed, err := q.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	_, errOut, code = run(t, "retry", "mail", claimed[0].ID, "--addr", s.Addr())
	require.Equal(t, exitRefused, code, "claimed: %s", errOut)
	out, _, code = run(t, "promote", "mail", "--addr", s.Addr())
	require.Equal(t, exitOK, code)
	require.Equal(t, "promoted 0 jobs of mail\n", out, "not due")
	out, errOut, code = run(t, "promote", "mail", "--all", "--json", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	require.JSONEq(t, `{"queue":"mail","promoted":1}`, out)
	info, err := q.Inspect(ctx, d2)
	require.NoError(t, err)
	require.Equal(t, trafikey.StatePending, info.State)
}

// jobs --state pending without --lane shows every pending job: those
// without a lane, then each lane's, with totals that add up.
func TestJobsPendingShowsLanes(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, s *valkeyserver.Server, c valkey.Client) {
		ctx := t.Context()
		q, err := trafikey.Open(ctx, c, "mail", nil)
		require.NoError(t, err)
		add := func(n int, lane string) []string {
			specs := make([]trafikey.JobSpec, n)
			for i := range specs {
				specs[i] = trafikey.JobSpec{Payload: []byte(lane + strconv.Itoa(i)), Options: trafikey.JobOptions{Lane: lane}}
			}
			ids, err := q.AddBatch(ctx, specs)
			require.NoError(t, err)
			return ids
		}
		// a lane with an active job only has nothing pending
		add(1, "busy")
		jobs, err := q.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		add(2, "")
		acme := add(30, "acme")
		add(20, "beta")
		add(2, "gamma")
		require.NoError(t, q.Lane("acme").Pause(ctx))
		require.NoError(t, q.Lane("gamma").SetCap(ctx, 4))
		st, err := q.Stats(ctx)
		require.NoError(t, err)
		require.Equal(t, 54, st.Pending)

		out, errOut, code := run(t, "jobs", "mail", "--state", "pending", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.True(t, strings.HasPrefix(out, "54 pending in mail: 2 without a lane, 52 in 3 lanes\n\nwithout a lane (2):\n"), out)
		require.NotContains(t, out, "lane busy")
		require.Contains(t, out, "\nlane acme (30 waiting, paused):\n")
		require.Regexp(t, `(?m)^`+acme[4]+`\s+-\s+0/3\s+0\s+acme\s`, out, "acme's fifth job")
		require.NotRegexp(t, `(?m)^`+acme[5]+`\s`, out, "its sixth is on the next page")
		require.Contains(t, out, "\nlane beta (20 waiting):\n")
		require.Contains(t, out, "\nlane gamma (2 waiting, cap 4):\n")
		require.NotContains(t, out, "next page: --lane gamma", "one page holds gamma's")
		m := regexp.MustCompile(`(?m)^5 of 30; next page: --lane acme --cursor (\S+)$`).FindStringSubmatch(out)
		require.NotNil(t, m, out)
		out, errOut, code = run(t, "jobs", "mail", "--state", "pending", "--lane", "acme", "--cursor", m[1], "--limit", "1", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Regexp(t, `(?m)^`+acme[5]+`\s`, out, "the lane's listing goes on")

		// JSON: the lanes section, with counts that add up
		out, errOut, code = run(t, "jobs", "mail", "--state", "pending", "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		v := decode[pendingView](t, out)
		require.Equal(t, 54, v.Pending)
		require.Equal(t, 54, v.WithoutLane+v.InLanes)
		require.Equal(t, v.WithoutLane, v.Total)
		require.Len(t, v.Rows, v.Total)
		sum := 0
		var names []string
		for _, l := range v.Lanes {
			sum += l.Waiting
			names = append(names, l.Name)
			require.Len(t, l.Rows, min(5, l.Waiting), l.Name)
		}
		require.Equal(t, v.InLanes, sum)
		require.Equal(t, []string{"acme", "beta", "gamma"}, names)
		require.Equal(t, 30, v.Lanes[0].Waiting)
		require.True(t, v.Lanes[0].Paused)
		require.NotEmpty(t, v.Lanes[0].Next)

		// at most --lanes lanes, saying so
		out, errOut, code = run(t, "jobs", "mail", "--state", "pending", "--lanes", "1", "--per-lane", "1", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Contains(t, out, "in lanes (the first 1 lanes shown; trafikey lanes mail lists them all)")
		require.Contains(t, out, "1 of 30; next page: --lane acme --cursor ")
		out, _, code = run(t, "jobs", "mail", "--state", "pending", "--lanes", "1", "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code)
		require.True(t, decode[pendingView](t, out).LanesCut)

		// --no-lane: the jobs without a lane alone, as before
		out, errOut, code = run(t, "jobs", "mail", "--state", "pending", "--no-lane", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.NotContains(t, out, "acme")
		require.Contains(t, out, "pending jobs on this page")
	})
}
