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

// lane pause, resume and cap act on the lane, say so, and exit with the
// codes of the other actions.
func TestLaneCommands(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, s *valkeyserver.Server, c valkey.Client) {
		ctx := t.Context()
		q, err := trafikey.Open(ctx, c, "mail", nil)
		require.NoError(t, err)
		for range 3 {
			_, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{Lane: "acme"})
			require.NoError(t, err)
		}

		out, errOut, code := run(t, "lane", "pause", "mail", "acme", "beta", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Equal(t, "paused lane acme of mail\npaused lane beta of mail\n", out)
		info, err := q.Lane("acme").Info(ctx)
		require.NoError(t, err)
		require.True(t, info.Paused)
		jobs, err := q.Claim(ctx, time.Minute, 10)
		require.NoError(t, err)
		require.Empty(t, jobs, "a paused lane's jobs are not claimed")

		out, errOut, code = run(t, "lane", "cap", "mail", "acme", "2", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Equal(t, "capped lane acme of mail at 2 active jobs\n", out)
		out, errOut, code = run(t, "lane", "resume", "mail", "acme", "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.JSONEq(t, `[{"queue":"mail","name":"acme","waiting":3,"active":0,"cap":2,"paused":false,"ok":true}]`, out)
		jobs, err = q.Claim(ctx, time.Minute, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 2, "the cap holds")

		out, errOut, code = run(t, "lane", "info", "mail", "acme", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Regexp(t, `(?m)^acme\s+1\s+2\s+2\s+no$`, out)
		out, errOut, code = run(t, "lane", "cap", "mail", "acme", "0", "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.JSONEq(t, `[{"queue":"mail","name":"acme","waiting":1,"active":2,"cap":0,"paused":false,"ok":true}]`, out)
		out, _, code = run(t, "lane", "cap", "mail", "acme", "0", "--addr", s.Addr())
		require.Equal(t, exitOK, code)
		require.Equal(t, "removed the cap of lane acme of mail\n", out)

		for _, tc := range []struct {
			args []string
			code int
		}{
			{[]string{"lane", "cap", "mail", "acme", "-1"}, exitUsage},
			{[]string{"lane", "cap", "mail", "acme", "many"}, exitUsage},
			{[]string{"lane", "cap", "mail", "acme", "1000001"}, exitUsage},
			{[]string{"lane", "pause", "mail"}, exitUsage},
			{[]string{"lane", "pause", "nosuch", "acme"}, exitNotFound},
			{[]string{"lane", "info", "nosuch", "acme"}, exitNotFound},
		} {
			_, errOut, code := run(t, append(tc.args, "--addr", s.Addr())...)
			require.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		}
		require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", "emq:{nosuch}:version"), "nothing written to a queue that is not there")
	})
}
