package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

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

	// an id that is not there is not found, not paused; one paused
	// already is said so
	before := valkeytest.Snapshot(t, s, "emq:{mail}:*")
	out, errOut, code := run(t, "schedules", "pause", "mail", "nosuch", "digest", "--addr", addr)
	require.Equal(t, exitNotFound, code, errOut)
	require.Equal(t, "schedule digest was paused already\n", out)
	require.Contains(t, errOut, "pause schedule nosuch: no such schedule")
	_, _, code = run(t, "schedules", "resume", "mail", "nosuch", "--addr", addr)
	require.Equal(t, exitNotFound, code)
	_, _, code = run(t, "schedules", "pause", "mail", "a b", "--addr", addr)
	require.Equal(t, exitUsage, code, "not an id")
	out, _, code = run(t, "schedules", "resume", "mail", "beat", "--addr", addr)
	require.Equal(t, exitOK, code)
	require.Equal(t, "schedule beat was not paused\n", out)
	valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "emq:{mail}:*"))

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

// schedules get and list --next print the next occurrences, read from the
// spec as the schedule step reads it: six fields seconds first, five
// minute first, an interval; within the end and the cap.
func TestScheduleNextOccurrences(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, s *valkeyserver.Server, c valkey.Client) {
		ctx := t.Context()
		addr := s.Addr()
		q, err := trafikey.Open(ctx, c, "mail", nil)
		require.NoError(t, err)
		set := func(sc trafikey.Schedule) trafikey.ScheduleInfo {
			t.Helper()
			_, err := q.Schedules().Set(ctx, sc)
			require.NoError(t, err)
			info, err := q.Schedules().Get(ctx, sc.ID)
			require.NoError(t, err)
			require.False(t, info.Next.IsZero())
			return info
		}
		paris, err := time.LoadLocation("Europe/Paris")
		require.NoError(t, err)
		digest := set(trafikey.Schedule{ID: "digest", Cron: "0 0 8 * * 1-5", TimeZone: "Europe/Paris", Payload: []byte(`{"kind":"digest"}`)})
		crontab := set(trafikey.Schedule{ID: "crontab", Cron: "30 8 * * *"})
		beat := set(trafikey.Schedule{ID: "beat", Every: 90 * time.Second, Limit: 3})
		hourly := set(trafikey.Schedule{ID: "hourly", Every: time.Hour, End: time.Now().Add(2*time.Hour + 30*time.Minute)})
		set(trafikey.Schedule{ID: "stopped", Every: time.Minute})
		require.NoError(t, q.Schedules().Pause(ctx, "stopped"))

		nextOf := func(id string, n int) []time.Time {
			t.Helper()
			out, errOut, code := run(t, "schedules", "get", "mail", id, "--next", strconv.Itoa(n), "--json", "--addr", addr)
			require.Equal(t, exitOK, code, errOut)
			return decode[scheduleView](t, out).NextTimes
		}
		// weekdays at 08:00 in Paris, one after another
		times := nextOf("digest", 7)
		require.Len(t, times, 7)
		require.True(t, times[0].After(digest.Last), "after the last done")
		require.Less(t, times[0].Sub(digest.Last), 4*24*time.Hour, "the first weekday 08:00 after it")
		for i, at := range times {
			local := at.In(paris)
			require.Equal(t, [3]int{8, 0, 0}, [3]int{local.Hour(), local.Minute(), local.Second()}, at)
			require.NotContains(t, []time.Weekday{time.Saturday, time.Sunday}, local.Weekday())
			if i > 0 {
				prev := times[i-1].In(paris)
				gap := local.YearDay() - prev.YearDay()
				if local.Year() != prev.Year() {
					gap = 1 // the turn of a year: a weekday follows
				}
				if prev.Weekday() == time.Friday {
					require.Equal(t, time.Monday, local.Weekday())
				} else {
					require.Equal(t, 1, gap, "the next weekday")
				}
			}
		}
		// five fields: minute first
		times = nextOf("crontab", 2)
		require.True(t, times[0].After(crontab.Last))
		require.LessOrEqual(t, times[0].Sub(crontab.Last), 24*time.Hour)
		require.Equal(t, [3]int{8, 30, 0}, [3]int{times[0].Hour(), times[0].Minute(), times[0].Second()})
		require.Equal(t, [3]int{8, 30, 0}, [3]int{times[1].Hour(), times[1].Minute(), times[1].Second()})
		require.Equal(t, 24*time.Hour, times[1].Sub(times[0]))
		// an interval, within the cap
		times = nextOf("beat", 10)
		require.Len(t, times, 3, "the cap of 3")
		require.True(t, times[0].Equal(beat.Last.Add(90*time.Second)), "on the grid of the last done")
		require.Equal(t, 90*time.Second, times[2].Sub(times[1]))
		// within the end
		times = nextOf("hourly", 10)
		require.Len(t, times, 2, "the end comes first")
		require.True(t, times[0].Equal(hourly.Last.Add(time.Hour)))
		require.Empty(t, nextOf("stopped", 5), "paused")

		out, errOut, code := run(t, "schedules", "get", "mail", "digest", "--next", "2", "--addr", addr)
		require.Equal(t, exitOK, code, errOut)
		require.Regexp(t, `(?m)^spec\s+0 0 8 \* \* 1-5 \(Europe/Paris\)$`, out)
		require.Regexp(t, `(?m)^state\s+running \(revision 1\)$`, out)
		require.Regexp(t, `(?m)^payload\s+17 bytes: \{"kind":"digest"\}$`, out)
		require.Contains(t, out, "\nnext occurrences of digest (before jitter):\n  "+nextOf("digest", 1)[0].Format(time.RFC3339Nano)+"\n  ")
		out, errOut, code = run(t, "schedules", "list", "mail", "--next", "1", "--addr", addr)
		require.Equal(t, exitOK, code, errOut)
		require.Contains(t, out, "\nnext occurrences of beat (before jitter):\n  "+beat.Last.Add(90*time.Second).UTC().Format(time.RFC3339Nano)+"\n")
		require.Contains(t, out, "\nstopped: paused, no occurrence until resume\n")
		out, errOut, code = run(t, "schedules", "list", "mail", "--next", "2", "--json", "--addr", addr)
		require.Equal(t, exitOK, code, errOut)
		for _, v := range decode[[]scheduleView](t, out) {
			if v.ID == "stopped" {
				require.Empty(t, v.NextTimes)
			} else {
				require.Len(t, v.NextTimes, 2, v.ID)
			}
		}

		// the times predicted are those the step enqueues
		fresh, err := trafikey.Open(ctx, c, "fresh", nil)
		require.NoError(t, err)
		for _, sc := range []trafikey.Schedule{
			{ID: "ms", Every: 30 * time.Millisecond, Limit: 4},
			{ID: "sec", Cron: "* * * * * *", Limit: 2},
		} {
			_, err := fresh.Schedules().Set(ctx, sc)
			require.NoError(t, err)
		}
		// keyed by schedule and time: an occurrence of ms may fall on a
		// whole second, when sec has one too
		type occurrence struct {
			id string
			at time.Time
		}
		predicted := map[occurrence]bool{}
		for _, id := range []string{"ms", "sec"} {
			out, errOut, code := run(t, "schedules", "get", "fresh", id, "--next", "10", "--json", "--addr", addr)
			require.Equal(t, exitOK, code, errOut)
			for _, at := range decode[scheduleView](t, out).NextTimes {
				predicted[occurrence{id, at}] = true
			}
		}
		require.Len(t, predicted, 6)
		enqueued := map[occurrence]bool{}
		require.Eventually(t, func() bool {
			_, err := fresh.Admin().Maintain(ctx, 1000)
			require.NoError(t, err)
			st, err := fresh.Stats(ctx)
			require.NoError(t, err)
			return st.Pending == 6
		}, 10*time.Second, 20*time.Millisecond)
		page, err := fresh.Jobs(ctx, trafikey.StatePending, trafikey.JobsOptions{})
		require.NoError(t, err)
		for _, r := range page.Rows {
			info, err := fresh.Inspect(ctx, r.ID)
			require.NoError(t, err)
			enqueued[occurrence{info.Schedule, info.ScheduledAt.UTC()}] = true
		}
		require.Equal(t, predicted, enqueued)

		_, _, code = run(t, "schedules", "get", "mail", "nosuch", "--addr", addr)
		require.Equal(t, exitNotFound, code)
		_, _, code = run(t, "schedules", "get", "mail", "digest", "--next", "1001", "--addr", addr)
		require.Equal(t, exitUsage, code)
		_, _, code = run(t, "schedules", "list", "mail", "--next", "-1", "--addr", addr)
		require.Equal(t, exitUsage, code)
	})
}
