// Command bench measures trafikey against its Lua executor, asynq and BullMQ
// on one valkey-server, side by side, and against the server's own cost for
// the primitive commands the trafikey verbs consist of (the floor).
//
//	go run ./bench              # the full benchmark; writes docs/BENCHMARKS.md and docs/bench.svg
//	go run ./bench -smoke       # seconds: every system runs every workload and processes every job
//
// Two valkey-servers are started with the same options: one with the
// trafikey module loaded, where trafikey and the floor run, and one without
// it, where asynq and BullMQ run. Every system runs in turn, FLUSHALL
// between runs. See docs/BENCHMARKS.md for the method.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, cfg)
	if res != nil {
		fmt.Print(res.summaryText())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*Config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: go run ./bench [flags]

Benchmarks trafikey (native and Lua executors), asynq, BullMQ and the floor
of primitive commands on valkey-server (the peers on a second one without the
module), and writes docs/BENCHMARKS.md and docs/bench.svg. -smoke checks in seconds that every system processes every job.

Flags:
`)
		fs.PrintDefaults()
	}
	c := &Config{}
	var concurrency, systems, workloads string
	fs.BoolVar(&c.Smoke, "smoke", false, "smoke mode: 300 jobs per workload, 1 round; fails unless every system processed every job (never asserts a speed)")
	fs.IntVar(&c.Rounds, "rounds", defaultRounds, "interleaved rounds (the report gives the median and the min–max)")
	fs.IntVar(&c.Jobs, "jobs", defaultJobs, "jobs per workload (add, batch, process, flat)")
	fs.IntVar(&c.Payload, "payload", defaultPayload, "payload bytes per job (≥ 20)")
	fs.IntVar(&c.Producers, "producers", defaultProducers, "concurrent producers")
	fs.IntVar(&c.Batch, "batch", defaultBatch, "jobs per call in the batch workload (1..1000)")
	fs.StringVar(&concurrency, "concurrency", defaultConcurrency, "worker concurrencies of the process workload")
	fs.IntVar(&c.Workers, "workers", defaultWorkers, "worker concurrency in the lifecycle workloads")
	fs.IntVar(&c.Rate, "rate", defaultRate, "offered jobs/s in the steady lifecycle workload")
	fs.DurationVar(&c.Steady, "steady", defaultSteady, "length of the steady lifecycle workload")
	fs.StringVar(&systems, "systems", strings.Join(allSystems, ","), "systems to run")
	fs.StringVar(&workloads, "workloads", strings.Join(allWorkloads, ","), "workloads to run")
	fs.StringVar(&c.Module, "module", "", "trafikey module (.so) to load; built from ./module when empty")
	fs.StringVar(&c.Out, "out", "docs/BENCHMARKS.md", "Markdown report (\"\" for none; none by default with -smoke)")
	fs.StringVar(&c.SVG, "svg", "docs/bench.svg", "SVG chart (\"\" for none; none by default with -smoke)")
	fs.StringVar(&c.JSON, "json", "", "write every run's raw measurements as JSON to this file")
	fs.BoolVar(&c.Pin, "pin", true, "pin valkey-server to CPU 0 and this process (and Node) to CPU 1 with taskset")
	fs.BoolVar(&c.Progress, "progress", true, "draw a progress bar on stderr")
	fs.DurationVar(&c.RunTimeout, "run-timeout", 15*time.Minute, "bound on one run (one system, one workload)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	if c.Concurrency, err = parseInts(concurrency); err != nil {
		return nil, fmt.Errorf("-concurrency: %w", err)
	}
	c.Systems = splitList(systems)
	c.Workloads = splitList(workloads)
	if c.Smoke {
		applySmoke(c, set)
	}
	c.Trial = c.Rounds != defaultRounds || c.Jobs != defaultJobs || c.Payload != defaultPayload ||
		c.Producers != defaultProducers || c.Batch != defaultBatch || c.Workers != defaultWorkers ||
		c.Rate != defaultRate || c.Steady != defaultSteady || concurrency != defaultConcurrency ||
		len(c.Systems) != len(allSystems) || len(c.Workloads) != len(allWorkloads)
	c.Command = "go run ./bench"
	if len(args) > 0 {
		c.Command += " " + strings.Join(args, " ")
	}
	return c, c.validate()
}

// applySmoke shrinks the sizes a flag did not set explicitly.
func applySmoke(c *Config, set map[string]bool) {
	if !set["jobs"] {
		c.Jobs = 300
	}
	if !set["rounds"] {
		c.Rounds = 1
	}
	if !set["steady"] {
		c.Steady = time.Duration(float64(c.Jobs) / float64(c.Rate) * float64(time.Second))
	}
	if !set["out"] {
		c.Out = ""
	}
	if !set["svg"] {
		c.SVG = ""
	}
	if !set["run-timeout"] {
		c.RunTimeout = 2 * time.Minute
	}
}
