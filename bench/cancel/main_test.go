package main

import (
	"context"
	"testing"
	"time"
)

// TestSmall runs the benchmark at small sizes, one round: it fails unless
// every cancel ended its running handler's context with cause
// ErrCancelled and the worker counted every job cancelled. It never looks
// at a speed.
func TestSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs both executors on a server; the full run (go test ./bench/..., as scripts/test.sh runs it) covers it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := run(ctx, 50, 1, 5, false); err != nil {
		t.Fatal(err)
	}
}
