package trafikey

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// def builds and decodes s's definition as SCHEDULE.SET would store it.
func def(t *testing.T, s Schedule) *schedDef {
	t.Helper()
	args, err := s.args("test")
	require.NoError(t, err)
	d, err := parseDef(protocol.EncodeList(args[1:]))
	require.NoError(t, err)
	return d
}

func times(p firePlan) []int64 {
	out := []int64{}
	for _, o := range p.occ {
		out = append(out, o.at)
	}
	return out
}

const sec = int64(1000)

func TestPlanCronSecondsOnTime(t *testing.T) {
	d := def(t, Schedule{ID: "s", Cron: "* * * * * *", Grace: 10 * time.Second})
	last := 100*sec + 500 // created between two seconds
	p := d.plan("s", schedState{rev: 1, last: last}, 103*sec+20)
	require.Equal(t, []int64{101 * sec, 102 * sec, 103 * sec}, times(p))
	require.Equal(t, 103*sec, p.upto)
	require.Equal(t, 104*sec, p.next)
	// nothing due yet: only the next due time moves
	p = d.plan("s", schedState{rev: 1, last: 103 * sec}, 103*sec+999)
	require.Empty(t, p.occ)
	require.Equal(t, 103*sec, p.upto)
	require.Equal(t, 104*sec, p.next)
}

func TestPlanMissedPolicy(t *testing.T) {
	st := schedState{rev: 1, last: 100 * sec}
	now := 120*sec + 1
	// grace 2.5 s: 118, 119 and 120 are on time, 101..117 missed
	skip := def(t, Schedule{ID: "s", Cron: "* * * * * *", Grace: 2500 * time.Millisecond})
	p := skip.plan("s", st, now)
	require.Equal(t, []int64{118 * sec, 119 * sec, 120 * sec}, times(p), "catch-up 0 skips every missed one")
	require.Equal(t, 120*sec, p.upto)
	catch := def(t, Schedule{ID: "s", Cron: "* * * * * *", Grace: 2500 * time.Millisecond, CatchUp: 2})
	p = catch.plan("s", st, now)
	require.Equal(t, []int64{116 * sec, 117 * sec, 118 * sec, 119 * sec, 120 * sec}, times(p), "the latest two missed ones")
	p = catch.plan("s", schedState{rev: 1, last: 100 * sec}, 130*sec)
	require.Equal(t, []int64{126 * sec, 127 * sec, 128 * sec, 129 * sec, 130 * sec}, times(p))
	every := def(t, Schedule{ID: "s", Every: time.Second, Grace: time.Second, CatchUp: 1})
	p = every.plan("s", schedState{rev: 1, last: 5}, 1_000_000*sec)
	require.Equal(t, []int64{5 + (1_000_000-2)*sec, 5 + (1_000_000-1)*sec}, times(p), "an interval far behind jumps")
	require.Equal(t, 5+(1_000_000-1)*sec, p.upto)
	require.Equal(t, 5+1_000_000*sec, p.next)
}

func TestPlanBounds(t *testing.T) {
	// at most MaxScheduleFire per call, the earliest; the rest due at once
	d := def(t, Schedule{ID: "s", Every: time.Millisecond, Grace: time.Hour})
	p := d.plan("s", schedState{rev: 1, last: 0}, 5000)
	require.Len(t, p.occ, protocol.MaxScheduleFire)
	require.Equal(t, int64(1), p.occ[0].at)
	require.Equal(t, int64(protocol.MaxScheduleFire), p.upto)
	require.Equal(t, int64(protocol.MaxScheduleFire+1), p.next)
	// the cap
	d = def(t, Schedule{ID: "s", Every: time.Second, Limit: 5, Grace: time.Hour})
	p = d.plan("s", schedState{rev: 1, count: 3, last: 0}, 10*sec)
	require.Equal(t, []int64{sec, 2 * sec}, times(p))
	require.Equal(t, int64(0), p.next, "the cap finishes it")
	p = d.plan("s", schedState{rev: 1, count: 5, last: 0}, 10*sec)
	require.Empty(t, p.occ)
	require.Equal(t, int64(0), p.next)
	// start and end
	d = def(t, Schedule{ID: "s", Every: 10 * time.Second, Start: time.UnixMilli(7 * sec), End: time.UnixMilli(30 * sec),
		Grace: time.Hour})
	p = d.plan("s", schedState{rev: 1, last: 1}, 100*sec)
	require.Equal(t, []int64{7 * sec, 17 * sec, 27 * sec}, times(p))
	require.Equal(t, int64(0), p.next, "past the end")
	d = def(t, Schedule{ID: "s", Cron: "0 * * * * *", Start: time.UnixMilli(90 * sec), Grace: time.Hour})
	p = d.plan("s", schedState{rev: 1, last: 1}, 200*sec)
	require.Equal(t, []int64{120 * sec, 180 * sec}, times(p))
	require.Equal(t, 240*sec, p.next)
}

