package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/valkeytest"
)

// TestSmoke runs the harness in smoke mode (300 jobs per workload, one
// round) and checks that every system ran every workload and processed
// every job. It never looks at a speed. BullMQ is left out only when node is
// not installed.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("the smoke runs every system on every workload; skipped with -short")
	}
	cfg, err := parseFlags([]string{"-smoke", "-pin=false", "-progress=false"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Module = valkeytest.ModulePath(t)
	if !nodeAvailable() {
		t.Log("node is not on PATH: BullMQ is left out of the smoke")
		cfg.Systems = slices.DeleteFunc(cfg.Systems, func(s string) bool { return s == sysBullMQ })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := run(ctx, cfg)
	if res == nil {
		t.Fatalf("the harness did not start: %v", err)
	}
	t.Log(res.summaryText())
	if err != nil {
		t.Errorf("harness: %v", err)
	}
	for _, w := range res.Workloads {
		for _, s := range cfg.Systems {
			var ran bool
			for _, rec := range res.Records {
				if rec.System != s || rec.Workload != w.ID {
					continue
				}
				ran = true
				if rec.Err != "" {
					t.Errorf("%s %s: %s", s, w.ID, rec.Err)
					continue
				}
				if w.Adds() && rec.Added != w.Jobs {
					t.Errorf("%s %s: added %d of %d jobs", s, w.ID, rec.Added, w.Jobs)
				}
				if w.Processes() && rec.Processed != w.Jobs {
					t.Errorf("%s %s: processed %d of %d jobs", s, w.ID, rec.Processed, w.Jobs)
				}
				if rec.Elapsed <= 0 {
					t.Errorf("%s %s: no measured time", s, w.ID)
				}
			}
			if !ran {
				t.Errorf("%s did not run %s", s, w.ID)
			}
		}
	}
}
