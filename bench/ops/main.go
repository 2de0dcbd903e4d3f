// Command ops measures what the operations verbs cost on a large dead set,
// on one valkey-server with the trafikey module, for each executor: the
// server's time per JOBS page (INFO commandstats after CONFIG RESETSTAT)
// with a million dead jobs, oldest first, newest first and from cursors
// deep in the set; and the requeue of all of them with Admin.RequeueDead,
// in bounded calls, while another client's PING round trips are measured
// (their p99 over the whole run and the worst p99 of any one second), with
// the total time and each call's server time.
//
//	go run ./bench/ops                 # the full sizes, a Markdown report on stdout
//	go run ./bench/ops -small          # seconds, for a check
//
// Each measurement runs -rounds times, alternating the executors; the report
// gives the median and the range.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/bench/internal/feature"
	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/protocol"
)

type config struct {
	rounds int
	dead   int // dead jobs planted
	perMS  int // deaths per ms: jobs that share a score
	pages  int // JOBS calls per kind of page
	limit  int // rows per page
	// batches are the jobs examined per REQUEUEDEAD call of the requeue
	// runs: 0 is Admin.RequeueDead's own call size, any other the
	// verb called in a loop as RequeueDead calls it, with that limit.
	batches []int
}

func main() {
	cfg := config{}
	small := flag.Bool("small", false, "small sizes: a check in seconds, not a measurement")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds per measurement, executors alternating")
	flag.Parse()
	batch := flag.Int("batch", protocol.MaxCount, "jobs examined per call of the second requeue run (the first is Admin.RequeueDead's)")
	cfg.dead, cfg.perMS, cfg.pages, cfg.limit = 1_000_000, 10, 300, 100
	if *small {
		cfg.dead, cfg.pages = 20_000, 50
	}
	cfg.batches = []int{0, *batch}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, *small); err != nil {
		fmt.Fprintln(os.Stderr, "ops:", err)
		os.Exit(1)
	}
}

type bench struct {
	*feature.Server
	cfg config
}

// pageKinds are the pages measured: the first page oldest first, the first
// newest first, a page after a cursor on a member deep in the set, and
// after a cursor whose member is gone (its place found by a binary search
// of its score's group).
var pageKinds = []string{"oldest", "newest", "cursor on a member", "cursor off a member"}

// requeueRun is one requeue of every dead job.
type requeueRun struct {
	total         time.Duration
	calls         int
	perCall       int64   // the most jobs one call examined
	callUS, maxUS float64 // server µs per call: mean, and latencystats' p99.9 (it keeps no maximum)
	pingP99       time.Duration
	pingWorstP99  time.Duration // the worst p99 of any one second
	pingMax       time.Duration
	pingIdleP99   time.Duration // over the second before the requeue: the machine's own delays
	pings         int
	requeued      int64
}

