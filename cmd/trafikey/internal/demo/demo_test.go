package demo

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

func TestRun(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	exec, fallback, err := ChooseExecutor(t.Context(), c, "auto")
	require.NoError(t, err)
	require.Equal(t, trafikey.ExecutorLua, exec)
	require.Contains(t, fallback, "no module")
	_, _, err = ChooseExecutor(t.Context(), c, "native")
	require.Error(t, err)

	q, err := trafikey.Open(t.Context(), c, "demo", &trafikey.QueueOptions{Executor: exec})
	require.NoError(t, err)
	var progress bytes.Buffer
	cfg := Config{
		Jobs: 1500, Producers: 3, Batch: 100, Concurrency: 20,
		SteadyRate: 1000, SteadyJobs: 50, IdleProbes: 5, Progress: &progress,
	}
	r, err := Run(t.Context(), q, cfg)
	require.NoError(t, err)
	require.Equal(t, 1500, r.Latency.N)
	require.Equal(t, 50, r.Steady.N)
	require.Equal(t, 5, r.Idle.N)
	require.Zero(t, r.NotCompleted)
	require.Equal(t, 1555, r.Stats.TotalCompleted)
	require.LessOrEqual(t, r.Latency.P50, r.Latency.P99)

	var out bytes.Buffer
	require.NoError(t, WriteReport(&out, r, "a server"))
	text := out.String()
	for _, want := range []string{"lua executor", "add: 3 producers, batches of 100", "concurrency 20", "add→start", "completed 1555"} {
		require.Contains(t, text, want)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := Config{Jobs: 1, Producers: 1, Batch: 1, Concurrency: 1}
	require.NoError(t, ok.Validate())
	for _, bad := range []func(*Config){
		func(c *Config) { c.Jobs = 0 },
		func(c *Config) { c.Producers = 0 },
		func(c *Config) { c.Batch = trafikey.MaxBatch + 1 },
		func(c *Config) { c.Concurrency = 0 },
		func(c *Config) { c.IdleProbes = -1 },
	} {
		c := ok
		bad(&c)
		require.Error(t, c.Validate())
	}
}

func TestFormatting(t *testing.T) {
	t.Parallel()
	require.Equal(t, "0", thousands(0))
	require.Equal(t, "999", thousands(999))
	require.Equal(t, "1,000", thousands(1000))
	require.Equal(t, "1,234,567", thousands(1234567))
	require.Equal(t, "0.35 ms", latency(350*time.Microsecond))
	require.Equal(t, "12.5 ms", latency(12500*time.Microsecond))
	require.Equal(t, "450 ms", latency(450*time.Millisecond))
	require.Equal(t, "1.25 s", latency(1250*time.Millisecond))
	require.True(t, strings.HasSuffix(rate(100, time.Second), "100"))
}

func TestQuantile(t *testing.T) {
	t.Parallel()
	s := newSamples(200)
	for i := 200; i >= 1; i-- {
		s.add(time.Duration(i))
	}
	s.add(time.Hour) // past capacity: dropped
	p := s.percentiles()
	require.Equal(t, 200, p.N)
	require.Equal(t, time.Duration(100), p.P50)
	require.Equal(t, time.Duration(198), p.P99)

	at := time.Unix(1700000000, 123456789)
	got, ok := stamped(stamp(at))
	require.True(t, ok)
	require.True(t, at.Equal(got))
	_, ok = stamped(nil)
	require.False(t, ok)
}
