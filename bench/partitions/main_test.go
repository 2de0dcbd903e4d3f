package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/valkeytest"
)

// TestSmall runs every measurement at small sizes for one round on an
// unpartitioned queue and queues of 3 partitions: it fails unless each cost
// run's partitions counted every job it added or completed (on the
// 3-primary cluster and on one primary) and the queues sharded by hand had
// jobs on every primary, the balance run
// of claims filled every partition, each scaling run
// completed every job, the rate run's workers claimed jobs with no partition
// running dry, and the idle worker's calls reached the primaries. It never
// looks at a speed or at how close a figure comes to its target.
func TestSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts three clusters and runs for half a minute; the full run (go test ./bench/..., as scripts/test.sh runs it) covers it")
	}
	cfg := config{
		rounds: 1, executor: "native", parts: []string{"cost", "scale", "rate", "idle"},
		partitions: []int{1, 3}, jobs: 300, batchJobs: 1000, producers: 8, batch: 100, workers: 20,
		scaleParts: 3, scaleJobs: 1000, scaleWorks: 2, rateParts: 3, rateLimit: 300, rateWorker: 2, rateFor: 2 * time.Second,
		idleParts: 3, idleFor: time.Second, module: valkeytest.ModulePath(t),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := run(ctx, cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range workloads {
		want := cfg.jobs
		if w == "batch" {
			want = cfg.batchJobs
		}
		// counted checks a cost run's jobs and returns on how many
		// primaries they were
		counted := func(what string, runs []costRun, primaries int) int {
			t.Helper()
			if len(runs) != 1 {
				t.Fatalf("%s: %d runs", what, len(runs))
			}
			if len(runs[0].jobs) != primaries || len(runs[0].us) != primaries {
				t.Fatalf("%s: figures of %d primaries, want %d: %+v", what, len(runs[0].jobs), primaries, runs[0])
			}
			got, shards := 0, 0
			for _, j := range runs[0].jobs {
				got += j
				if j > 0 {
					shards++
				}
			}
			if got != want {
				t.Errorf("%s: the primaries' partitions counted %d of %d jobs", what, got, want)
			}
			return shards
		}
		for _, n := range cfg.partitions {
			what := fmt.Sprintf("%s, %d partitions", w, n)
			if shards := counted(what, r.cost[costKey(w, n)], 3); n == 1 && shards != 1 {
				t.Errorf("%s: an unpartitioned queue's jobs on %d primaries", what, shards)
			}
			counted(what+" on one primary", r.cost[oneKey(w, n)], 1)
		}
		if shards := counted(w+", by hand", r.cost[handKey(w)], 3); shards != 3 {
			t.Errorf("%s, by hand: jobs on %d primaries, want a queue on each of 3", w, shards)
		}
	}
	if len(r.claims[3]) != 1 {
		t.Errorf("balance runs of claims over 3 partitions: %+v", r.claims[3])
	}
	for _, p := range []int{1, 2} {
		if len(r.scale[p]) != 1 || len(r.scale[p][0].serverCPU) != p {
			t.Errorf("scaling on %d primaries: %+v", p, r.scale[p])
		}
	}
	if len(r.rate) != 1 || len(r.rate[0].windows) != 2 {
		t.Fatalf("rate runs: %+v", r.rate)
	}
	if claimed := r.rate[0].windows[0] + r.rate[0].windows[1]; claimed == 0 {
		t.Error("the rate run's workers claimed no job")
	}
	if len(r.idle) != 1 || r.idle[0].perSec <= 0 {
		t.Errorf("idle runs: %+v", r.idle)
	}
}

// TestRateFigures checks the counting of claims in whole seconds and in a
// second sliding over them.
func TestRateFigures(t *testing.T) {
	ms := time.Millisecond
	claims := []claimed{{0, 5}, {900 * ms, 3}, {1100 * ms, 4}, {1950 * ms, 2}, {2000 * ms, 7}, {2500 * ms, 1}, {3000 * ms, 9}}
	rr := rateFigures(claims, 3)
	if want := []int{8, 6, 8}; !slices.Equal(rr.windows, want) {
		t.Errorf("windows %v, want %v", rr.windows, want)
	}
	// 1100, 1950 and 2000 ms fall within a second (2500 ms does not with
	// 1100; 900 and 1100 make 7)
	if rr.sliding != 13 {
		t.Errorf("most in any second %d, want 13", rr.sliding)
	}
}

// TestMostInSpan checks the count of rate log entries in a span of the
// servers' clock: above the span's start, up to its end.
func TestMostInSpan(t *testing.T) {
	entries := []logEntry{{2000, 4}, {1000, 5}, {1999.5, 3}, {3000, 2}, {2999, 1}}
	// 1000 and 1999.5 make 8, as do 1999.5, 2000 and 2999 (1000 left the
	// span at 2000); 2000 leaves it at 3000
	if got := mostInSpan(entries, time.Second); got != 8 {
		t.Errorf("most in a second %d, want 8", got)
	}
}