func run(ctx context.Context, cfg config, small bool) error {
	srv, err := feature.Start(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	b := &bench{Server: srv, cfg: cfg}
	executors := []trafikey.Executor{trafikey.ExecutorNative, trafikey.ExecutorLua}
	page := map[string][]float64{}
	requeues := map[string][]requeueRun{}
	for round := range cfg.rounds {
		order := slices.Clone(executors)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, e := range order {
			for k, batch := range cfg.batches {
				fmt.Fprintf(os.Stderr, "round %d, %s: planting %d dead jobs …\n", round+1, e, cfg.dead)
				q, err := b.plant(ctx, e)
				if err != nil {
					return err
				}
				if k == 0 {
					if err := b.pages(ctx, e, q, round, page); err != nil {
						return err
					}
				}
				fmt.Fprintf(os.Stderr, "round %d, %s: requeue all, batch %d …\n", round+1, e, batch)
				r, err := b.requeueAll(ctx, e, q, batch)
				if err != nil {
					return err
				}
				if r.requeued != int64(cfg.dead) {
					return fmt.Errorf("%s requeued %d of %d dead jobs", e, r.requeued, cfg.dead)
				}
				requeues[batchKey(e, batch)] = append(requeues[batchKey(e, batch)], r)
			}
		}
	}
	return b.report(ctx, small, page, requeues)
}

// batchKey names the requeue runs of executor e with batch.
func batchKey(e trafikey.Executor, batch int) string { return string(e) + "/" + strconv.Itoa(batch) }

// pages measures every kind of page on q.
func (b *bench) pages(ctx context.Context, e trafikey.Executor, q *trafikey.Queue, round int, page map[string][]float64) error {
	for _, kind := range pageKinds {
		fmt.Fprintf(os.Stderr, "round %d, %s: JOBS, %s …\n", round+1, e, kind)
		us, err := b.pageCost(ctx, e, q, kind)
		if err != nil {
			return err
		}
		page[string(e)+"/"+kind] = append(page[string(e)+"/"+kind], us)
	}
	return nil
}

// report prints the Markdown report.
func (b *bench) report(ctx context.Context, small bool, page map[string][]float64, requeues map[string][]requeueRun) error {
	cfg := b.cfg
	executors := []trafikey.Executor{trafikey.ExecutorNative, trafikey.ExecutorLua}
	var out strings.Builder
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&out, "Machine: %s/%s, %d CPUs, Go %s; one valkey-server (%s); load average at the end %s. Command: `go run ./bench/ops%s`, %d rounds, executors alternating; median (min–max).\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), b.Version(ctx), strings.Join(strings.Fields(string(load))[:3], " "),
		map[bool]string{true: " -small"}[small], cfg.rounds)
	fmt.Fprintf(&out, "**Pages of a large dead set.** %d dead jobs, %d dying in each ms; %d JOBS calls of %d rows (clip %d) per kind of page: the server's µs per call (INFO commandstats).\n\n",
		cfg.dead, cfg.perMS, cfg.pages, cfg.limit, 256)
	fmt.Fprintf(&out, "| executor |")
	for _, k := range pageKinds {
		fmt.Fprintf(&out, " %s |", k)
	}
	fmt.Fprintf(&out, "\n|---|%s\n", strings.Repeat("---|", len(pageKinds)))
	us := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	for _, e := range executors {
		fmt.Fprintf(&out, "| %s |", e)
		for _, k := range pageKinds {
			fmt.Fprintf(&out, " %s |", feature.Spread(page[string(e)+"/"+k], us))
		}
		fmt.Fprintln(&out)
	}
	fmt.Fprintf(&out, "\n**Requeue of every dead job.** The %d dead jobs requeued with the open filter, by `Admin.RequeueDead` (its own calls) and by REQUEUEDEAD called in the same loop with another limit, while another connection sends PING after PING (at most one each 200 µs): the total time, the calls' server time (mean and the slowest call: INFO commandstats and latencystats' p99.9), and the PING round trips (p99 over the run, the worst p99 of any one second, the slowest; and their p99 over the second before, the server idle: what the loaded machine adds by itself).\n\n",
		cfg.dead)
	fmt.Fprintf(&out, "| executor, jobs per call | total | calls | server ms per call | slowest call ms (p99.9) | PING p99 ms | worst 1 s PING p99 ms | slowest PING ms | idle PING p99 ms |\n|---|---|---|---|---|---|---|---|---|\n")
	ms := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	for _, e := range executors {
		for _, batch := range cfg.batches {
			var total, calls, call, slow, p99, worst, pmax, idle []float64
			for _, r := range requeues[batchKey(e, batch)] {
				total = append(total, r.total.Seconds())
				calls = append(calls, float64(r.calls))
				call = append(call, r.callUS/1000)
				slow = append(slow, r.maxUS/1000)
				p99 = append(p99, float64(r.pingP99.Microseconds())/1000)
				worst = append(worst, float64(r.pingWorstP99.Microseconds())/1000)
				pmax = append(pmax, float64(r.pingMax.Microseconds())/1000)
				idle = append(idle, float64(r.pingIdleP99.Microseconds())/1000)
			}
			n := int64(batch)
			if n == 0 && len(requeues[batchKey(e, batch)]) > 0 {
				n = requeues[batchKey(e, batch)][0].perCall
			}
			fmt.Fprintf(&out, "| %s, %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", e, n,
				feature.Spread(total, func(v float64) string { return fmt.Sprintf("%.1f s", v) }),
				feature.Spread(calls, func(v float64) string { return strconv.Itoa(int(v)) }),
				feature.Spread(call, ms), feature.Spread(slow, ms), feature.Spread(p99, ms), feature.Spread(worst, ms), feature.Spread(pmax, ms), feature.Spread(idle, ms))
		}
	}
	fmt.Print(out.String())
	return nil
}

