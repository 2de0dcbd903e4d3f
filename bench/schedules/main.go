// Command schedules measures what the schedule step costs the server, on
// one valkey-server with the trafikey module, for each executor: a queue
// holding 10,000 interval schedules, the step run as a worker runs it
// (SCHEDULE.DUE of up to -limit due schedules, then one SCHEDULE.FIRE per
// due schedule, with the occurrences computed from its state), and the
// server's µs from INFO commandstats: per DUE call, per FIRE that takes no
// occurrence (a schedule due for its first computation), per FIRE that
// enqueues one job, and per schedule of a whole step.
//
//	go run ./bench/schedules          # the full sizes, a Markdown report on stdout
//	go run ./bench/schedules -small   # seconds, for a check
//
// Each measurement runs -rounds times, alternating the executors; the report
// gives the median and the range.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/bench/internal/feature"
	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/protocol"
)

type config struct {
	rounds    int
	schedules int           // schedules on the queue
	every     time.Duration // their interval
	limit     int           // SCHEDULE.DUE's limit: the schedules one step takes
	fires     int           // FIREs with one occurrence measured per round
	parallel  int           // FIREs in flight at once
	executors []trafikey.Executor
}

func main() {
	cfg := config{}
	small := flag.Bool("small", false, "small sizes: a check in seconds, not a measurement")
	flag.IntVar(&cfg.rounds, "rounds", 5, "rounds per measurement, executors alternating")
	flag.IntVar(&cfg.limit, "limit", 100, "SCHEDULE.DUE's limit: schedules per step")
	execs := flag.String("executors", "native,lua", "executors to measure")
	flag.Parse()
	for _, e := range strings.Split(*execs, ",") {
		cfg.executors = append(cfg.executors, trafikey.Executor(e))
	}
	cfg.schedules, cfg.every, cfg.fires, cfg.parallel = 10_000, 3*time.Second, 10_000, 32
	if *small {
		cfg.schedules, cfg.every, cfg.fires, cfg.rounds = 500, time.Second, 500, 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "schedules:", err)
		os.Exit(1)
	}
}

type bench struct {
	*feature.Server
	cfg config
}

// result is one round's server µs of one executor.
type result struct {
	due      float64 // per DUE call
	fireNone float64 // per FIRE of no occurrence
	fireOne  float64 // per FIRE of one occurrence (one job added)
	step     float64 // per schedule of a step: DUE's share and one FIRE of one occurrence
}

