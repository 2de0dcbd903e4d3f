package trafikey_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// BenchmarkWorkerProcess runs a Worker over b.N pre-added jobs whose handler
// returns at once, on a real valkey-server, and reports jobs/s and this
// process's CPU per job besides the allocations per job: the worker's own
// cost per job, which the adds made before the timer starts do not count
// in. Run it with -benchtime 100000x for numbers comparable with bench/'s
// process workload, and -cpuprofile or -memprofile to see where they go.
func BenchmarkWorkerProcess(b *testing.B) {
	for _, e := range []struct {
		name   string
		native bool
	}{{"native", true}, {"lua", false}} {
		for _, conc := range []int{1, 10, 100} {
			b.Run(e.name+"/concurrency="+strconv.Itoa(conc), func(b *testing.B) {
				benchWorkerProcess(b, e.native, conc, 0)
			})
		}
		// Claim loops other than the default, at the concurrency where
		// they matter.
		for _, loops := range []int{1, 4} {
			b.Run(e.name+"/concurrency=100/loops="+strconv.Itoa(loops), func(b *testing.B) {
				benchWorkerProcess(b, e.native, 100, loops)
			})
		}
	}
}

func benchWorkerProcess(b *testing.B, native bool, concurrency, loops int) {
	o := valkeyserver.Options{}
	if native {
		o.Module = valkeytest.ModulePath(b)
	}
	s := valkeytest.Start(b, o)
	c := valkeytest.Client(b, s)
	var exec executor.Executor = executor.NewLua(c)
	if native {
		exec = executor.NewNative(c)
	}
	q, err := trafikey.Open(b.Context(), c, "bench", trafikey.WithRunner(exec, nil))
	require.NoError(b, err)
	payload := make([]byte, 64)
	batch := make([]trafikey.JobSpec, trafikey.MaxBatch)
	for i := range batch {
		batch[i] = trafikey.JobSpec{Payload: payload}
	}
	for left := b.N; left > 0; left -= len(batch) {
		_, err := q.AddBatch(b.Context(), batch[:min(left, len(batch))])
		require.NoError(b, err)
	}

	done := make(chan struct{})
	var finished atomic.Int64
	w, err := trafikey.NewWorker(q, func(context.Context, *trafikey.Job) error { return nil }, trafikey.WithClaimLoops(trafikey.WorkerOptions{
		Concurrency: concurrency,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnDone: func(_ *trafikey.Job, o trafikey.Outcome, err error) {
			if o != trafikey.OutcomeCompleted {
				b.Errorf("outcome %v: %v", o, err)
			}
			if finished.Add(1) == int64(b.N) {
				close(done)
			}
		},
	}, loops))
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)

	b.ReportAllocs()
	srv0 := serverInfo(b, s)
	cpu0 := cpuTime()
	b.ResetTimer()
	began := time.Now()
	go func() { ran <- w.Run(ctx) }()
	<-done
	elapsed := time.Since(began)
	b.StopTimer()
	cpu := cpuTime() - cpu0
	srv := serverInfo(b, s)
	cancel()
	require.NoError(b, <-ran)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "client-µs/job")
	b.ReportMetric((srv["cpu"]-srv0["cpu"])*1e6/float64(b.N), "server-µs/job")
	if claims := srv["EMQ.CLAIM"] - srv0["EMQ.CLAIM"]; claims > 0 {
		b.ReportMetric(float64(b.N)/claims, "jobs/claim")
		b.ReportMetric(float64(b.N)/(srv["EMQ.COMPLETEMANY"]-srv0["EMQ.COMPLETEMANY"]), "jobs/completemany")
	}
	require.Equal(b, b.N, w.Info().Processed)
}

// serverInfo reads the server's CPU time in seconds ("cpu") and the calls of
// each command it has run (by name, as INFO commandstats spells it).
func serverInfo(b *testing.B, s *valkeyserver.Server) map[string]float64 {
	b.Helper()
	out := map[string]float64{}
	for _, section := range []string{"cpu", "commandstats"} {
		text, _ := valkeytest.Do(b, s, "INFO", section).(string)
		for line := range strings.Lines(text) {
			line = strings.TrimSpace(line)
			name, value, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch {
			case name == "used_cpu_user" || name == "used_cpu_sys":
				v, _ := strconv.ParseFloat(value, 64)
				out["cpu"] += v
			case strings.HasPrefix(name, "cmdstat_"):
				calls, _, _ := strings.Cut(strings.TrimPrefix(value, "calls="), ",")
				v, _ := strconv.ParseFloat(calls, 64)
				out[strings.TrimPrefix(name, "cmdstat_")] = v
			}
		}
	}
	return out
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAddToEmpty adds one job and claims it, b.N times, one call each:
// every ADD finds pending empty and signals (the signal list's token and
// the signal channel's message), the cost an idle queue's producer pays per
// job. It reports the server's CPU per ADD and CLAIM pair.
func BenchmarkAddToEmpty(b *testing.B) {
	for _, e := range []struct {
		name   string
		native bool
	}{{"native", true}, {"lua", false}} {
		b.Run(e.name, func(b *testing.B) {
			o := valkeyserver.Options{}
			if e.native {
				o.Module = valkeytest.ModulePath(b)
			}
			s := valkeytest.Start(b, o)
			c := valkeytest.Client(b, s)
			var exec executor.Executor = executor.NewLua(c)
			if e.native {
				exec = executor.NewNative(c)
			}
			ctx := b.Context()
			q, err := trafikey.Open(ctx, c, "bench", trafikey.WithRunner(exec, nil))
			require.NoError(b, err)
			payload := make([]byte, 64)
			srv0 := serverInfo(b, s)
			b.ResetTimer()
			for range b.N {
				_, err := q.Add(ctx, payload, nil)
				require.NoError(b, err)
				jobs, err := q.Claim(ctx, time.Minute, 1)
				require.NoError(b, err)
				require.Len(b, jobs, 1)
			}
			b.StopTimer()
			srv := serverInfo(b, s)
			b.ReportMetric((srv["cpu"]-srv0["cpu"])*1e6/float64(b.N), "server-µs/pair")
		})
	}
}
