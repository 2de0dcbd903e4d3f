package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/repo"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// TestSmoke runs the harness in smoke mode (300 jobs per workload, one
// round) and checks that every system ran every workload and processed
// every job. It never looks at a speed. BullMQ is left out only when node is
// not installed.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the smoke runs every system on every workload, for a minute and more; the full run (go test ./bench/..., as scripts/test.sh runs it) covers it")
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
			if !runs(s, w) {
				for _, rec := range res.Records {
					if rec.System == s && rec.Workload == w.ID {
						t.Errorf("%s ran %s, which its setting does not change", s, w.ID)
					}
				}
				continue
			}
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
				if peer := slices.Contains(peerSystems, s); rec.Module == peer {
					t.Errorf("%s %s: ran on the server with the module: %v", s, w.ID, rec.Module)
				}
				checkAddCalls(t, rec, w)
			}
			if !ran {
				t.Errorf("%s did not run %s", s, w.ID)
			}
		}
	}
}

// checkAddCalls checks the rows whose single adds are one call per job:
// trafikey with coalescing off sends one EMQ.ADD per job, and the floor
// one HINCRBY meta seq and one HINCRBY stats added per job.
func checkAddCalls(t *testing.T, rec *RunRecord, w Workload) {
	t.Helper()
	if w.Kind != "add" {
		return
	}
	jobs := int64(w.Jobs)
	switch rec.System {
	case sysNativeSingle:
		if got := rec.Cmds["emq.add"].Calls; got != jobs {
			t.Errorf("%s: %d EMQ.ADD calls for %d jobs", rec.System, got, jobs)
		}
	case sysFloor:
		if got := rec.Cmds["hincrby"].Calls; got != 2*jobs {
			t.Errorf("%s: %d HINCRBY calls for %d jobs, want two per job", rec.System, got, jobs)
		}
	}
}

// TestReportKeepsFeatureSections checks that a new report keeps the
// hand-written part of the file it replaces, found by the start of its
// marker whatever benchmarks the marker lists, and that docs/BENCHMARKS.md
// has the marker as the harness spells it.
func TestReportKeepsFeatureSections(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), featureMarker) {
		t.Errorf("docs/BENCHMARKS.md lacks the marker %q", featureMarker)
	}
	out := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	kept := featureMarkerStart + " an older list -->\n\n## By hand\n\nkept text\n"
	if err := os.WriteFile(out, []byte("# old generated part\n\n"+kept), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseFlags([]string{"-smoke", "-systems", "native", "-workloads", "add"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Root, cfg.Out = root, out
	res := &Results{Cfg: cfg, Workloads: cfg.workloads(), Systems: cfg.Systems}
	if err := res.write(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(got), "\n"+kept) || strings.Contains(string(got), "old generated part") {
		t.Errorf("the new report did not replace the generated part and keep the rest:\n%s", got)
	}
}
