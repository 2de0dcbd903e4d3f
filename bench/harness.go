package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/repo"
)

// RunRecord is one run: one system, one workload, one round.
type RunRecord struct {
	Round     int                `json:"round"`
	System    string             `json:"system"`
	Workload  string             `json:"workload"`
	Jobs      int                `json:"jobs"`
	Added     int                `json:"added"`
	Processed int                `json:"processed"`
	Pending   int64              `json:"pending"`
	Elapsed   time.Duration      `json:"elapsed_ns"`
	ClientCPU time.Duration      `json:"client_cpu_ns"`
	ServerCPU time.Duration      `json:"server_cpu_ns"`
	MemDelta  int64              `json:"used_memory_delta"`
	DataDelta int64              `json:"data_memory_delta"`
	Lat       LatSummary         `json:"lat_us"`
	Cmds      map[string]CmdStat `json:"commandstats"`
	Module    bool               `json:"module_loaded"` // the run's server has the trafikey module
	Err       string             `json:"error,omitempty"`
}

// JobsPerSec is the run's throughput: jobs added (add, batch) or completed
// (process, lifecycle) per second of measured wall time.
func (r *RunRecord) JobsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Jobs) / r.Elapsed.Seconds()
}

// Results is everything one invocation measured.
type Results struct {
	Cfg       *Config
	Workloads []Workload
	Systems   []string
	Records   []*RunRecord
	Env       envInfo
	Started   time.Time
	Took      time.Duration
}

// systemFactory makes a fresh System for one run.
type systemFactory func(env Env) System

func factories() map[string]systemFactory {
	return map[string]systemFactory{
		sysNative: func(env Env) System { return newGoSystem(env, openTrafikey(executorNative, trafikey.QueueOptions{})) },
		sysNativeSingle: func(env Env) System {
			return newGoSystem(env, openTrafikey(executorNative, trafikey.QueueOptions{SeparateAdds: true}))
		},
		sysLua:          func(env Env) System { return newGoSystem(env, openTrafikey(executorLua, trafikey.QueueOptions{})) },
		sysAsynq:        func(env Env) System { return newGoSystem(env, openAsynq(0)) },
		sysAsynq10:      func(env Env) System { return newGoSystem(env, openAsynq(10*time.Millisecond)) },
		sysBullMQ:       newBullMQ,
		sysFloor:        func(env Env) System { return newGoSystem(env, openFloor(false)) },
		sysFloorGrouped: func(env Env) System { return newGoSystem(env, openFloor(true)) },
	}
}

// benchQueue is the queue name every system uses.
const benchQueue = "bench"

