// Command lanes measures what lanes and the rate limit cost and give, on one
// valkey-server with the trafikey module, for each executor: fairness (one
// lane holding a large backlog and many small lanes, one worker: when each
// small lane's last job was claimed, as a share of all claims); claim cost
// (the server's µs per claimed job, from INFO commandstats, with the jobs in
// no lane and spread over 1, 100 and 10,000 lanes, and the server process's
// CPU per claimed job over the same claims, which other work on the machine
// inflates less than the commands' wall time); and rate accuracy (a
// worker on a backlog under a rate limit: the claimed rate and the worker's
// CPU while it waits).
//
//	go run ./bench/lanes                 # the full sizes, a Markdown report on stdout
//	go run ./bench/lanes -small          # seconds, for a check
//
// Each measurement runs -rounds times, alternating the executors; the report
// gives the median and the range.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/bench/internal/feature"
)

type config struct {
	rounds     int
	bigLane    int           // jobs in the one large lane
	smallLanes int           // number of small lanes
	smallJobs  int           // jobs per small lane
	workers    int           // worker concurrency
	claimJobs  int           // jobs claimed per claim-cost measurement
	claimLanes []int         // lane counts of the claim-cost measurement (0: no lane)
	rateMax    int           // jobs per window
	rateWindow time.Duration // the window
	rateFor    time.Duration // how long the rate is measured
}

func main() {
	cfg := config{}
	small := flag.Bool("small", false, "small sizes: a check in seconds, not a measurement")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds per measurement, executors alternating")
	flag.Parse()
	cfg.bigLane, cfg.smallLanes, cfg.smallJobs, cfg.workers = 100_000, 100, 100, 100
	cfg.claimJobs, cfg.claimLanes = 20_000, []int{0, 1, 100, 10_000}
	cfg.rateMax, cfg.rateWindow, cfg.rateFor = 1000, time.Second, 10*time.Second
	if *small {
		cfg.bigLane, cfg.smallLanes, cfg.smallJobs = 2000, 10, 10
		cfg.claimJobs, cfg.claimLanes = 2000, []int{0, 1, 100, 1000}
		cfg.rateMax, cfg.rateWindow, cfg.rateFor = 100, 100*time.Millisecond, time.Second
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, *small); err != nil {
		fmt.Fprintln(os.Stderr, "lanes:", err)
		os.Exit(1)
	}
}

type bench struct {
	*feature.Server
	cfg config
}

