package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

func TestJobsKind(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "mail", nil)
	require.NoError(t, err)
	// 250 jobs: every 50th (1, 51, 101, 151, 201) of kind email.send, the
	// others of kind sms.send or none
	var want []string
	for i := range 250 {
		kind := ""
		switch {
		case i%50 == 0:
			kind = "email.send"
		case i%2 == 0:
			kind = "sms.send"
		}
		id, err := q.Add(ctx, []byte("j"), &trafikey.JobOptions{Kind: kind})
		require.NoError(t, err)
		if kind == "email.send" {
			want = append(want, id)
		}
	}

	// the kind column, and a dash for none
	out, errOut, code := run(t, "jobs", "mail", "--state", "pending", "--no-lane", "--limit", "3", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Regexp(t, `^ID\s+KIND\s+ATTEMPTS\s+PRIO`, lines[0])
	require.Regexp(t, `^1\s+email\.send\s+0/3\s`, lines[1])
	require.Regexp(t, `^2\s+-\s+0/3\s`, lines[2])
	require.Regexp(t, `^3\s+sms\.send\s+0/3\s`, lines[3])

	// --kind fills the page from further reads, and its cursor continues
	// after the last job shown
	out, errOut, code = run(t, "jobs", "mail", "--state", "pending", "--kind", "email.send", "--limit", "3", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	lines = strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 6, out)
	for i, id := range want[:3] {
		require.Regexp(t, `^`+id+`\s+email\.send\s`, lines[1+i])
	}
	require.Equal(t, "kind email.send: 3 of the 101 jobs examined", lines[5])
	cursor, ok := strings.CutPrefix(lines[4], "3 of 250 pending jobs; next page: --cursor ")
	require.True(t, ok, lines[4])
	page := decode[admin.JobsPageView](t, func() string {
		out, errOut, code := run(t, "jobs", "mail", "--state", "pending", "--kind", "email.send", "--limit", "3",
			"--cursor", cursor, "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		return out
	}())
	require.Equal(t, "email.send", page.Kind)
	require.Equal(t, 149, page.Examined, "jobs 102 to 250")
	require.Empty(t, page.Next, "the set is read")
	var got []string
	for _, r := range page.Rows {
		require.Equal(t, "email.send", r.Kind)
		got = append(got, r.ID)
	}
	require.Equal(t, want[3:], got)

	// a kind no job has: the whole set examined, nothing shown
	out, errOut, code = run(t, "jobs", "mail", "--state", "pending", "--kind", "push", "--addr", s.Addr())
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "no pending jobs of kind push in mail among the 250 examined (250 in all); no more pages\n", out)
	_, errOut, code = run(t, "jobs", "mail", "--state", "pending", "--kind", "push", "--limit", "0", "--addr", s.Addr())
	require.Equal(t, exitUsage, code, errOut)
	require.Contains(t, errOut, "--limit 0")
}
