package main

import (
	"context"
	"testing"
	"time"
)

// TestSmall runs every mode at a small rate for one round: it fails unless
// each mode timed every operation it offered (the handoff's consumers
// popped and acknowledged every pushed value) without an error reply. It
// never looks at a speed.
func TestSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server and runs for seconds")
	}
	cfg := config{rate: 200, steady: 500 * time.Millisecond, producers: 10, workers: 20, rounds: 1, modes: []string{"ping", "setget", "handoff"}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}