// plant flushes the server, opens the queue with executor e and plants the
// dead jobs.
func (b *bench) plant(ctx context.Context, e trafikey.Executor) (*trafikey.Queue, error) {
	q, err := b.Open(ctx, e, "ops")
	if err != nil {
		return nil, err
	}
	now := time.Now()
	if err := plantDead(ctx, b.Admin, q.Name(), b.cfg.dead, b.cfg.perMS, now); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "planted in %v\n", time.Since(now).Round(time.Millisecond))
	return q, nil
}

// pageCost runs the pages of one kind and returns the server's µs per JOBS
// call.
func (b *bench) pageCost(ctx context.Context, e trafikey.Executor, q *trafikey.Queue, kind string) (float64, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	dead := protocol.Base(q.Name()) + protocol.SuffixDead
	opts := make([]trafikey.JobsOptions, b.cfg.pages)
	for i := range opts {
		opts[i].Limit = b.cfg.limit
		switch kind {
		case "newest":
			opts[i].Newest = true
		case "cursor on a member", "cursor off a member":
			// a place deep in the set, read before the measurement
			rank := strconv.Itoa(b.cfg.dead/4 + rng.IntN(b.cfg.dead/2))
			v, err := b.Admin.Do(ctx, "ZRANGE", dead, rank, rank, "WITHSCORES")
			if err != nil {
				return 0, err
			}
			l, _ := v.([]any)
			if len(l) != 2 {
				return 0, fmt.Errorf("ZRANGE %s %s: %v", dead, rank, v)
			}
			member := fmt.Sprint(l[0])
			if kind == "cursor off a member" {
				member += "x" // not an id of the set: between two members of the score
			}
			score, err := strconv.ParseFloat(fmt.Sprint(l[1]), 64)
			if err != nil {
				return 0, fmt.Errorf("score %v: %w", l[1], err)
			}
			opts[i].After = strconv.FormatInt(int64(score), 10) + ":" + member
		}
	}
	if err := b.ResetStats(ctx); err != nil {
		return 0, err
	}
	for _, o := range opts {
		p, err := q.Jobs(ctx, trafikey.StateDead, o)
		if err != nil {
			return 0, err
		}
		if len(p.Rows) != b.cfg.limit {
			return 0, fmt.Errorf("%s page of %d rows, want %d", kind, len(p.Rows), b.cfg.limit)
		}
	}
	usec, err := b.Usec(ctx, e, protocol.Jobs.Name)
	if err != nil {
		return 0, err
	}
	return usec / float64(b.cfg.pages), nil
}