func run(ctx context.Context, cfg config, small bool) error {
	srv, err := feature.Start(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	b := &bench{Server: srv, cfg: cfg}

	executors := []trafikey.Executor{trafikey.ExecutorNative, trafikey.ExecutorLua}
	fair := map[trafikey.Executor][]float64{}
	cost := map[string][]float64{}
	cpu := map[string][]float64{}
	rate := map[trafikey.Executor][]float64{}
	waitCPU := map[trafikey.Executor][]float64{}
	for round := range cfg.rounds {
		order := slices.Clone(executors)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, e := range order {
			fmt.Fprintf(os.Stderr, "round %d, %s: fairness …\n", round+1, e)
			share, err := b.fairness(ctx, e)
			if err != nil {
				return err
			}
			fair[e] = append(fair[e], share)
			for _, lanes := range cfg.claimLanes {
				fmt.Fprintf(os.Stderr, "round %d, %s: claim cost, %d lanes …\n", round+1, e, lanes)
				us, cpuUS, err := b.claimCost(ctx, e, lanes)
				if err != nil {
					return err
				}
				k := string(e) + "/" + strconv.Itoa(lanes)
				cost[k] = append(cost[k], us)
				cpu[k] = append(cpu[k], cpuUS)
			}
			fmt.Fprintf(os.Stderr, "round %d, %s: rate …\n", round+1, e)
			r, cpu, err := b.rate(ctx, e)
			if err != nil {
				return err
			}
			rate[e] = append(rate[e], r)
			waitCPU[e] = append(waitCPU[e], cpu)
		}
	}

	var out strings.Builder
	fmt.Fprintf(&out, "Machine: %s/%s, %d CPUs, Go %s; one valkey-server (%s). Command: `go run ./bench/lanes%s`, %d rounds, executors alternating; median (min–max).\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), b.Version(ctx), map[bool]string{true: " -small"}[small], cfg.rounds)
	fmt.Fprintf(&out, "**Fairness.** One lane of %d jobs and %d lanes of %d, added in that order, one worker at concurrency %d: the claim at which the last small lane's last job was claimed, as a share of all %d claims.\n\n",
		cfg.bigLane, cfg.smallLanes, cfg.smallJobs, cfg.workers, cfg.bigLane+cfg.smallLanes*cfg.smallJobs)
	fmt.Fprintf(&out, "| executor | last small lane done at |\n|---|---|\n")
	for _, e := range executors {
		fmt.Fprintf(&out, "| %s | %s |\n", e, feature.Spread(fair[e], func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }))
	}
	fmt.Fprintf(&out, "\n**Claim cost.** %d jobs claimed 100 at a time, in no lane or spread evenly over the lanes: the server's µs per claimed job (CLAIM's `usec` in INFO commandstats over the jobs it returned).\n\n", cfg.claimJobs)
	costTable(&out, cfg.claimLanes, executors, cost)
	fmt.Fprintf(&out, "\nThe same claims, the server process's CPU µs per claimed job (INFO cpu, every thread):\n\n")
	costTable(&out, cfg.claimLanes, executors, cpu)
	fmt.Fprintf(&out, "\n**Rate limit.** %d jobs per %v configured, a worker at concurrency %d on a backlog for %v: jobs claimed per second, and the worker process's CPU per second of the run (most of it is spent waiting).\n\n",
		cfg.rateMax, cfg.rateWindow, cfg.workers, cfg.rateFor)
	fmt.Fprintf(&out, "| executor | claimed per second | worker CPU |\n|---|---|---|\n")
	for _, e := range executors {
		fmt.Fprintf(&out, "| %s | %s | %s |\n", e,
			feature.Spread(rate[e], func(v float64) string { return fmt.Sprintf("%.1f", v) }),
			feature.Spread(waitCPU[e], func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }))
	}
	fmt.Print(out.String())
	return nil
}

// costTable writes a claim-cost table: per executor, one column per lane
// count of the medians and ranges of vals (by "executor/lanes").
func costTable(out *strings.Builder, claimLanes []int, executors []trafikey.Executor, vals map[string][]float64) {
	fmt.Fprintf(out, "| executor |")
	for _, l := range claimLanes {
		switch l {
		case 0:
			fmt.Fprintf(out, " no lane |")
		case 1:
			fmt.Fprintf(out, " 1 lane |")
		default:
			fmt.Fprintf(out, " %d lanes |", l)
		}
	}
	fmt.Fprintf(out, "\n|---|%s\n", strings.Repeat("---|", len(claimLanes)))
	for _, e := range executors {
		fmt.Fprintf(out, "| %s |", e)
		for _, l := range claimLanes {
			fmt.Fprintf(out, " %s |", feature.Spread(vals[string(e)+"/"+strconv.Itoa(l)], func(v float64) string { return fmt.Sprintf("%.2f", v) }))
		}
		fmt.Fprintln(out)
	}
}

