// Command events measures the job events on one valkey-server with the
// trafikey module, for each executor: the lag of a subscriber (producers
// add and a worker processes at a steady rate on a queue with events on,
// while Queue.Events reads the stream; each event's lag is its receive time
// minus its time in the stream id), and what events cost the server (its
// CPU µs per job to add and to process at concurrency 100, events off and
// on, side by side in the same round).
//
//	go run ./bench/events            # the full sizes, a Markdown report on stdout
//	go run ./bench/events -small     # seconds, for a check
//	go run ./bench/events -kinds     # process-100 only: events off and on, jobs with and without a kind
//
// Each measurement runs -rounds times, alternating the executors and the
// order of off and on; the report gives the median and the range. With
// -kinds the run measures only process-100, in four variants a round
// (events off or on, jobs added with a kind or without), their order
// turning by one each round.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/bench/internal/feature"
	"github.com/trafikey/trafikey/bench/internal/noop"
)

type config struct {
	rounds    int
	rate      int           // offered jobs/s of the lag run
	steady    time.Duration // length of the lag run
	producers int           // concurrent producers (lag run and add cost)
	workers   int           // worker concurrency
	costJobs  int           // jobs per cost measurement
	maxLen    int           // the events stream's bound
	small     bool
	kinds     bool // process-100 only, jobs with and without a kind
}

func main() {
	cfg := config{producers: 50, workers: 100, maxLen: 100_000}
	flag.BoolVar(&cfg.small, "small", false, "small sizes: a check in seconds, not a measurement")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds per measurement, executors alternating")
	flag.IntVar(&cfg.rate, "rate", 10_000, "offered jobs/s of the lag run")
	flag.DurationVar(&cfg.steady, "steady", 10*time.Second, "length of the lag run")
	flag.IntVar(&cfg.costJobs, "jobs", 50_000, "jobs per cost measurement")
	flag.BoolVar(&cfg.kinds, "kinds", false, "measure process-100 only: events off and on, jobs added with a kind and without")
	flag.Parse()
	if cfg.small {
		cfg.rate, cfg.steady, cfg.costJobs = 2000, time.Second, 2000
	}
	if cfg.rounds < 1 || cfg.rate < 1 || cfg.steady <= 0 || cfg.costJobs < 1 {
		fmt.Fprintln(os.Stderr, "events: -rounds, -rate, -steady and -jobs must be positive")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "events:", err)
		os.Exit(1)
	}
}

type bench struct {
	*feature.Server
	cfg config
}

// lagRun is what one lag run measured.
type lagRun struct {
	p50, p99, max float64 // lag in ms
	rate          float64 // completed jobs per second
}