// requeueAll requeues every dead job of q while a pinger measures: with
// Admin.RequeueDead for batch 0, else with requeueLoop.
func (b *bench) requeueAll(ctx context.Context, e trafikey.Executor, q *trafikey.Queue, batch int) (requeueRun, error) {
	var r requeueRun
	if err := b.ResetStats(ctx); err != nil {
		return r, err
	}
	p, err := startPinger(ctx, b.Srv.Addr())
	if err != nil {
		return r, err
	}
	time.Sleep(time.Second) // the pinger's baseline: the server idle
	start := time.Now()
	var n int64
	if batch == 0 {
		var prev int
		var requeued int
		requeued, err = q.Admin().RequeueDead(ctx, trafikey.DeadFilter{}, func(p trafikey.BulkProgress) {
			r.calls++
			r.perCall = max(r.perCall, int64(p.Examined-prev))
			prev = p.Examined
		})
		n = int64(requeued)
	} else {
		n, r.calls, err = b.requeueLoop(ctx, e, q.Name(), batch)
	}
	r.total = time.Since(start)
	time.Sleep(100 * time.Millisecond)
	rtts, times, perr := p.Stop()
	if err != nil {
		return r, err
	}
	if perr != nil {
		return r, perr
	}
	r.requeued = n
	idle := 0
	for idle < len(times) && times[idle].Before(start) {
		idle++
	}
	r.pingIdleP99 = quantile(rtts[:idle], 0.99)
	rtts, times = rtts[idle:], times[idle:]
	r.pings = len(rtts)
	r.pingP99 = quantile(rtts, 0.99)
	r.pingWorstP99 = worstWindow(rtts, times, time.Second, 0.99)
	r.pingMax = quantile(rtts, 1)
	usec, err := b.Usec(ctx, e, protocol.RequeueDead.Name)
	if err != nil {
		return r, err
	}
	r.callUS = usec / float64(r.calls)
	if r.maxUS, err = b.slowest(ctx, e, protocol.RequeueDead.Name); err != nil {
		return r, err
	}
	return r, nil
}

// slowest is the p99.9 of the server's latency of verb's command since the
// last ResetStats (INFO latencystats), in µs.
func (b *bench) slowest(ctx context.Context, e trafikey.Executor, verb string) (float64, error) {
	v, err := b.Admin.Do(ctx, "INFO", "latencystats")
	if err != nil {
		return 0, err
	}
	name := "latency_percentiles_usec_emq." + verb + ":"
	if e == trafikey.ExecutorLua {
		name = "latency_percentiles_usec_evalsha:"
	}
	for _, line := range strings.Split(fmt.Sprint(v), "\r\n") {
		rest, ok := strings.CutPrefix(strings.ToLower(line), name)
		if !ok {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if x, ok := strings.CutPrefix(f, "p99.9="); ok {
				return strconv.ParseFloat(x, 64)
			}
		}
	}
	return 0, fmt.Errorf("no latencystats for %s", name)
}

// requeueLoop requeues every dead job of queue q with REQUEUEDEAD calls of
// batch jobs examined, as Admin.RequeueDead walks (the open filter up to the
// server's clock at the start, each call after the previous one's cursor),
// and returns the jobs requeued and the calls made.
func (b *bench) requeueLoop(ctx context.Context, e trafikey.Executor, q string, batch int) (int64, int, error) {
	var x executor.Executor = executor.NewNative(b.Client)
	if e == trafikey.ExecutorLua {
		x = executor.NewLua(b.Client)
	}
	t, err := b.Client.Do(ctx, b.Client.B().Time().Build()).AsStrSlice()
	if err != nil || len(t) != 2 {
		return 0, 0, fmt.Errorf("TIME: %v %v", t, err)
	}
	sec, _ := strconv.ParseInt(t[0], 10, 64)
	usec, _ := strconv.ParseInt(t[1], 10, 64)
	now := strconv.FormatInt(sec*1000+usec/1000, 10)
	keys := protocol.RequeueDead.KeyNames(protocol.KeysOf(q))
	limit := strconv.Itoa(batch)
	score, member := "", ""
	var done int64
	for calls := 1; ; calls++ {
		arr, err := x.Exec(ctx, protocol.RequeueDead, keys, []string{limit, score, member, "0", now, "", ""}).ToArray()
		if err != nil || len(arr) != 4 {
			return done, calls, fmt.Errorf("REQUEUEDEAD: %v %v", arr, err)
		}
		taken, _ := arr[0].AsInt64()
		done += taken
		if arr[2].IsNil() {
			return done, calls, nil
		}
		next, _ := arr[2].AsInt64()
		score = strconv.FormatInt(next, 10)
		if member, err = arr[3].ToString(); err != nil {
			return done, calls, err
		}
	}
}
