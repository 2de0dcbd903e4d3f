package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

func TestSchedules(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	addr := s.Addr()

	out, _, code := run(t, "schedules", "add", "mail", "digest", "--addr", addr, "--cron", "0 0 8 * * 1-5",
		"--tz", "Europe/Paris", "--payload", `{"kind":"digest"}`, "--priority", "7", "--lane", "eu", "--limit", "10",
		"--catch-up", "2", "--grace", "10m", "--jitter", "30s", "--kind", "digest")
	require.Equal(t, exitOK, code, out)
	require.Equal(t, "schedule digest of mail at revision 1\n", out)
	out, _, code = run(t, "schedules", "add", "mail", "beat", "--addr", addr, "--every", "90s", "--json")
	require.Equal(t, exitOK, code, out)
	require.Equal(t, float64(1), decode[map[string]any](t, out)["revision"])

	out, _, code = run(t, "schedules", "list", "mail", "--addr", addr)
	require.Equal(t, exitOK, code)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 3)
	require.Regexp(t, `^schedule\s+spec\s+next\s+count\s+paused$`, lines[0])
	require.Regexp(t, `^beat\s+every 1m30s\s+\S+\s+0\s+no$`, lines[1])
	require.Regexp(t, `^digest\s+0 0 8 \* \* 1-5 \(Europe/Paris\)\s+\S+\s+0 of 10\s+no$`, lines[2])

	// update: the flags given change, the rest is kept
	out, _, code = run(t, "schedules", "update", "mail", "digest", "--addr", addr, "--priority", "9", "--lane", "")
	require.Equal(t, exitOK, code, out)
	require.Equal(t, "schedule digest of mail at revision 2\n", out)
	q, err := trafikey.Open(t.Context(), c, "mail", nil)
	require.NoError(t, err)
	info, err := q.Schedules().Get(t.Context(), "digest")
	require.NoError(t, err)
	require.Equal(t, "0 0 8 * * 1-5", info.Cron)
	require.Equal(t, "Europe/Paris", info.TimeZone)
	require.Equal(t, 30*time.Second, info.Jitter)
	require.Equal(t, [2]any{10 * time.Minute, 2}, [2]any{info.Grace, info.CatchUp})
	require.Equal(t, 9, info.Options.Priority)
	require.Empty(t, info.Options.Lane, "the lane is taken off")
	require.Equal(t, "digest", info.Options.Kind, "the kind kept")
	require.Equal(t, []byte(`{"kind":"digest"}`), info.Payload)

	// a cron schedule becomes an interval, its zone dropped
	out, _, code = run(t, "schedules", "update", "mail", "beat", "--addr", addr, "--cron", "0 0 * * * *", "--tz", "Asia/Tokyo")
	require.Equal(t, exitOK, code, out)
	// a crontab's five fields are taken as they are written
	out, _, code = run(t, "schedules", "update", "mail", "beat", "--addr", addr, "--cron", "30 8 * * 1-5")
	require.Equal(t, exitOK, code, out)
	five, err := q.Schedules().Get(t.Context(), "beat")
	require.NoError(t, err)
	require.Equal(t, "30 8 * * 1-5", five.Cron)
	out, _, code = run(t, "schedules", "update", "mail", "beat", "--addr", addr, "--every", "90s")
	require.Equal(t, exitOK, code, out)
	beat, err := q.Schedules().Get(t.Context(), "beat")
	require.NoError(t, err)
	require.Equal(t, trafikey.Schedule{ID: "beat", Every: 90 * time.Second, Grace: beat.Grace, CatchUp: beat.CatchUp, Payload: beat.Payload, Options: beat.Options}, beat.Schedule)

	out, _, code = run(t, "schedules", "pause", "mail", "digest", "beat", "--addr", addr)
	require.Equal(t, exitOK, code)
	require.Equal(t, "paused schedule digest\npaused schedule beat\n", out)
	out, _, code = run(t, "schedules", "list", "mail", "--addr", addr, "--json")
	require.Equal(t, exitOK, code)
	list := decode[[]map[string]any](t, out)
	require.Len(t, list, 2)
	require.Equal(t, "beat", list[0]["id"])
	require.Nil(t, list[0]["time_zone"])
	require.Equal(t, float64(90000), list[0]["every_ms"])
	require.Equal(t, true, list[0]["paused"])
	require.Equal(t, "digest", list[1]["id"])
	require.Equal(t, float64(9), list[1]["priority"])
	require.Equal(t, float64(3), list[1]["revision"])
	out, _, code = run(t, "schedules", "resume", "mail", "beat", "--addr", addr, "--json")
	require.Equal(t, exitOK, code)
	require.Equal(t, []map[string]any{{"id": "beat", "ok": true}}, decode[[]map[string]any](t, out))

	// a job the schedule enqueued shows its occurrence
	_, err = q.Schedules().Set(t.Context(), trafikey.Schedule{ID: "now", Every: time.Millisecond, Limit: 1,
		Grace: time.Hour})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		mt, err := q.Admin().Maintain(t.Context(), 1000)
		require.NoError(t, err)
		return mt.Scheduled == 1
	}, 10*time.Second, 10*time.Millisecond)
	job, err := q.Inspect(t.Context(), "1")
	require.NoError(t, err)
	out, _, code = run(t, "inspect", "mail", "1", "--addr", addr)
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "schedule  now, occurrence of "+job.ScheduledAt.UTC().Format(time.RFC3339Nano))
	out, _, code = run(t, "inspect", "mail", "1", "--addr", addr, "--json")
	require.Equal(t, exitOK, code)
	require.Equal(t, "now", decode[map[string]any](t, out)["schedule"])

	out, _, code = run(t, "schedules", "remove", "mail", "beat", "--addr", addr)
	require.Equal(t, exitOK, code)
	require.Equal(t, "removed schedule beat\n", out)
	_, _, code = run(t, "schedules", "remove", "mail", "beat", "--addr", addr)
	require.Equal(t, exitNotFound, code)
	_, _, code = run(t, "schedules", "update", "mail", "beat", "--addr", addr, "--priority", "1")
	require.Equal(t, exitNotFound, code)

	// usage errors, before any write
	for _, bad := range [][]string{
		{"schedules", "add", "mail", "x"},
		{"schedules", "add", "mail", "x", "--cron", "* * *"},
		{"schedules", "add", "mail", "a b", "--every", "1s"},
		{"schedules", "add", "mail", "x", "--every", "1s", "--start", "yesterday"},
		{"schedules", "add", "mail", "x", "--every", "1s", "--priority", "1001"},
	} {
		_, _, code = run(t, append(bad, "--addr", addr)...)
		require.Equal(t, exitUsage, code, "%q", bad)
	}
	require.Equal(t, int64(0), valkeytest.Do(t, s, "HEXISTS", protocol.KeysOf("mail").Base+protocol.SuffixSchedules, "s:x"))
	_, _, code = run(t, "schedules", "list", "nosuch", "--addr", addr)
	require.Equal(t, exitNotFound, code)
}