func run(ctx context.Context, cfg config) error {
	srv, err := feature.Start(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	b := &bench{Server: srv, cfg: cfg}
	if cfg.kinds {
		return b.runKinds(ctx)
	}

	executors := []trafikey.Executor{trafikey.ExecutorNative, trafikey.ExecutorLua}
	lags := map[trafikey.Executor][]lagRun{}
	// cost[executor/side/off|on]: server µs per job; ratio[executor/side]:
	// on over off of the same round.
	cost, ratio := map[string][]float64{}, map[string][]float64{}
	for round := range cfg.rounds {
		order := slices.Clone(executors)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, e := range order {
			fmt.Fprintf(os.Stderr, "round %d, %s: lag at %d jobs/s for %v …\n", round+1, e, cfg.rate, cfg.steady)
			l, err := b.lag(ctx, e)
			if err != nil {
				return err
			}
			lags[e] = append(lags[e], l)
			for _, side := range []string{"add", "process"} {
				modes := []bool{false, true}
				if round%2 == 1 {
					slices.Reverse(modes)
				}
				us := map[bool]float64{}
				for _, on := range modes {
					fmt.Fprintf(os.Stderr, "round %d, %s: %s cost, events %s …\n", round+1, e, side, onOff(on))
					var v float64
					if side == "add" {
						v, err = b.addCost(ctx, e, on)
					} else {
						var r processRun
						r, err = b.processCost(ctx, e, on, "")
						v = r.us
					}
					if err != nil {
						return err
					}
					us[on] = v
					k := string(e) + "/" + side + "/" + onOff(on)
					cost[k] = append(cost[k], v)
				}
				ratio[string(e)+"/"+side] = append(ratio[string(e)+"/"+side], us[true]/us[false])
			}
		}
	}

	var out strings.Builder
	load := "?"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	fmt.Fprintf(&out, "Machine: %s/%s, %d CPUs, Go %s; one valkey-server (%s), not pinned; load average at the end %s. Command: `go run ./bench/events%s`, %d rounds, executors alternating; median (min–max).\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), b.Version(ctx), load, flagsText(cfg), cfg.rounds)
	jobs := int(float64(cfg.rate) * cfg.steady.Seconds())
	fmt.Fprintf(&out, "**Subscriber lag.** Events on (bound %d), %d producers adding one job per call (coalesced by the client, its default) at %d jobs/s offered for %v (%d jobs), a worker at concurrency %d completing them, and one subscriber reading the stream with `Queue.Events`: for each of the %d events (added, claimed, completed), its receive time on the client's clock minus the milliseconds of its stream id on the server's (one machine, one clock; the id is truncated to the millisecond, so a lag reads 0–1 ms high). The median over rounds of each run's p50, p99 and max, and each run's completed jobs per second.\n\n",
		cfg.maxLen, cfg.producers, cfg.rate, cfg.steady, jobs, cfg.workers, 3*jobs)
	fmt.Fprintf(&out, "| executor | lag p50 | lag p99 | lag max | completed per second |\n|---|---|---|---|---|\n")
	ms := func(v float64) string { return fmt.Sprintf("%.1f ms", v) }
	for _, e := range executors {
		pick := func(f func(lagRun) float64) []float64 {
			var xs []float64
			for _, l := range lags[e] {
				xs = append(xs, f(l))
			}
			return xs
		}
		fmt.Fprintf(&out, "| %s | %s | %s | %s | %s |\n", e,
			feature.Spread(pick(func(l lagRun) float64 { return l.p50 }), ms),
			feature.Spread(pick(func(l lagRun) float64 { return l.p99 }), ms),
			feature.Spread(pick(func(l lagRun) float64 { return l.max }), ms),
			feature.Spread(pick(func(l lagRun) float64 { return l.rate }), func(v float64) string { return fmt.Sprintf("%.0f", v) }))
	}
	fmt.Fprintf(&out, "\n**Server cost.** %d jobs, on a fresh queue with events off (never turned on) or on (bound %d): *add*, %d producers adding one job per call flat out; *process-100*, a worker at concurrency %d completing them, pre-added (with events on for the on run, so each job publishes claimed and completed). The server process's CPU (INFO cpu, user + sys) over the measured part, µs per job; off and on run one after the other in each round, their order alternating, and *on/off* is the median (min–max) of each round's ratio.\n\n",
		cfg.costJobs, cfg.maxLen, cfg.producers, cfg.workers)
	fmt.Fprintf(&out, "| executor | add, off | add, on | add on/off | process-100, off | process-100, on | process-100 on/off |\n|---|---|---|---|---|---|---|\n")
	us := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	pct := func(v float64) string { return fmt.Sprintf("%+.0f%%", 100*(v-1)) }
	for _, e := range executors {
		fmt.Fprintf(&out, "| %s |", e)
		for _, side := range []string{"add", "process"} {
			fmt.Fprintf(&out, " %s | %s | %s |",
				feature.Spread(cost[string(e)+"/"+side+"/off"], us),
				feature.Spread(cost[string(e)+"/"+side+"/on"], us),
				feature.Spread(ratio[string(e)+"/"+side], pct))
		}
		fmt.Fprintln(&out)
	}
	fmt.Print(out.String())
	return nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func flagsText(cfg config) string {
	var parts []string
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "small" || f.Name == "kinds" {
			parts = append(parts, "-"+f.Name)
			return
		}
		parts = append(parts, "-"+f.Name+" "+f.Value.String())
	})
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " ")
}

