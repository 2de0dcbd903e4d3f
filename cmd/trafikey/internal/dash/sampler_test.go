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
