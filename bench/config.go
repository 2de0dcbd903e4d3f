package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is one invocation of the harness.
type Config struct {
	Rounds      int           // interleaved rounds; every system runs every workload once per round
	Jobs        int           // jobs per workload (add, batch, process, flat)
	Payload     int           // payload bytes per job (at least 20: the timestamp)
	Producers   int           // concurrent producers (goroutines, or async loops in Node)
	Batch       int           // jobs per batch in the batch workload
	Concurrency []int         // worker concurrencies of the process workloads
	Workers     int           // worker concurrency in the lifecycle workloads
	Rate        int           // offered jobs/s in the steady lifecycle workload
	Steady      time.Duration // length of the steady workload (jobs = Rate × Steady)
	Systems     []string      // systems to run, in their base order
	Workloads   []string      // workload families to run: add batch process steady flat
	Module      string        // trafikey module .so; built from ./module when empty
	Root        string        // repository root (go.mod); resolved at start when empty
	Out         string        // Markdown report path ("" writes none)
	SVG         string        // SVG chart path ("" writes none)
	JSON        string        // raw results path ("" writes none)
	Pin         bool          // pin the server to CPU 0 and the load to CPU 1
	Smoke       bool          // seconds-long check that every system processes every job
	Progress    bool          // draw a progress bar on stderr
	RunTimeout  time.Duration // bound on one run (one system, one workload)
	Command     string        // the command line, for the report
	Trial       bool          // the sizes differ from the full run's defaults
}

// Defaults of the full run.
const (
	defaultRounds    = 3
	defaultJobs      = 100_000
	defaultPayload   = 64
	defaultProducers = 50
	defaultBatch     = 100
	defaultWorkers   = 100
	defaultRate      = 2000
	defaultSteady    = 10 * time.Second
)

const defaultConcurrency = "1,10,100"

var (
	allSystems   = []string{sysNative, sysNativeSingle, sysLua, sysAsynq, sysAsynq10, sysBullMQ, sysFloor, sysFloorGrouped}
	allWorkloads = []string{"add", "batch", "process", "steady", "flat"}
)

// System names, as the report and the -systems flag spell them. A variant
// (native-single, asynq-10ms, floor-grouped) differs from its base system
// in one setting, and runs only the workloads that setting touches (see
// variantKinds).
const (
	sysNative       = "trafikey-native"
	sysNativeSingle = "trafikey-native-single" // one ADD call per Add: QueueOptions.SeparateAdds
	sysLua          = "trafikey-lua"
	sysAsynq        = "asynq"      // asynq's defaults: TaskCheckInterval 1 s
	sysAsynq10      = "asynq-10ms" // TaskCheckInterval 10 ms
	sysBullMQ       = "bullmq"
	sysFloor        = "floor"         // one add call per job
	sysFloorGrouped = "floor-grouped" // single adds grouped as trafikey's client groups them
)

// systemAliases lets -systems take short names.
var systemAliases = map[string]string{
	"native": sysNative, "trafikey-native": sysNative,
	"native-single": sysNativeSingle, "trafikey-native-single": sysNativeSingle,
	"lua": sysLua, "trafikey-lua": sysLua,
	"asynq": sysAsynq, "asynq-10ms": sysAsynq10, "bullmq": sysBullMQ,
	"floor": sysFloor, "floor-grouped": sysFloorGrouped,
}

// variantKinds are the workload kinds a variant runs: the others would run
// the same code as its base system. The systems not listed run every
// workload.
var variantKinds = map[string][]string{
	sysNativeSingle: {"add", "steady", "flat"},     // single Adds
	sysFloorGrouped: {"add", "steady", "flat"},     // single adds
	sysAsynq10:      {"process", "steady", "flat"}, // a worker polls
}

// runs reports whether system runs workload w.
func runs(system string, w Workload) bool {
	kinds, ok := variantKinds[system]
	return !ok || slices.Contains(kinds, w.Kind)
}

// peerSystems run on the second valkey-server, the one without the
// module.
var peerSystems = []string{sysAsynq, sysAsynq10, sysBullMQ}