// open flushes the server and opens a queue, with events on (bound
// cfg.maxLen) or never turned on.
func (b *bench) open(ctx context.Context, e trafikey.Executor, on bool) (*trafikey.Queue, error) {
	q, err := b.Open(ctx, e, "events")
	if err != nil {
		return nil, err
	}
	if on {
		if err := q.Admin().SetEvents(ctx, b.cfg.maxLen); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// produce adds n jobs with cfg.producers goroutines, job i due at start +
// i/rate (flat out when rate is 0); a producer that falls behind adds
// without waiting until it has caught up.
func (b *bench) produce(ctx context.Context, q *trafikey.Queue, n, rate int) error {
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, b.cfg.producers)
	payload := []byte("event-bench-payload")
	for range b.cfg.producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || ctx.Err() != nil {
					return
				}
				if rate > 0 {
					due := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
					if d := time.Until(due); d > 0 {
						time.Sleep(d)
					}
				}
				if _, err := q.Add(ctx, payload, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// worker starts a worker on q that calls done after each completed job;
// stop ends it and returns its error.
func (b *bench) worker(ctx context.Context, q *trafikey.Queue, done func()) (stop func() error, err error) {
	return noop.Workers(ctx, q, 1, b.cfg.workers, func(*trafikey.Job) { done() })
}

// lag runs the steady workload with a subscriber and measures each event's
// lag.
func (b *bench) lag(ctx context.Context, e trafikey.Executor) (lagRun, error) {
	q, err := b.open(ctx, e, true)
	if err != nil {
		return lagRun{}, err
	}
	jobs := int(float64(b.cfg.rate) * b.cfg.steady.Seconds())
	want := 3 * jobs
	rctx, cancel := context.WithTimeout(ctx, b.cfg.steady*5+time.Minute)
	defer cancel()

	// The subscriber: every event of the run, then it stops.
	lagNS := make([]int64, 0, want)
	names := map[string]int{}
	subDone := make(chan error, 1)
	sctx, subCancel := context.WithCancel(rctx)
	defer subCancel()
	go func() {
		for ev, err := range q.Events(sctx, "0") {
			if err != nil {
				subDone <- err
				return
			}
			lagNS = append(lagNS, int64(time.Since(ev.Time)))
			names[ev.Name]++
			if len(lagNS) == want {
				subDone <- nil
				return
			}
		}
		subDone <- sctx.Err()
	}()

	var completed atomic.Int64
	finished := make(chan struct{})
	stop, err := b.worker(rctx, q, func() {
		if completed.Add(1) == int64(jobs) {
			close(finished)
		}
	})
	if err != nil {
		return lagRun{}, err
	}
	start := time.Now()
	perr := b.produce(rctx, q, jobs, b.cfg.rate)
	if perr == nil {
		select {
		case <-finished:
		case <-rctx.Done():
		}
	}
	elapsed := time.Since(start)
	werr := stop()
	if perr != nil {
		return lagRun{}, perr
	}
	if werr != nil {
		return lagRun{}, werr
	}
	if err := <-subDone; err != nil {
		return lagRun{}, fmt.Errorf("subscriber after %d of %d events: %w", len(lagNS), want, err)
	}
	if names["added"] != jobs || names["claimed"] != jobs || names["completed"] != jobs {
		return lagRun{}, fmt.Errorf("events of %d jobs: %v", jobs, names)
	}
	slices.Sort(lagNS)
	at := func(f float64) float64 {
		i := min(len(lagNS)-1, int(f*float64(len(lagNS))))
		return float64(lagNS[i]) / 1e6
	}
	return lagRun{p50: at(0.50), p99: at(0.99), max: float64(lagNS[len(lagNS)-1]) / 1e6,
		rate: float64(jobs) / elapsed.Seconds()}, nil
}

// measure runs f and returns the server's CPU µs per job over it.
func (b *bench) measure(ctx context.Context, jobs int, f func() error) (float64, error) {
	cpu0, err := b.CPU(ctx)
	if err != nil {
		return 0, err
	}
	if err := f(); err != nil {
		return 0, err
	}
	cpu1, err := b.CPU(ctx)
	if err != nil {
		return 0, err
	}
	return (cpu1 - cpu0) * 1e6 / float64(jobs), nil
}

func (b *bench) addCost(ctx context.Context, e trafikey.Executor, on bool) (float64, error) {
	q, err := b.open(ctx, e, on)
	if err != nil {
		return 0, err
	}
	// a first call loads the script (Lua) and warms the code paths up
	if _, err := q.Add(ctx, []byte("warm"), nil); err != nil {
		return 0, err
	}
	n := b.cfg.costJobs
	us, err := b.measure(ctx, n, func() error { return b.produce(ctx, q, n, 0) })
	if err != nil {
		return 0, err
	}
	if st, err := q.Stats(ctx); err != nil || int64(st.Pending) != int64(n+1) {
		return 0, fmt.Errorf("after adding %d jobs: %d pending (%v)", n+1, st.Pending, err)
	}
	return us, nil
}

// processRun is what one process-100 measurement measured.
type processRun struct {
	us, perSec float64 // the server's CPU µs per job, completed jobs per second
	// claim, complete: natively, the µs per job INFO commandstats gives
	// EMQ.CLAIM and EMQ.COMPLETEMANY over the run (the Lua executor's
	// scripts are all EVALSHA: 0)
	claim, complete float64
}

// processCost adds cfg.costJobs jobs, with kind when it is not empty,
// and measures a worker at concurrency cfg.workers completing them.
func (b *bench) processCost(ctx context.Context, e trafikey.Executor, on bool, kind string) (processRun, error) {
	q, err := b.open(ctx, e, on)
	if err != nil {
		return processRun{}, err
	}
	n := b.cfg.costJobs
	for left := n; left > 0; {
		k := min(left, trafikey.MaxBatch)
		jobs := make([]trafikey.JobSpec, k)
		for i := range jobs {
			jobs[i].Payload = []byte("event-bench-payload")
			jobs[i].Options.Kind = kind
		}
		if _, err := q.AddBatch(ctx, jobs); err != nil {
			return processRun{}, err
		}
		left -= k
	}
	if err := b.ResetStats(ctx); err != nil {
		return processRun{}, err
	}
	var completed atomic.Int64
	finished := make(chan struct{})
	var elapsed time.Duration
	var r processRun
	r.us, err = b.measure(ctx, n, func() error {
		start := time.Now()
		stop, err := b.worker(ctx, q, func() {
			if completed.Add(1) == int64(n) {
				close(finished)
			}
		})
		if err != nil {
			return err
		}
		select {
		case <-finished:
		case <-ctx.Done():
		}
		elapsed = time.Since(start)
		if err := stop(); err != nil {
			return err
		}
		return ctx.Err()
	})
	if err != nil {
		return processRun{}, err
	}
	r.perSec = float64(n) / elapsed.Seconds()
	if e == trafikey.ExecutorNative {
		for verb, dst := range map[string]*float64{"claim": &r.claim, "completemany": &r.complete} {
			u, err := b.Usec(ctx, e, verb)
			if err != nil {
				return processRun{}, err
			}
			*dst = u / float64(n)
		}
	}
	if on {
		// the last event (a completed job's) carries the kind the jobs
		// were added with, and none without one
		last, err := b.Admin.Do(ctx, "XREVRANGE", "emq:{events}:events", "+", "-", "COUNT", "1")
		if err != nil {
			return processRun{}, err
		}
		text := fmt.Sprint(last)
		if !strings.Contains(text, "completed") || strings.Contains(text, benchKind) != (kind != "") {
			return processRun{}, fmt.Errorf("the last event, jobs added with kind %q: %s", kind, text)
		}
	}
	return r, nil
}
