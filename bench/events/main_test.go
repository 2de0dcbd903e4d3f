package main

import (
	"context"
	"testing"
	"time"
)

// TestSmall runs the benchmark at its small sizes, one round: it fails
// unless the subscriber received every job's added, claimed and completed
// events and every cost run added and completed every job. It never looks
// at a speed.
func TestSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs both executors on a server for seconds; the full run (go test ./bench/..., as scripts/test.sh runs it) covers it")
	}
	cfg := config{rounds: 1, rate: 500, steady: 500 * time.Millisecond, producers: 10, workers: 20, costJobs: 500, maxLen: 10_000, small: true}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}

// TestSmallKinds runs the -kinds variant at small sizes, one round: it
// fails unless every variant completed every job and, with events on, the
// last event carried the kind exactly when the jobs had one.
func TestSmallKinds(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs both executors on a server for seconds; the full run (go test ./bench/..., as scripts/test.sh runs it) covers it")
	}
	cfg := config{rounds: 1, workers: 20, costJobs: 500, maxLen: 10_000, small: true, kinds: true}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}
