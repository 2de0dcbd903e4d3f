package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// Per-verb benchmarks, native vs Lua, on one valkey-server with the module
// loaded:
//
//	go test -run '^$' -bench . ./bench
//
// Besides ns/op (the client's round trip), each reports what the server
// spent: server-µs/op, the INFO commandstats time of the verb's command
// (EMQ.* natively, EVALSHA for Lua), and server-cpu-µs/op, the server
// process's CPU (INFO cpu) per op, networking included.

func BenchmarkAdd(b *testing.B) {
	benchVerbs(b, func(b *testing.B, ctx context.Context, q *trafikey.Queue, start func()) {
		payload := stampPayload(defaultPayload)
		start()
		for range b.N {
			if _, err := q.Add(ctx, payload, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAddBatch100 adds 100 jobs per call; an op is one job.
func BenchmarkAddBatch100(b *testing.B) {
	benchVerbs(b, func(b *testing.B, ctx context.Context, q *trafikey.Queue, start func()) {
		jobs := make([]trafikey.JobSpec, 100)
		for i := range jobs {
			jobs[i] = trafikey.JobSpec{Payload: stampPayload(defaultPayload)}
		}
		start()
		for i := 0; i < b.N; i += len(jobs) {
			if _, err := q.AddBatch(ctx, jobs[:min(len(jobs), b.N-i)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkClaimComplete claims one job and completes it; the jobs are
// added before the timer starts.
func BenchmarkClaimComplete(b *testing.B) {
	benchVerbs(b, func(b *testing.B, ctx context.Context, q *trafikey.Queue, start func()) {
		preAddBench(b, ctx, q, b.N)
		start()
		for range b.N {
			jobs, err := q.Claim(ctx, time.Minute, 1)
			if err != nil {
				b.Fatal(err)
			}
			if len(jobs) != 1 {
				b.Fatalf("claimed %d jobs, want 1", len(jobs))
			}
			if err := jobs[0].Complete(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkClaim100Complete claims 100 jobs per call and completes each;
// an op is one job.
func BenchmarkClaim100Complete(b *testing.B) {
	benchVerbs(b, func(b *testing.B, ctx context.Context, q *trafikey.Queue, start func()) {
		preAddBench(b, ctx, q, b.N)
		start()
		for done := 0; done < b.N; {
			jobs, err := q.Claim(ctx, time.Minute, min(100, b.N-done))
			if err != nil {
				b.Fatal(err)
			}
			if len(jobs) == 0 {
				b.Fatalf("claimed no job after %d of %d", done, b.N)
			}
			for _, j := range jobs {
				if err := j.Complete(ctx); err != nil {
					b.Fatal(err)
				}
			}
			done += len(jobs)
		}
	})
}

func preAddBench(b *testing.B, ctx context.Context, q *trafikey.Queue, n int) {
	b.Helper()
	jobs := make([]trafikey.JobSpec, 0, trafikey.MaxBatch)
	for added := 0; added < n; added += len(jobs) {
		jobs = jobs[:0]
		for range min(trafikey.MaxBatch, n-added) {
			jobs = append(jobs, trafikey.JobSpec{Payload: stampPayload(defaultPayload)})
		}
		if _, err := q.AddBatch(ctx, jobs); err != nil {
			b.Fatal(err)
		}
	}
}

// benchVerbs runs body once per executor, each on an emptied server, and
// reports the server's cost per op. body calls start when its setup is done:
// the timer and the server's counters start there.
func benchVerbs(b *testing.B, body func(b *testing.B, ctx context.Context, q *trafikey.Queue, start func())) {
	srv := valkeytest.Start(b, valkeyserver.Options{Module: valkeytest.ModulePath(b)})
	client := valkeytest.Client(b, srv)
	ctx := context.Background()
	for _, ex := range []struct {
		name trafikey.Executor
		cmd  func(name string) bool
	}{
		{trafikey.ExecutorNative, func(n string) bool { return strings.HasPrefix(n, "emq.") }},
		{trafikey.ExecutorLua, func(n string) bool { return n == "evalsha" || n == "eval" }},
	} {
		b.Run(string(ex.name), func(b *testing.B) {
			b.StopTimer()
			valkeytest.Do(b, srv, "FLUSHALL", "SYNC")
			q, err := trafikey.Open(ctx, client, benchQueue, &trafikey.QueueOptions{Executor: ex.name})
			if err != nil {
				b.Fatal(err)
			}
			// Load the scripts (Lua) before measuring.
			if _, err := q.Stats(ctx); err != nil {
				b.Fatal(err)
			}
			var cpu0 float64
			started := false
			body(b, ctx, q, func() {
				valkeytest.Do(b, srv, "CONFIG", "RESETSTAT")
				cpu0 = serverCPU(b, srv)
				started = true
				b.ResetTimer()
				b.StartTimer()
			})
			b.StopTimer()
			if !started {
				b.Fatal("benchmark body did not call start")
			}
			cpu := serverCPU(b, srv) - cpu0
			text, _ := valkeytest.Do(b, srv, "INFO", "commandstats").(string)
			var usec int64
			for name, st := range parseCommandStats(text) {
				if ex.cmd(name) {
					usec += st.Usec
				}
			}
			b.ReportMetric(float64(usec)/float64(b.N), "server-µs/op")
			b.ReportMetric(cpu*1e6/float64(b.N), "server-cpu-µs/op")
		})
	}
}

func serverCPU(b *testing.B, srv *valkeyserver.Server) float64 {
	b.Helper()
	text, _ := valkeytest.Do(b, srv, "INFO", "cpu").(string)
	user, _ := strconv.ParseFloat(valkeyserver.InfoField(text, "used_cpu_user"), 64)
	sys, _ := strconv.ParseFloat(valkeyserver.InfoField(text, "used_cpu_sys"), 64)
	return user + sys
}