// A crontab's five fields start with the minute, six with the second.
func TestPlanCronFiveAndSixFields(t *testing.T) {
	at := func(h, m, s int) int64 { return time.Date(2026, 3, 2, h, m, s, 0, time.UTC).UnixMilli() }
	last := at(10, 0, 0)
	five := def(t, Schedule{ID: "s", Cron: "*/5 * * * *", Grace: time.Hour})
	p := five.plan("s", schedState{rev: 1, last: last}, at(10, 12, 0))
	require.Equal(t, []int64{at(10, 5, 0), at(10, 10, 0)}, times(p))
	require.Equal(t, at(10, 15, 0), p.next)
	six := def(t, Schedule{ID: "s", Cron: "*/5 * * * * *", Grace: time.Hour})
	p = six.plan("s", schedState{rev: 1, last: last}, at(10, 0, 12))
	require.Equal(t, []int64{at(10, 0, 5), at(10, 0, 10)}, times(p))
	require.Equal(t, at(10, 0, 15), p.next)
	for _, bad := range []string{"* * * *", "* * * * * * *", "61 * * * *"} {
		s := Schedule{ID: "s", Cron: bad}
		_, err := s.args("test")
		require.ErrorIs(t, err, ErrInvalid, bad)
	}
}

func TestPlanTimeZone(t *testing.T) {
	// 02:30 every day in Paris: 01:30 UTC in winter, 00:30 UTC in summer
	d := def(t, Schedule{ID: "s", Cron: "0 30 2 * * *", TimeZone: "Europe/Paris", Grace: time.Hour})
	winter := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC).UnixMilli()
	p := d.plan("s", schedState{rev: 1, last: winter}, winter+2*3600*sec)
	require.Equal(t, []int64{time.Date(2026, 1, 10, 1, 30, 0, 0, time.UTC).UnixMilli()}, times(p))
	summer := time.Date(2026, 7, 10, 0, 0, 0, 0, time.UTC).UnixMilli()
	p = d.plan("s", schedState{rev: 1, last: summer}, summer+3600*sec)
	require.Equal(t, []int64{time.Date(2026, 7, 10, 0, 30, 0, 0, time.UTC).UnixMilli()}, times(p))
}

func TestJitterIsDeterministicAndBounded(t *testing.T) {
	seen := map[int64]bool{}
	for at := range int64(200) {
		j := jitterOf("s", at*sec, 999)
		require.Equal(t, j, jitterOf("s", at*sec, 999))
		require.GreaterOrEqual(t, j, int64(0))
		require.LessOrEqual(t, j, int64(999))
		seen[j] = true
	}
	require.Greater(t, len(seen), 100, "spread over the range")
	require.Equal(t, int64(0), jitterOf("s", 5, 0))
	d := def(t, Schedule{ID: "s", Every: time.Second, Jitter: 500 * time.Millisecond, Grace: time.Hour})
	p := d.plan("s", schedState{rev: 1, last: 0}, 3*sec)
	for _, o := range p.occ {
		require.Equal(t, jitterOf("s", o.at, 500), o.jitter)
	}
}

func TestParseStateReadsLikeTheServer(t *testing.T) {
	require.Equal(t, schedState{rev: 3, count: 4, last: 5, next: 6, paused: true}, parseState("3 4 5 6 1"))
	require.Equal(t, schedState{rev: 3}, parseState("3"))
	require.Equal(t, schedState{count: 4}, parseState("03 4 -1 x 2"))
}