// addLane adds n jobs to lane (none when empty) in batches.
func addLane(ctx context.Context, q *trafikey.Queue, lane string, n int) error {
	for n > 0 {
		k := min(n, trafikey.MaxBatch)
		jobs := make([]trafikey.JobSpec, k)
		for i := range jobs {
			jobs[i].Payload = []byte(lane)
			if lane != "" {
				jobs[i].Options = trafikey.JobOptions{Lane: lane}
			}
		}
		if _, err := q.AddBatch(ctx, jobs); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// work runs a worker on q until n jobs have run, calling seen on each.
func (b *bench) work(ctx context.Context, q *trafikey.Queue, n int, seen func(*trafikey.Job)) error {
	var done atomic.Int64
	finished := make(chan struct{})
	w, err := trafikey.NewWorker(q, func(_ context.Context, j *trafikey.Job) error {
		seen(j)
		if done.Add(1) == int64(n) {
			close(finished)
		}
		return nil
	}, trafikey.WorkerOptions{Concurrency: b.cfg.workers})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(wctx) }()
	select {
	case <-finished:
	case <-ctx.Done():
	}
	cancel()
	if err := <-errc; err != nil && ctx.Err() == nil {
		return err
	}
	return ctx.Err()
}

func (b *bench) fairness(ctx context.Context, e trafikey.Executor) (float64, error) {
	q, err := b.Open(ctx, e, "fair")
	if err != nil {
		return 0, err
	}
	if err := addLane(ctx, q, "big", b.cfg.bigLane); err != nil {
		return 0, err
	}
	for i := range b.cfg.smallLanes {
		if err := addLane(ctx, q, "small-"+strconv.Itoa(i), b.cfg.smallJobs); err != nil {
			return 0, err
		}
	}
	total := b.cfg.bigLane + b.cfg.smallLanes*b.cfg.smallJobs
	var mu sync.Mutex
	claims, last := 0, 0
	err = b.work(ctx, q, total, func(j *trafikey.Job) {
		mu.Lock()
		claims++
		if string(j.Payload) != "big" {
			last = claims
		}
		mu.Unlock()
	})
	return float64(last) / float64(total), err
}

// claimCost claims the jobs 100 at a time and returns the server's µs (the
// commands' usec) and CPU µs per claimed job.
func (b *bench) claimCost(ctx context.Context, e trafikey.Executor, lanes int) (us, cpuUS float64, err error) {
	q, err := b.Open(ctx, e, "cost")
	if err != nil {
		return 0, 0, err
	}
	if lanes == 0 {
		err = addLane(ctx, q, "", b.cfg.claimJobs)
	} else {
		per := b.cfg.claimJobs / lanes
		for i := 0; i < lanes && err == nil; i++ {
			err = addLane(ctx, q, "lane-"+strconv.Itoa(i), per)
		}
	}
	if err != nil {
		return 0, 0, err
	}
	if err := b.ResetStats(ctx); err != nil {
		return 0, 0, err
	}
	cpu0, err := b.CPU(ctx)
	if err != nil {
		return 0, 0, err
	}
	claimed := 0
	for {
		jobs, err := q.Claim(ctx, time.Hour, 100)
		if err != nil {
			return 0, 0, err
		}
		if len(jobs) == 0 {
			break
		}
		claimed += len(jobs)
	}
	cpu1, err := b.CPU(ctx)
	if err != nil {
		return 0, 0, err
	}
	total, err := b.Usec(ctx, e, "claim")
	if err != nil || claimed == 0 {
		return 0, 0, err
	}
	return total / float64(claimed), (cpu1 - cpu0) * 1e6 / float64(claimed), nil
}

func (b *bench) rate(ctx context.Context, e trafikey.Executor) (perSec, cpuShare float64, err error) {
	q, err := b.Open(ctx, e, "rate")
	if err != nil {
		return 0, 0, err
	}
	backlog := int(float64(b.cfg.rateMax)*float64(b.cfg.rateFor)/float64(b.cfg.rateWindow)) * 2
	if err := addLane(ctx, q, "", backlog); err != nil {
		return 0, 0, err
	}
	if err := q.Admin().SetRate(ctx, b.cfg.rateMax, b.cfg.rateWindow); err != nil {
		return 0, 0, err
	}
	var claimed atomic.Int64
	rctx, cancel := context.WithTimeout(ctx, b.cfg.rateFor)
	defer cancel()
	cpu0 := processCPU()
	start := time.Now()
	err = b.work(rctx, q, backlog, func(*trafikey.Job) { claimed.Add(1) })
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0
	if ctx.Err() != nil {
		return 0, 0, ctx.Err()
	}
	if err != nil && rctx.Err() == nil {
		return 0, 0, err
	}
	return float64(claimed.Load()) / elapsed.Seconds(), cpu.Seconds() / elapsed.Seconds(), nil
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
