package dash

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHistoryRing(t *testing.T) {
	t.Parallel()
	var h history
	t0 := time.Unix(1000, 0)
	for i := range 5 {
		h.add(tally{at: t0.Add(time.Duration(i) * time.Second), completed: 10 * i}, 3)
	}
	got := h.ordered()
	require.Len(t, got, 3)
	require.Equal(t, []int{20, 30, 40}, []int{got[0].completed, got[1].completed, got[2].completed})
	r := rates(got)
	require.Len(t, r, 2)
	require.InDelta(t, 10.0, r[1].CompletedPerSec, 1e-9)

	// A counter that went back (the queue was made again) and a failed
	// read give no rate, never a negative one.
	require.Zero(t, rateBetween(tally{at: t0, completed: 50}, tally{at: t0.Add(time.Second), completed: 3}).CompletedPerSec)
	require.Zero(t, rateBetween(tally{at: t0}, tally{at: t0.Add(time.Second), completed: 3, failedRead: true}).CompletedPerSec)
}

// The failure rate over a window: from the oldest readable sample in it to
// the latest readable one, never one tick's swing.
func TestWindows(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	var pts []tally
	// 10 minutes at 2 s: 10 completions and 1 failure a tick, but in the
	// last minute 10 completions and 10 failures a tick.
	completed, failed := 0, 0
	for i := range 300 {
		at := t0.Add(time.Duration(i) * 2 * time.Second)
		if i > 0 {
			completed += 10
			if i > 270 {
				failed += 10
			} else {
				failed++
			}
		}
		pts = append(pts, tally{at: at, completed: completed, failed: failed})
	}
	pts[len(pts)-1].failedRead = true // the last read failed: the one before ends the windows
	w := windowsOf(pts)
	require.Len(t, w, 2)
	require.Equal(t, 60, w[0].Seconds)
	require.Equal(t, int64(60000), w[0].SpanMS)
	// Ticks 268..298: 30 steps, of which 28 after tick 270 fail ten times.
	require.Equal(t, 300, w[0].Completed)
	require.Equal(t, 2+28*10, w[0].Failed)
	require.InDelta(t, 282.0/582.0, *w[0].FailureRate, 1e-9)
	require.Equal(t, 300, w[1].Seconds)
	require.Equal(t, 1500, w[1].Completed)
	require.Equal(t, 122+28*10, w[1].Failed)

	sum := sumWindows([][]window{w, w})
	require.Equal(t, 2*w[0].Failed, sum[0].Failed)
	require.InDelta(t, *w[0].FailureRate, *sum[0].FailureRate, 1e-9)
	require.Nil(t, sumWindows(nil)[0].FailureRate, "nothing finished: no rate, not 0 %")
	require.Nil(t, windowsOf(pts[:1]), "one sample: no window")
}
