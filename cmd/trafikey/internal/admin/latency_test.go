package admin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A latency is the wait since the add, 0 when none waits, and never below
// 0 when this process's clock is behind the server's.
func TestLatency(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	require.Equal(t, 1500*time.Millisecond, Latency(now.Add(-1500*time.Millisecond), now))
	require.Zero(t, Latency(time.Time{}, now), "none waits")
	require.Zero(t, Latency(now.Add(time.Second), now), "added ahead of this clock")
}
