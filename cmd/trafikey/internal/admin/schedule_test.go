package admin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
)

// NextOccurrences stops at a schedule's end.
func TestNextOccurrences(t *testing.T) {
	t.Parallel()
	next := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	last := next.Add(-time.Minute)
	runs, err := NextOccurrences(trafikey.ScheduleInfo{Schedule: trafikey.Schedule{Cron: "0 * * * *", End: next.Add(150 * time.Minute)}, Last: last, Next: next}, last, 5)
	require.NoError(t, err)
	require.Equal(t, []time.Time{next, next.Add(time.Hour), next.Add(2 * time.Hour)}, runs)
	runs, err = NextOccurrences(trafikey.ScheduleInfo{Schedule: trafikey.Schedule{Cron: "0 * * * *"}, Last: last, Next: next, Paused: true}, last, 5)
	require.NoError(t, err)
	require.Empty(t, runs)
	runs, err = NextOccurrences(trafikey.ScheduleInfo{Schedule: trafikey.Schedule{Every: time.Minute, Limit: 5}, Count: 4, Last: last, Next: next}, last, 5)
	require.NoError(t, err)
	require.Equal(t, []time.Time{next}, runs)
	// After now: an interval's grid from its last occurrence, and a start.
	runs, err = NextOccurrences(trafikey.ScheduleInfo{Schedule: trafikey.Schedule{Every: 10 * time.Minute}, Last: last, Next: next}, last.Add(25*time.Minute), 2)
	require.NoError(t, err)
	require.Equal(t, []time.Time{last.Add(30 * time.Minute), last.Add(40 * time.Minute)}, runs)
	start := next.Add(24 * time.Hour)
	runs, err = NextOccurrences(trafikey.ScheduleInfo{Schedule: trafikey.Schedule{Cron: "0 * * * *", Start: start}, Last: last, Next: start}, last, 2)
	require.NoError(t, err)
	require.Equal(t, []time.Time{start, start.Add(time.Hour)}, runs)
}