func run(ctx context.Context, cfg config) error {
	srv, err := feature.Start(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	b := &bench{Server: srv, cfg: cfg}
	executors := cfg.executors
	res := map[trafikey.Executor][]result{}
	for round := range cfg.rounds {
		order := slices.Clone(executors)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, e := range order {
			fmt.Fprintf(os.Stderr, "round %d, %s …\n", round+1, e)
			r, err := b.round(ctx, e)
			if err != nil {
				return fmt.Errorf("%s: %w", e, err)
			}
			res[e] = append(res[e], r)
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "Machine: %s/%s, %d CPUs, Go %s; one valkey-server (%s). Command: `%s`, %d rounds, executors alternating; median (min–max).\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), b.Version(ctx), strings.Join(append([]string{"go run ./bench/schedules"}, os.Args[1:]...), " "), cfg.rounds)
	fmt.Fprintf(&out, "**The schedule step.** %d schedules of an interval of %v on one queue, each with a 16-byte payload; steps of SCHEDULE.DUE (limit %d) and one SCHEDULE.FIRE per due schedule, the occurrences computed from its state; %d FIREs of one occurrence per round. The server's µs (`usec` in INFO commandstats over the calls).\n\n",
		cfg.schedules, cfg.every, cfg.limit, cfg.fires)
	fmt.Fprintf(&out, "| executor | DUE, per call | FIRE, no occurrence | FIRE, one job | step, per schedule |\n|---|---|---|---|---|\n")
	f := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	for _, e := range executors {
		pick := func(g func(result) float64) string {
			xs := make([]float64, len(res[e]))
			for i, r := range res[e] {
				xs[i] = g(r)
			}
			return feature.Spread(xs, f)
		}
		fmt.Fprintf(&out, "| %s | %s | %s | %s | %s |\n", e,
			pick(func(r result) float64 { return r.due }),
			pick(func(r result) float64 { return r.fireNone }),
			pick(func(r result) float64 { return r.fireOne }),
			pick(func(r result) float64 { return r.step }))
	}
	fmt.Print(out.String())
	return nil
}

// sched is one due schedule as DUE replies it.
type sched struct {
	id        string
	rev, last int64
}

// round opens a fresh queue on e, defines the schedules, and measures.
func (b *bench) round(ctx context.Context, e trafikey.Executor) (result, error) {
	const q = "sched"
	if _, err := b.Open(ctx, e, q); err != nil {
		return result{}, err
	}
	var ex executor.Executor = executor.NewNative(b.Client)
	if e == trafikey.ExecutorLua {
		ex = executor.NewLua(b.Client)
	}
	keys := protocol.KeysOf(q)
	every := strconv.FormatInt(b.cfg.every.Milliseconds(), 10)
	payload := strings.Repeat("p", 16)
	err := b.parallel(ctx, b.cfg.schedules, func(i int) error {
		args := []string{"s" + strconv.Itoa(i), protocol.ScheduleEvery, every, "", "0", "0", "0", "0",
			"86400000", "1", payload, "0", "3", protocol.BackoffFixed, "1000", "", "0", "0"}
		return ex.Exec(ctx, protocol.ScheduleSet, protocol.ScheduleSet.KeyNames(keys), args).Error()
	})
	if err != nil {
		return result{}, err
	}
	var r result
	var dueUS, dueCalls, noneUS, noneCalls, oneUS, oneCalls, stepFired float64
	for oneCalls < float64(b.cfg.fires) {
		if err := ctx.Err(); err != nil {
			return result{}, err
		}
		// DUE, alone between two readings of the server's time
		u0, err := b.Usec(ctx, e, "schedule.due")
		if err != nil {
			return result{}, err
		}
		now, due, err := b.due(ctx, ex, keys)
		if err != nil {
			return result{}, err
		}
		u1, err := b.Usec(ctx, e, "schedule.due")
		if err != nil {
			return result{}, err
		}
		if len(due) == 0 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		dueUS += u1 - u0
		dueCalls++
		// the occurrences of each: last + k·every up to now (an interval
		// without a start counts from the last fired time); FIRE sets last
		// to now, so the next is now + every
		every := b.cfg.every.Milliseconds()
		var groups [2][][]string // no occurrence, one
		for _, s := range due {
			var times []int64
			for t := s.last + every; t <= now && len(times) < protocol.MaxScheduleFire; t += every {
				times = append(times, t)
			}
			args := []string{s.id, strconv.FormatInt(s.rev, 10), strconv.FormatInt(s.last, 10),
				strconv.FormatInt(now, 10), strconv.FormatInt(now+every, 10), strconv.Itoa(len(times))}
			for _, t := range times {
				args = append(args, strconv.FormatInt(t, 10), "0")
			}
			g := min(len(times), 1)
			groups[g] = append(groups[g], args)
		}
		// each group's FIREs between two readings
		var spent [2]float64
		for g, fires := range groups {
			if len(fires) == 0 {
				continue
			}
			u2, err := b.Usec(ctx, e, "schedule.fire")
			if err != nil {
				return result{}, err
			}
			err = b.parallel(ctx, len(fires), func(i int) error {
				return ex.Exec(ctx, protocol.ScheduleFire, protocol.ScheduleFire.KeyNames(keys), fires[i]).Error()
			})
			if err != nil {
				return result{}, err
			}
			u3, err := b.Usec(ctx, e, "schedule.fire")
			if err != nil {
				return result{}, err
			}
			spent[g] = u3 - u2
		}
		noneUS += spent[0]
		noneCalls += float64(len(groups[0]))
		oneUS += spent[1]
		oneCalls += float64(len(groups[1]))
		if len(groups[0]) == 0 {
			// a step of schedules that are all on their interval
			r.step += spent[1] + u1 - u0
			stepFired += float64(len(groups[1]))
		}
	}
	if dueCalls == 0 || noneCalls == 0 || oneCalls == 0 || stepFired == 0 {
		return result{}, errors.New("no step measured")
	}
	r.due, r.fireNone, r.fireOne, r.step = dueUS/dueCalls, noneUS/noneCalls, oneUS/oneCalls, r.step/stepFired
	return r, nil
}

// due runs SCHEDULE.DUE and parses its reply: the server's time and the
// due schedules' ids and states.
func (b *bench) due(ctx context.Context, ex executor.Executor, keys protocol.Keys) (int64, []sched, error) {
	v := ex.Exec(ctx, protocol.ScheduleDue, protocol.ScheduleDue.KeyNames(keys), []string{strconv.Itoa(b.cfg.limit)})
	arr, err := v.ToArray()
	if err != nil {
		return 0, nil, err
	}
	if len(arr) == 0 {
		return 0, nil, errors.New("DUE: an empty reply")
	}
	now, err := arr[0].AsInt64()
	if err != nil {
		return 0, nil, err
	}
	out := make([]sched, 0, len(arr)-1)
	for _, e := range arr[1:] {
		entry, err := e.ToArray()
		if err != nil || len(entry) != 3 {
			return 0, nil, fmt.Errorf("DUE: entry %v: %v", e, err)
		}
		id, _ := entry[0].ToString()
		state, _ := entry[2].ToString()
		parts := strings.Fields(state)
		if len(parts) != 5 {
			return 0, nil, fmt.Errorf("DUE: state %q", state)
		}
		s := sched{id: id}
		s.rev, _ = strconv.ParseInt(parts[0], 10, 64)
		s.last, _ = strconv.ParseInt(parts[2], 10, 64)
		out = append(out, s)
	}
	return now, out, nil
}

// parallel runs f(0) … f(n−1) with at most cfg.parallel in flight (the
// client pipelines them) and returns the first error.
func (b *bench) parallel(ctx context.Context, n int, f func(int) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for range min(b.cfg.parallel, n) {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