// Workload is one measured scenario with its sizes.
type Workload struct {
	ID          string // "add", "batch", "process-100", "steady", "flat"
	Kind        string // add, batch, process, steady, flat
	Title       string
	Jobs        int
	Payload     int
	Producers   int
	Batch       int
	Concurrency int // workers (process, steady, flat)
	Rate        int // offered jobs/s (steady)
}

// Lifecycle reports whether producers and workers run together.
func (w Workload) Lifecycle() bool { return w.Kind == "steady" || w.Kind == "flat" }

// Processes reports whether workers run in the measured part.
func (w Workload) Processes() bool { return w.Kind == "process" || w.Lifecycle() }

// Adds reports whether producers add in the measured part.
func (w Workload) Adds() bool { return w.Kind != "process" }

// workloads expands the configured families into the workloads of a round.
func (c *Config) workloads() []Workload {
	base := Workload{Payload: c.Payload, Producers: c.Producers, Batch: c.Batch, Jobs: c.Jobs}
	var out []Workload
	for _, fam := range allWorkloads {
		if !slices.Contains(c.Workloads, fam) {
			continue
		}
		w := base
		w.Kind = fam
		switch fam {
		case "add":
			w.ID = "add"
			w.Title = fmt.Sprintf("(a) add one at a time, %d concurrent producers", c.Producers)
		case "batch":
			w.ID = "batch"
			w.Title = fmt.Sprintf("(b) batch add, %d jobs per call, %d concurrent producers", c.Batch, c.Producers)
		case "process":
			for _, n := range c.Concurrency {
				p := w
				p.ID = "process-" + strconv.Itoa(n)
				p.Concurrency = n
				p.Title = fmt.Sprintf("(c) process %d pre-added jobs, concurrency %d", c.Jobs, n)
				out = append(out, p)
			}
			continue
		case "steady":
			w.ID = "steady"
			w.Concurrency = c.Workers
			w.Rate = c.Rate
			w.Jobs = max(1, int(float64(c.Rate)*c.Steady.Seconds()))
			w.Title = fmt.Sprintf("(d) lifecycle at a steady %d jobs/s for %s (%d jobs), %d producers, concurrency %d", c.Rate, c.Steady, w.Jobs, c.Producers, c.Workers)
		case "flat":
			w.ID = "flat"
			w.Concurrency = c.Workers
			w.Title = fmt.Sprintf("(d) lifecycle flat out, %d jobs, %d producers, concurrency %d", c.Jobs, c.Producers, c.Workers)
		}
		out = append(out, w)
	}
	return out
}

// validate checks the configuration and normalises names.
func (c *Config) validate() error {
	if c.Rounds < 1 {
		return fmt.Errorf("-rounds must be at least 1")
	}
	if c.Jobs < 1 || c.Producers < 1 || c.Batch < 1 || c.Batch > 1000 || c.Workers < 1 || c.Rate < 1 {
		return fmt.Errorf("-jobs, -producers, -workers and -rate must be positive, -batch 1..1000")
	}
	if c.Payload < 20 {
		return fmt.Errorf("-payload must be at least 20 bytes (it carries a 20-digit timestamp)")
	}
	for _, n := range c.Concurrency {
		if n < 1 {
			return fmt.Errorf("-concurrency values must be positive")
		}
	}
	var systems []string
	for _, s := range c.Systems {
		name, ok := systemAliases[strings.ToLower(strings.TrimSpace(s))]
		if !ok {
			return fmt.Errorf("unknown system %q (known: native, native-single, lua, asynq, asynq-10ms, bullmq, floor, floor-grouped)", s)
		}
		if !slices.Contains(systems, name) {
			systems = append(systems, name)
		}
	}
	if len(systems) == 0 {
		return fmt.Errorf("no system selected")
	}
	c.Systems = systems
	for _, w := range c.Workloads {
		if !slices.Contains(allWorkloads, w) {
			return fmt.Errorf("unknown workload %q (known: %s)", w, strings.Join(allWorkloads, ", "))
		}
	}
	if len(c.Workloads) == 0 {
		return fmt.Errorf("no workload selected")
	}
	return nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", f, err)
		}
		out = append(out, n)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