// run runs the whole benchmark: starts the server, runs every round, and
// writes the report. It returns the results even when some runs failed, and
// an error naming the failures.
func run(ctx context.Context, cfg *Config) (*Results, error) {
	if cfg.Root == "" {
		root, err := repo.Root()
		if err != nil {
			return nil, err
		}
		cfg.Root = root
	}
	res := &Results{Cfg: cfg, Workloads: cfg.workloads(), Systems: cfg.Systems, Started: time.Now()}
	pinNote, pinned := pinSelf(cfg.Pin)

	module := cfg.Module
	if module == "" {
		if _, err := os.Stat(filepath.Join(cfg.Root, "module")); err == nil || slices.Contains(cfg.Systems, sysNative) {
			logf(cfg, "building the trafikey module …")
			path, err := buildModule(ctx, cfg.Root)
			if err != nil {
				return nil, err
			}
			module = path
		}
	}
	if slices.Contains(cfg.Systems, sysBullMQ) {
		if !nodeAvailable() {
			return nil, errors.New("bullmq needs node on PATH (or leave bullmq out of -systems)")
		}
		if err := ensureNodeModules(ctx, bullmqDir(cfg.Root)); err != nil {
			return nil, err
		}
	}

	// trafikey and the floor run on the server with the module, the peers
	// on one without it: the same options otherwise, so the same flags.
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	srv, err := startServer(startCtx, module)
	cancel()
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	peerSrv := srv
	if slices.ContainsFunc(cfg.Systems, func(s string) bool { return slices.Contains(peerSystems, s) }) {
		startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		peerSrv, err = startServer(startCtx, "")
		cancel()
		if err != nil {
			return nil, err
		}
		defer peerSrv.Stop()
	}
	if pinned {
		for _, s := range []*benchServer{srv, peerSrv} {
			if err := pinServer(s.srv.PID()); err != nil {
				return nil, err
			}
		}
	}
	res.Env = collectEnv(ctx, cfg, srv, module, pinNote)

	var bar *progressbar.ProgressBar
	total := 0
	for _, w := range res.Workloads {
		for _, s := range cfg.Systems {
			if runs(s, w) {
				total += cfg.Rounds
			}
		}
	}
	if cfg.Progress {
		bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription("starting"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionShowDescriptionAtLineEnd(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(os.Stderr) }),
		)
	}
	newSystem := factories()
	for round := range cfg.Rounds {
		for _, w := range res.Workloads {
			for _, name := range rotate(cfg.Systems, round) {
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				if !runs(name, w) {
					continue
				}
				srv := srv
				if slices.Contains(peerSystems, name) {
					srv = peerSrv
				}
				env := Env{Addr: srv.Addr(), Root: cfg.Root, Queue: benchQueue}
				if bar != nil {
					bar.Describe(fmt.Sprintf("round %d/%d · %s · %s", round+1, cfg.Rounds, w.ID, name))
				}
				rec := runOne(ctx, cfg, srv, newSystem[name](env), name, w, round)
				res.Records = append(res.Records, rec)
				if rec.Err != "" {
					logf(cfg, "%s %s round %d: %s", name, w.ID, round+1, rec.Err)
				}
				if bar != nil {
					_ = bar.Add(1)
				}
			}
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	for _, s := range []*benchServer{srv, peerSrv} {
		if err := s.flush(ctx); err != nil {
			return res, err
		}
	}
	res.Took = time.Since(res.Started)
	res.Env.LoadEnd = loadAvg()
	if err := res.write(); err != nil {
		return res, err
	}
	return res, res.failures()
}

// rotate returns the systems starting at index round, so no system always
// runs first (or last) in its workload.
func rotate(systems []string, round int) []string {
	k := round % len(systems)
	return append(slices.Clone(systems[k:]), systems[:k]...)
}

// runOne runs one system on one workload on a flushed server and checks
// that every job was added and processed.
func runOne(ctx context.Context, cfg *Config, srv *benchServer, sys System, name string, w Workload, round int) *RunRecord {
	rec := &RunRecord{Round: round + 1, System: name, Workload: w.ID, Jobs: w.Jobs, Pending: -1, Module: srv.module}
	fail := func(format string, args ...any) *RunRecord {
		msg := fmt.Sprintf(format, args...)
		if rec.Err == "" {
			rec.Err = msg
		} else {
			rec.Err += "; " + msg
		}
		return rec
	}
	closed := false
	closeSys := func() {
		if !closed {
			closed = true
			if err := sys.Close(); err != nil {
				fail("close: %v", err)
			}
		}
	}
	defer closeSys()
	if err := srv.flush(ctx); err != nil {
		return fail("FLUSHALL: %v", err)
	}
	// The previous run's clients may still be disconnecting, and its
	// per-command latency histograms (latency-tracking) are held until
	// CONFIG RESETSTAT: both would count in used_memory.
	if err := srv.waitIdle(ctx); err != nil {
		return fail("%v", err)
	}
	if err := srv.resetStats(ctx); err != nil {
		return fail("CONFIG RESETSTAT: %v", err)
	}
	empty, err := srv.snap(ctx)
	if err != nil {
		return fail("INFO: %v", err)
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.RunTimeout)
	defer cancel()
	if err := sys.Prepare(rctx, w); err != nil {
		return fail("prepare: %v", err)
	}
	if err := srv.resetStats(ctx); err != nil {
		return fail("CONFIG RESETSTAT: %v", err)
	}
	before, err := srv.snap(ctx)
	if err != nil {
		return fail("INFO: %v", err)
	}
	out, runErr := sys.Run(rctx, w)
	after, err := srv.snap(ctx)
	if err != nil {
		return fail("INFO: %v", err)
	}
	cmds, err := srv.commandStats(ctx)
	if err != nil {
		return fail("INFO commandstats: %v", err)
	}
	rec.Added, rec.Processed, rec.Pending = out.Added, out.Processed, out.Pending
	rec.Elapsed, rec.ClientCPU, rec.Lat = out.Elapsed, out.ClientCPU, out.Lat
	rec.ServerCPU = time.Duration((after.cpuSeconds - before.cpuSeconds) * float64(time.Second))
	rec.Cmds = cmds
	if runErr != nil {
		return fail("%v", runErr)
	}
	if w.Kind == "add" {
		// Memory: the dataset the jobs left, once the system's clients are
		// gone, against the empty server.
		closeSys()
		if err := srv.waitIdle(ctx); err != nil {
			return fail("%v", err)
		}
		if err := srv.resetStats(ctx); err != nil {
			return fail("CONFIG RESETSTAT: %v", err)
		}
		held, err := srv.snap(ctx)
		if err != nil {
			return fail("INFO: %v", err)
		}
		rec.MemDelta = held.usedMemory - empty.usedMemory
		rec.DataDelta = held.dataMemory - empty.dataMemory
	}
	if w.Adds() && out.Added != w.Jobs {
		fail("added %d of %d jobs", out.Added, w.Jobs)
	}
	if (w.Kind == "add" || w.Kind == "batch") && out.Pending >= 0 && out.Pending != int64(w.Jobs) {
		fail("%d jobs pending after adding %d", out.Pending, w.Jobs)
	}
	if w.Processes() && out.Processed != w.Jobs {
		fail("processed %d of %d jobs", out.Processed, w.Jobs)
	}
	if w.Lifecycle() && out.Lat.N != w.Jobs {
		fail("latency of %d of %d jobs recorded", out.Lat.N, w.Jobs)
	}
	return rec
}

// failures names the failed runs, and the systems that never completed a
// run.
func (r *Results) failures() error {
	var msgs []string
	ok := map[string]bool{}
	for _, rec := range r.Records {
		if rec.Err != "" {
			msgs = append(msgs, fmt.Sprintf("%s %s round %d: %s", rec.System, rec.Workload, rec.Round, rec.Err))
		} else {
			ok[rec.System] = true
		}
	}
	for _, s := range r.Systems {
		if !ok[s] {
			msgs = append(msgs, s+": no successful run")
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%d problem(s):\n  %s", len(msgs), strings.Join(msgs, "\n  "))
}

// write writes the report, the chart and the raw JSON as configured.
func (r *Results) write() error {
	path := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(r.Cfg.Root, p)
	}
	if p := path(r.Cfg.JSON); p != "" {
		b, err := json.MarshalIndent(r.Records, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	if p := path(r.Cfg.SVG); p != "" {
		if err := os.WriteFile(p, renderSVG(r), 0o644); err != nil {
			return err
		}
	}
	if p := path(r.Cfg.Out); p != "" {
		svgRel := ""
		if s := path(r.Cfg.SVG); s != "" {
			if rel, err := filepath.Rel(filepath.Dir(p), s); err == nil {
				svgRel = filepath.ToSlash(rel)
			}
		}
		// The sections of the feature benchmarks (bench/lanes, bench/flows,
		// bench/ops, bench/schedules, bench/events) follow the harness's
		// report; a new report keeps them. The marker is found by its start,
		// so its list of benchmarks can change without losing them.
		kept := ""
		if old, err := os.ReadFile(p); err == nil {
			if i := strings.Index(string(old), featureMarkerStart); i >= 0 {
				kept = "\n" + string(old[i:])
			}
		}
		if err := os.WriteFile(p, []byte(renderMarkdown(r, svgRel)+kept), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// featureMarkerStart starts the part of docs/BENCHMARKS.md that the
// harness does not write: the comment featureMarker, whatever list of
// benchmarks it names.
const featureMarkerStart = "<!-- feature benchmarks:"

// featureMarker is the comment as docs/BENCHMARKS.md has it.
const featureMarker = featureMarkerStart + " written by hand from bench/lanes, bench/flows, bench/ops, bench/schedules and bench/events -->"

func logf(cfg *Config, format string, args ...any) {
	var w io.Writer = os.Stderr
	fmt.Fprintf(w, "\n"+format+"\n", args...)
}
