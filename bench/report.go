package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// displayName is how the report names a system.
var displayName = map[string]string{
	sysNative:       "trafikey native",
	sysNativeSingle: "trafikey native, 1 ADD per job",
	sysLua:          "trafikey Lua",
	sysAsynq:        "asynq",
	sysAsynq10:      "asynq, 10 ms poll",
	sysBullMQ:       "BullMQ",
	sysFloor:        "floor (primitives)",
	sysFloorGrouped: "floor, adds grouped",
}

// targets are the trafikey targets of docs/DESIGN ("Targets"), by summary row.
var targets = map[string]string{
	"add":         "≥ 100k/s",
	"batch":       "≥ 250k/s",
	"process-100": "≥ 80k/s",
	"flat":        "≥ 60k/s",
	"steady":      "p50 ≤ 1 ms, p99 ≤ 5 ms",
	"memory":      "≤ 200 B",
}

func fmtRate(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// fmtUS formats a duration given in microseconds.
func fmtUS(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.2f s", us/1e6)
	case us >= 1e4:
		return fmt.Sprintf("%.0f ms", us/1e3)
	case us >= 1e3:
		return fmt.Sprintf("%.1f ms", us/1e3)
	default:
		return fmt.Sprintf("%.0f µs", us)
	}
}

func fmtF(v float64) string {
	switch {
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// spread formats an aggregate as "median (min–max)", or just the median for
// a single round, or "—" when nothing was measured.
func spread(a Agg, f func(float64) string) string {
	if a.N == 0 {
		return "—"
	}
	if a.N == 1 {
		return f(a.Med)
	}
	return fmt.Sprintf("%s (%s–%s)", f(a.Med), f(a.Min), f(a.Max))
}

func (r *Results) hasWorkload(id string) bool {
	return slices.ContainsFunc(r.Workloads, func(w Workload) bool { return w.ID == id })
}

// processTop is the process workload with the highest concurrency.
func (r *Results) processTop() string {
	best, id := -1, ""
	for _, w := range r.Workloads {
		if w.Kind == "process" && w.Concurrency > best {
			best, id = w.Concurrency, w.ID
		}
	}
	return id
}

// summaryTable builds the headline table: one row per measure, one column
// per system.
func (r *Results) summaryTable() string {
	var b strings.Builder
	b.WriteString("| workload |")
	for _, s := range r.Systems {
		b.WriteString(" " + displayName[s] + " |")
	}
	b.WriteString(" trafikey target |\n|---|")
	for range r.Systems {
		b.WriteString("---:|")
	}
	b.WriteString("---|\n")
	line := func(label, target string, val func(c *Cell) string, workload string) {
		b.WriteString("| " + label + " |")
		for _, s := range r.Systems {
			b.WriteString(" " + val(r.cell(s, workload)) + " |")
		}
		if target == "" {
			target = "—"
		}
		b.WriteString(" " + target + " |\n")
	}
	rate := func(c *Cell) string {
		if c.Rate.N == 0 {
			return "—"
		}
		return spread(c.Rate, fmtRate)
	}
	latency := func(c *Cell) string {
		if c.P50.N == 0 {
			return "—"
		}
		return "p50 " + spread(c.P50, fmtUS) + ", p99 " + spread(c.P99, fmtUS)
	}
	for _, w := range r.Workloads {
		switch w.Kind {
		case "add":
			line("add one at a time, concurrent producers (jobs/s)", targets["add"], rate, w.ID)
		case "batch":
			line("batch add (jobs/s)", targets["batch"], rate, w.ID)
		case "process":
			line(fmt.Sprintf("process pre-added jobs, concurrency %d (jobs/s)", w.Concurrency), targets[w.ID], rate, w.ID)
		case "flat":
			line("full lifecycle, producers and workers together (jobs/s)", targets["flat"], rate, w.ID)
			line("add→complete latency of the full lifecycle, flat out", "", latency, w.ID)
		case "steady":
			line(fmt.Sprintf("add→complete latency at a steady %d jobs/s", w.Rate), targets["steady"], latency, w.ID)
		}
	}
	if r.hasWorkload("add") {
		line("Valkey memory per pending job, beyond its payload", targets["memory"], func(c *Cell) string {
			return spread(c.MemPerJob, func(v float64) string { return fmt.Sprintf("%.0f B", v) })
		}, "add")
	}
	for _, id := range []string{"add", r.processTop(), "flat"} {
		if id == "" || !r.hasWorkload(id) {
			continue
		}
		line("server CPU µs per job, "+id, "", func(c *Cell) string { return spread(c.ServerUS, fmtF) }, id)
	}
	return b.String()
}

// summaryText is what the command prints when it ends.
func (r *Results) summaryText() string {
	if len(r.Records) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s — %d round(s), %d run(s) in %s\n\n", r.Cfg.Command, r.Cfg.Rounds, len(r.Records), r.Took.Round(time.Second))
	b.WriteString(r.summaryTable())
	return b.String()
}

func renderMarkdown(r *Results, svgRel string) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	cfg := r.Cfg
	e := r.Env

	p("# Benchmarks\n\n")
	p("trafikey's native executor (the Valkey module) and its Lua executor, against asynq and BullMQ (on a\n")
	p("second valkey-server with the same flags and no module), side by side; and against the **floor**: the\n")
	p("primitive commands each trafikey verb consists of, issued directly by the same client. Every\n")
	p("number below was measured by the harness in `bench/` (`go run ./bench`), which writes this file and\n")
	p("[`bench.svg`](bench.svg).\n\n")

	if cfg.Smoke || cfg.Trial {
		p("> **Trial run.** Reduced sizes (%d round(s), %d jobs per workload, steady %s; the command is\n", cfg.Rounds, cfg.Jobs, cfg.Steady)
		p("> below), not the full benchmark")
		if busy(e) {
			p(", on a machine busy with other work (load average %s at the start, %s at the end, on %d CPUs)", orDash(e.LoadStart), orDash(e.LoadEnd), e.CPUs)
		}
		p(".\n> These numbers show the harness working; they are not the figures to quote. The full run is\n")
		p("> `scripts/bench.sh` (or `go run ./bench`) on an otherwise idle machine.\n\n")
	} else if busy(e) {
		p("> **Note.** Other work competed for the CPUs during this run (load average %s at the start, %s at\n", orDash(e.LoadStart), orDash(e.LoadEnd))
		p("> the end, on %d CPUs); its numbers are noisier than an idle machine's.\n\n", e.CPUs)
	}

	p("## Running it\n\n")
	p("```sh\n")
	p("scripts/bench.sh                # the full benchmark: 3 interleaved rounds, 100k jobs per workload\n")
	p("go run ./bench                  # the same\n")
	p("go run ./bench -smoke           # seconds: every system runs every workload (300 jobs) and must process every job\n")
	p("go test ./bench                 # the smoke as a Go test\n")
	p("go test -run '^$' -bench . ./bench   # per-verb Go benchmarks, native vs Lua (server µs per call as a metric)\n")
	p("go run ./bench -h               # sizes, systems, workloads, outputs\n")
	p("```\n\n")
	p("The harness needs `valkey-server` (8.0) on PATH, Node 20+ for BullMQ (it runs `npm ci` in\n")
	p("`bench/bullmq` when `node_modules` is missing), and builds the module from `./module` unless\n")
	p("`-module` names a built one.\n\n")

	p("## This run\n\n")
	p("- Command: `%s` (started %s, took %s)\n", cfg.Command, r.Started.UTC().Format("2006-01-02 15:04 UTC"), r.Took.Round(time.Second))
	p("- Machine: %d CPUs, %s, %s RAM, %s\n", e.CPUs, orDash(e.CPUModel), orDash(e.MemTotal), orDash(e.Kernel))
	p("- CPU pinning: %s\n", e.Pinning)
	p("- Load average (1 min): %s at the start, %s at the end\n", orDash(e.LoadStart), orDash(e.LoadEnd))
	p("- Versions: Go %s · Valkey %s (trafikey module %s) · valkey-go %s · asynq %s (go-redis %s) · Node %s · BullMQ %s (ioredis %s) · trafikey %s\n",
		strings.TrimPrefix(e.Go, "go"), orDash(e.Valkey), e.Module, orDash(e.ValkeyGo), orDash(e.Asynq), orDash(e.GoRedis),
		orDash(strings.TrimPrefix(e.Node, "v")), orDash(e.BullMQ), orDash(e.IORedis), orDash(e.Commit))
	var left []string
	for _, s := range allSystems {
		if !slices.Contains(r.Systems, s) {
			left = append(left, displayName[s])
		}
	}
	names := make([]string, len(r.Systems))
	for i, s := range r.Systems {
		names[i] = displayName[s]
	}
	p("- Systems: %s", strings.Join(names, "; ")) // a row's name may hold a comma
	if len(left) > 0 {
		p(" (not in this run: %s)", strings.Join(left, "; "))
	}
	p("\n")
	p("- Sizes: %d jobs per workload, payload %d bytes, %d producers, batches of %d, process concurrency %s, lifecycle concurrency %d, steady rate %d jobs/s for %s; %d round(s)\n\n",
		cfg.Jobs, cfg.Payload, cfg.Producers, cfg.Batch, joinInts(cfg.Concurrency), cfg.Workers, cfg.Rate, cfg.Steady, cfg.Rounds)

	p("## Summary\n\n")
	p("Medians over %d round(s), and in parentheses the min–max. jobs/s counts jobs added (add workloads) or\n", cfg.Rounds)
	p("completed (the others) per second of measured wall time. The target column is trafikey's, from the\n")
	p("design brief. A variant row (1 ADD per job, 10 ms poll, adds grouped) runs only the workloads its\n")
	p("setting changes; — marks the others.\n\n")
	b.WriteString(r.summaryTable())
	p("\n")
	if svgRel != "" {
		p("![jobs/s per workload, server CPU per job and latency, per system](%s)\n\n", svgRel)
	}

	if fails := r.failedRuns(); len(fails) > 0 {
		p("## Failed runs\n\nThese runs are left out of every median.\n\n")
		for _, f := range fails {
			p("- %s\n", f)
		}
		p("\n")
	}

	p("## Per workload\n\n")
	p("Each cell is the median, and in parentheses the min–max, over the rounds. *server CPU* is the\n")
	p("server process's `used_cpu_user + used_cpu_sys` delta (`INFO cpu`) per job; *client CPU* that of\n")
	p("the load generator (this Go process, or the Node process for BullMQ) per job; *verb µs* the\n")
	p("`INFO commandstats` time of the queue's own commands per job (EMQ.* natively, EVALSHA for Lua,\n")
	p("every command for the floor).\n\n")
	for _, w := range r.Workloads {
		p("### %s\n\n", w.Title)
		lat := w.Lifecycle()
		p("| system | jobs/s | server CPU µs/job | client CPU µs/job | verb µs/job |")
		if lat {
			p(" p50 | p90 | p99 |")
		}
		p(" runs |\n|---|---:|---:|---:|---:|")
		if lat {
			p("---:|---:|---:|")
		}
		p("---:|\n")
		for _, s := range r.Systems {
			c := r.cell(s, w.ID)
			if c.Runs == 0 {
				continue // a variant that does not run this workload
			}
			p("| %s | %s | %s | %s | %s |", displayName[s], spread(c.Rate, fmtRate), spread(c.ServerUS, fmtF), spread(c.ClientUS, fmtF), spread(c.VerbUS, fmtF))
			if lat {
				p(" %s | %s | %s |", spread(c.P50, fmtUS), spread(c.P90, fmtUS), spread(c.P99, fmtUS))
			}
			p(" %d/%d |\n", c.Runs-c.Failed, c.Runs)
		}
		p("\n")
	}

	r.floorSection(&b)
	r.nativeVsLuaSection(&b)
	r.memorySection(&b)
	r.commandsSection(&b)
	methodSection(&b, r)
	return b.String()
}

func (r *Results) failedRuns() []string {
	var out []string
	for _, rec := range r.Records {
		if rec.Err != "" {
			out = append(out, fmt.Sprintf("%s, %s, round %d: %s", displayName[rec.System], rec.Workload, rec.Round, strings.ReplaceAll(rec.Err, "\n", " ")))
		}
	}
	return out
}

// floorOf is the floor row a system's workload is measured against: the
// grouped floor for trafikey's coalesced single adds, where it ran, and
// the floor (one add call per job, completions grouped) otherwise.
func (r *Results) floorOf(system, workload string) string {
	if (system == sysNative || system == sysLua) && r.cell(sysFloorGrouped, workload).ServerUS.N > 0 {
		return sysFloorGrouped
	}
	return sysFloor
}

// floorSection: server CPU per job of each system as a multiple of the floor's.
func (r *Results) floorSection(b *strings.Builder) {
	if !slices.Contains(r.Systems, sysFloor) {
		return
	}
	fmt.Fprintf(b, "## Distance from the floor\n\n")
	fmt.Fprintf(b, "Server CPU µs per job (`INFO cpu`), median (min–max), and the multiple of the floor's median: what\n")
	fmt.Fprintf(b, "each system costs the server for the same jobs, against the primitive commands alone. trafikey's\n")
	fmt.Fprintf(b, "coalesced rows (native, Lua) are set against *floor, adds grouped* where it ran (the add and\n")
	fmt.Fprintf(b, "lifecycle workloads: the same grouping of single adds), every other row against the floor, whose\n")
	fmt.Fprintf(b, "single adds are one add call per job. The floor is a floor on command work, not on networking: it\n")
	fmt.Fprintf(b, "needs more round trips than a verb (two per add call and per claim, one per group of completions), so\n")
	fmt.Fprintf(b, "where few jobs share a round trip (concurrency 1, the steady rate) its per-request cost can exceed a\n")
	fmt.Fprintf(b, "system's. asynq and BullMQ run on a server without the module.\n\n")
	fmt.Fprintf(b, "| workload |")
	for _, s := range r.Systems {
		fmt.Fprintf(b, " %s |", displayName[s])
	}
	fmt.Fprintf(b, "\n|---|")
	for range r.Systems {
		fmt.Fprintf(b, "---:|")
	}
	fmt.Fprintf(b, "\n")
	for _, w := range r.Workloads {
		fmt.Fprintf(b, "| %s |", w.ID)
		for _, s := range r.Systems {
			c := r.cell(s, w.ID).ServerUS
			floor := r.cell(r.floorOf(s, w.ID), w.ID).ServerUS
			switch {
			case c.N == 0:
				fmt.Fprintf(b, " — |")
			case s == sysFloor || s == sysFloorGrouped || floor.N == 0 || floor.Med <= 0:
				fmt.Fprintf(b, " %s |", spread(c, fmtF))
			default:
				fmt.Fprintf(b, " %s, %.1f× |", spread(c, fmtF), c.Med/floor.Med)
			}
		}
		fmt.Fprintf(b, "\n")
	}
	fmt.Fprintf(b, "\n")
}

// nativeVsLuaSection compares the two executors and the floor per verb mix.
func (r *Results) nativeVsLuaSection(b *strings.Builder) {
	if !slices.Contains(r.Systems, sysNative) || !slices.Contains(r.Systems, sysLua) {
		return
	}
	fmt.Fprintf(b, "## Native vs Lua, server µs per verb\n\n")
	fmt.Fprintf(b, "*verb µs/job*: `INFO commandstats` time of EMQ.* (native) and EVALSHA (Lua) per job; the add\n")
	fmt.Fprintf(b, "workloads run ADD only, the process workloads CLAIM + COMPLETEMANY. *floor µs/job*: the commandstats\n")
	fmt.Fprintf(b, "time of every command of the floor row they are set against (see *Distance from the floor*), the same\n")
	fmt.Fprintf(b, "dataset changes without the verbs' reads and checks. *server CPU µs/job*: the whole server process,\n")
	fmt.Fprintf(b, "networking included. Each cell is the median (min–max) over the rounds, each ratio the ratio of the\n")
	fmt.Fprintf(b, "medians. Target: native ≤ 0.5× Lua. The per-verb Go benchmarks (`go test -run '^$' -bench . ./bench`)\n")
	fmt.Fprintf(b, "give the same split per call.\n\n")
	fmt.Fprintf(b, "| workload | verbs | native verb µs/job | Lua verb µs/job | native/Lua | floor µs/job | native/floor | Lua/floor | native server CPU µs/job | Lua server CPU µs/job | native/Lua |\n")
	fmt.Fprintf(b, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, w := range r.Workloads {
		n, l := r.cell(sysNative, w.ID), r.cell(sysLua, w.ID)
		f := r.cell(r.floorOf(sysNative, w.ID), w.ID)
		verbs := "ADD"
		switch {
		case w.Kind == "process":
			verbs = "CLAIM + COMPLETEMANY"
		case w.Lifecycle():
			verbs = "ADD + CLAIM + COMPLETEMANY"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", w.ID, verbs,
			spread(n.VerbUS, fmtF), spread(l.VerbUS, fmtF), ratio(n.VerbUS, l.VerbUS),
			spread(f.VerbUS, fmtF), ratio(n.VerbUS, f.VerbUS), ratio(l.VerbUS, f.VerbUS),
			spread(n.ServerUS, fmtF), spread(l.ServerUS, fmtF), ratio(n.ServerUS, l.ServerUS))
	}
	fmt.Fprintf(b, "\n")
	r.perVerbSection(b)
}

// floorVerbCommands are the floor's commands of each verb (the floor's
// comment in sys_floor.go), in the workloads where that verb is the only
// one to issue them; HINCRBY is in all three and is left out, so a floor
// cell is a verb's floor without its counters.
var floorVerbCommands = map[string][]string{
	"add":          {"hset", "zadd"},
	"claim":        {"zpopmin", "bzpopmin", "hset", "zadd", "hget"},
	"completemany": {"zrem", "del"},
}

// perVerbSection splits the native verb time of each workload by verb,
// with the floor's commands for the same verb beside it.
func (r *Results) perVerbSection(b *strings.Builder) {
	type row struct{ workload, verb string }
	var rows []row
	// The lifecycle workloads are left out: there ADD and CLAIM issue the
	// same floor commands (HSET, ZADD), so the floor's cannot be split.
	for _, w := range r.Workloads {
		switch w.Kind {
		case "add", "batch":
			rows = append(rows, row{w.ID, "add"})
		case "process":
			rows = append(rows, row{w.ID, "claim"}, row{w.ID, "completemany"})
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "Per verb, natively: the `INFO commandstats` µs of each EMQ command per job, median (min–max), and\n")
	fmt.Fprintf(b, "beside it the floor's µs per job in the primitive commands of that verb (ADD: `HSET` + `ZADD`; CLAIM:\n")
	fmt.Fprintf(b, "`ZPOPMIN`/`BZPOPMIN` + `HSET` + `ZADD` + `HGET`; COMPLETEMANY: `ZREM` + `DEL`), in the workloads where\n")
	fmt.Fprintf(b, "no other verb issues them (the lifecycle workloads are left out). The floor's `HINCRBY` (sequence,\n")
	fmt.Fprintf(b, "counters, attempts) is in every verb and left out, so the floor column is a lower bound of each\n")
	fmt.Fprintf(b, "verb's floor, and the multiple an upper bound of its distance from it. The Lua executor's verbs\n")
	fmt.Fprintf(b, "are all EVALSHA to commandstats, so only the workloads' sums above split them from the floor.\n\n")
	fmt.Fprintf(b, "| workload | verb | native µs/job | floor µs/job (those commands) | native/floor |\n|---|---|---:|---:|---:|\n")
	for _, rw := range rows {
		n := r.perJob(sysNative, rw.workload, []string{"emq." + rw.verb})
		f := r.perJob(r.floorOf(sysNative, rw.workload), rw.workload, floorVerbCommands[rw.verb])
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", rw.workload, strings.ToUpper(rw.verb), spread(n, fmtF), spread(f, fmtF), ratio(n, f))
	}
	fmt.Fprintf(b, "\n")
}

func ratio(a, b Agg) string {
	if a.N == 0 || b.N == 0 || b.Med <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a.Med/b.Med)
}

func (r *Results) memorySection(b *strings.Builder) {
	if !r.hasWorkload("add") {
		return
	}
	fmt.Fprintf(b, "## Memory per pending job\n\n")
	fmt.Fprintf(b, "After workload (a), every job is pending. The harness closes the system's clients, waits until\n")
	fmt.Fprintf(b, "they are gone, and takes the `used_memory` delta against the flushed server before the run,\n")
	fmt.Fprintf(b, "without the deltas of client buffers (`mem_clients_normal`) and of the script cache\n")
	fmt.Fprintf(b, "(`used_memory_scripts`), divided by the jobs, minus the %d payload\n", r.Cfg.Payload)
	fmt.Fprintf(b, "bytes. BullMQ stores the payload as JSON (`{\"p\":\"…\"}`, 8 bytes more), which counts against it\n")
	fmt.Fprintf(b, "here; its capped event stream counts too. The last column is the raw `used_memory` delta per job.\n\n")
	fmt.Fprintf(b, "| system | bytes per pending job beyond the payload | used_memory delta per job |\n|---|---:|---:|\n")
	for _, s := range r.Systems {
		c := r.cell(s, "add")
		f := func(v float64) string { return fmt.Sprintf("%.0f B", v) }
		fmt.Fprintf(b, "| %s | %s | %s |\n", displayName[s], spread(c.MemPerJob, f), spread(c.UsedPerJob, f))
	}
	fmt.Fprintf(b, "\nWhat a row and a pending member each cost, and how far a leaner row of this key layout can go:\n")
	fmt.Fprintf(b, "[The targets not met](#the-targets-not-met-and-what-bounds-them).\n\n")
}

// commandsSection lists what each system asks of the server, per job.
func (r *Results) commandsSection(b *strings.Builder) {
	ids := []string{}
	for _, id := range []string{"add", "batch", r.processTop(), "steady", "flat"} {
		if id != "" && r.hasWorkload(id) && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	fmt.Fprintf(b, "## Commands per job\n\n")
	fmt.Fprintf(b, "From `INFO commandstats` (reset with `CONFIG RESETSTAT` before each run), summed over the rounds:\n")
	fmt.Fprintf(b, "the commands with the most server time, as calls per job, µs per call and µs per job. A\n")
	fmt.Fprintf(b, "command called by a script or a module command is listed under its own name as well, and its\n")
	fmt.Fprintf(b, "time is part of its caller's (EVALSHA, EMQ.*), so the rows of one system do not add up.\n\n")
	for _, id := range ids {
		fmt.Fprintf(b, "### %s\n\n| system | command | calls/job | µs/call | µs/job |\n|---|---|---:|---:|---:|\n", id)
		for _, s := range r.Systems {
			c := r.cell(s, id)
			if c.CmdJobs == 0 {
				continue
			}
			for _, name := range c.topCommands(8) {
				st := c.Cmds[name]
				perCall := 0.0
				if st.Calls > 0 {
					perCall = float64(st.Usec) / float64(st.Calls)
				}
				fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", displayName[s], strings.ToUpper(name),
					fmtF(float64(st.Calls)/float64(c.CmdJobs)), fmtF(perCall), fmtF(float64(st.Usec)/float64(c.CmdJobs)))
			}
		}
		fmt.Fprintf(b, "\n")
	}
}

func methodSection(b *strings.Builder, r *Results) {
	cfg := r.Cfg
	fmt.Fprintf(b, `## Method

**Two servers.** The harness starts two valkey-servers (%s) through `+"`internal/valkeyserver`"+`, with the
same options and so the same flags (no persistence, loopback): one with the trafikey module loaded,
where trafikey and the floor run, and one without it, where asynq and BullMQ run, so the peers' server
carries no module. Every system runs in turn; before each run the harness sends `+"`FLUSHALL SYNC`"+` to
the system's server, lets the system set up (clients; for the process workload the
pre-added jobs), sends `+"`CONFIG RESETSTAT`"+` and reads `+"`INFO cpu`"+`, runs the measured part, then reads
`+"`INFO cpu`"+` and `+"`INFO commandstats`"+` again. After (a) it also reads `+"`INFO memory`"+` once the system's
clients are gone, against the flushed server before the run.

**CPUs.** %s. On this 2-CPU machine that keeps the load generators from taking cycles from the server;
it also means every client shares one CPU, so a system whose client needs more CPU per job than the
server does is limited by its client (the *client CPU* column shows it).

**Rounds.** %d round(s). In each round every workload runs on every system, and the order of the systems
rotates by one from round to round, so none always runs first. The report gives the median and the
min–max of each measure over the rounds, in the summary as in the tables; a ratio is that of the medians.

**Rows.** A row is one system with one setting. Three rows are variants of another that differ in one
setting and run only the workloads it changes (the others would run the same code): *trafikey native,
1 ADD per job* (`+"`QueueOptions.SeparateAdds`"+`: every Add is its own ADD call; add and lifecycle
workloads), *asynq, 10 ms poll* (`+"`TaskCheckInterval`"+` 10 ms instead of its default 1 s; process and
lifecycle workloads) and *floor, adds grouped* (the floor's single adds grouped as trafikey's client
coalesces Adds; add and lifecycle workloads).

**Jobs.** No-op handlers. Every payload is %d bytes: a 20-digit timestamp (ns on the load
generator's monotonic clock) written just before the add call, then padding. Go systems get it as bytes;
BullMQ as the JSON string `+"`{\"p\":\"…\"}`"+`.

**Workloads.**

- (a) *add*: %d jobs added one API call per job from %d concurrent producers (goroutines; async loops
  in Node over one Queue); trafikey's client coalesces the concurrent Adds into shared ADD calls, and
  the *1 ADD per job* row sends one ADD per Add.
- (b) *batch*: the same jobs in calls of %d jobs from %d concurrent producers: trafikey AddBatch, BullMQ
  addBulk; asynq has no batch enqueue, so its best practice, concurrent Enqueue, adds the jobs one by one
  (its batch numbers are single adds).
- (c) *process-N*: %d jobs are added first (unmeasured, with the bulk API where there is one), then
  workers start with concurrency N (trafikey WorkerOptions.Concurrency, asynq Config.Concurrency, BullMQ's
  Worker concurrency); the time runs from the worker's start until every job is completed.
- (d) *steady*: producers and workers together, the producers offering %d jobs/s (job k is added at
  k/rate s) for %s, worker concurrency %d. *flat*: the same with %d jobs added as fast as the producers
  can. Latency is add→complete, for every job, p50/p90/p99 per run: from the payload's timestamp to
  the moment the worker learns the job is completed: trafikey's WorkerOptions.OnDone (after the
  COMPLETEMANY carrying it was accepted), BullMQ's Worker `+"`completed`"+` event, the reply to the floor's completion pipeline.
  asynq has no hook after its acknowledgement, so its latency stops when the handler returns (one
  round trip early, which flatters asynq slightly).
  Before a lifecycle run is measured, its workers start and a warm-up of a tenth of the jobs (at most
  1000) goes through the same producers and workers (connections, scripts, Node's JIT); then the
  counts start over. The other workloads have no warm-up: they are long enough to absorb it.

**Done.** A process or lifecycle run ends when the workers have seen every job completed (the same
hooks as for latency) and the system's own count agrees (trafikey: STATS; the floor: its stats hash;
asynq: the inspector's processed count; BullMQ: the completed events). Every run also checks that every
job was added (and, after (a) and (b), is pending) and completed exactly as many times as there are
jobs; a run that fails a check is listed and left out of the medians.

**Each system's best practice.** trafikey: one valkey-go client (auto-pipelining), AddBatch for batches,
Add for single jobs (the client coalesces concurrent Adds into shared ADD calls, group commit: an Add
with none in flight is sent at once), trafikey.Worker with its defaults (two claim loops, each CLAIM taking as
many jobs as the worker has free slots; the completions of handlers that finish while one is in flight
share the next COMPLETEMANY, whose reply frees their slots together); the *1 ADD per job* row turns the coalescing off. asynq %s: its defaults (including
TaskCheckInterval 1 s, the poll interval of an idle worker), a go-redis pool as large as the producers or
the concurrency; the *10 ms poll* row sets TaskCheckInterval to 10 ms, the same otherwise. BullMQ %s: its defaults with
ioredis, addBulk, the Worker's concurrency option, `+"`removeOnComplete: {count: 0}`"+` (trafikey and asynq
delete completed jobs too).

**The floor** issues, with the same valkey-go client, producers and concurrency, the primitive
commands of each verb's writes (docs/PROTOCOL.md): ADD = `+"`HINCRBY meta seq n`"+`, then one pipeline of
`+"`HSET row data att at`"+` (a plain job's row) + `+"`ZADD pending`"+` per job + `+"`HINCRBY stats added n`"+`; CLAIM =
`+"`ZPOPMIN pending`"+` (`+"`BZPOPMIN`"+` with a 50 ms timeout when empty), then `+"`HINCRBY row att 1`"+` +
`+"`HSET row state active`"+` + `+"`ZADD active`"+` + `+"`HGET row data`"+`; COMPLETEMANY = `+"`ZREM active ids…`"+` +
`+"`DEL rows logs…`"+` + `+"`HINCRBY stats completed k`"+`. No checks, no fence, and no read but the payload the
worker needs: the least any executor can cost the server for the same dataset changes. Its worker claims
as trafikey.Worker did with one claim loop: one loop pops as many jobs as there are free slots; completions are grouped as the
client groups COMPLETEMANY (internal/groupcommit, the same lanes and limits). A single add is one add of
one job (`+"`HINCRBY meta seq 1`"+`, then its pipeline); the *floor, adds grouped* row groups concurrent single
adds as the client coalesces Adds. The coalesced trafikey rows are set against the grouped floor, the
others against the floor.

**Server cost.** *server CPU µs/job* is the `+"`used_cpu_user + used_cpu_sys`"+` delta of the server process
per job: command execution, networking, parsing, everything; it is the fairest single number across
systems. *verb µs/job* is the commandstats time of the queue's own commands; commandstats is wall
time inside a command, so on a busy machine it also counts time the server spent preempted (INFO cpu
does not), which is one reason the full run wants an otherwise idle machine. *Memory per pending job* is the `+"`used_memory`"+` delta
over (a), taken once the system's clients are gone, without the script cache, per job, minus the payload.
`, orDash(r.Env.Valkey), r.Env.Pinning, cfg.Rounds, cfg.Payload,
		cfg.Jobs, cfg.Producers, cfg.Batch, cfg.Producers, cfg.Jobs,
		cfg.Rate, cfg.Steady, cfg.Workers, cfg.Jobs, orDash(r.Env.Asynq), orDash(r.Env.BullMQ))
}

// busy reports whether the load average, at the start or the end, shows
// other work beyond the benchmark's own two busy processes.
func busy(e envInfo) bool {
	for _, l := range []string{e.LoadStart, e.LoadEnd} {
		if v, err := strconv.ParseFloat(l, 64); err == nil && v > float64(e.CPUs)+0.5 {
			return true
		}
	}
	return false
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
