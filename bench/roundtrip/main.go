// Command roundtrip measures the floor under the benchmark's steady
// lifecycle latency: plain valkey-go round trips to a valkey-server at a
// steady rate, offered and timed the way the steady workload offers and
// times its jobs (50 producers, the k-th operation due at start + k/rate,
// the same client options, the server pinned to CPU 0 and this process to
// CPU 1 with GOMAXPROCS=1).
//
//	ping    one PING: one round trip
//	setget  SET then GET of the same key: two round trips one after the other
//	handoff the producer LPUSHes a timestamp; one of -workers consumers,
//	        each blocked in BLPOP on its own connection, pops it and SETs a
//	        key; the latency is from before the LPUSH to the SET's reply, the
//	        shape of add → blocked claim → complete with no job logic
//
// Each round runs every mode for -steady, modes alternating; the report
// gives each mode's p50 and p99 (µs) per round and the median over the
// rounds, with the load average before and after.
//
//	go run ./bench/roundtrip -rounds 3
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/valkeyserver"
)

type config struct {
	rate      int
	steady    time.Duration
	producers int
	workers   int
	rounds    int
	pin       bool
	modes     []string
}

func main() {
	cfg := config{}
	var modes string
	flag.IntVar(&cfg.rate, "rate", 2000, "offered operations/s")
	flag.DurationVar(&cfg.steady, "steady", 10*time.Second, "length of each mode's run")
	flag.IntVar(&cfg.producers, "producers", 50, "concurrent producers")
	flag.IntVar(&cfg.workers, "workers", 100, "blocked consumers (handoff)")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds, modes alternating")
	flag.BoolVar(&cfg.pin, "pin", true, "pin valkey-server to CPU 0 and this process to CPU 1 with taskset")
	flag.StringVar(&modes, "modes", "ping,setget,handoff", "modes to run: ping, setget, handoff")
	flag.Parse()
	cfg.modes = strings.Split(modes, ",")
	for _, m := range cfg.modes {
		if _, ok := runners[m]; !ok {
			fmt.Fprintf(os.Stderr, "roundtrip: unknown mode %q\n", m)
			os.Exit(2)
		}
	}
	if err := run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "roundtrip:", err)
		os.Exit(1)
	}
}

// modeFunc prepares a mode's run: op performs operation k and returns its
// latency (negative when the latency is recorded elsewhere); stop, when not
// nil, ends the run and returns the latencies recorded elsewhere.
type modeFunc func(ctx context.Context, c valkey.Client, cfg config) (op func(ctx context.Context, k int) (time.Duration, error), stop func() ([]time.Duration, error), err error)

// runners are the modes by name.
var runners = map[string]modeFunc{
	"ping": func(ctx context.Context, c valkey.Client, cfg config) (func(context.Context, int) (time.Duration, error), func() ([]time.Duration, error), error) {
		return func(ctx context.Context, k int) (time.Duration, error) {
			t0 := time.Now()
			err := c.Do(ctx, c.B().Ping().Build()).Error()
			return time.Since(t0), err
		}, nil, nil
	},
	"setget": func(ctx context.Context, c valkey.Client, cfg config) (func(context.Context, int) (time.Duration, error), func() ([]time.Duration, error), error) {
		return func(ctx context.Context, k int) (time.Duration, error) {
			key := "rt:" + strconv.Itoa(k)
			t0 := time.Now()
			if err := c.Do(ctx, c.B().Set().Key(key).Value("x").Build()).Error(); err != nil {
				return 0, err
			}
			v, err := c.Do(ctx, c.B().Get().Key(key).Build()).ToString()
			if err == nil && v != "x" {
				err = fmt.Errorf("GET %s = %q, want %q", key, v, "x")
			}
			return time.Since(t0), err
		}, nil, nil
	},
	"handoff": handoff,
}

// handoff starts cfg.workers consumers blocked in BLPOP (valkey-go gives
// each blocking call a dedicated connection); op pushes its start time and
// returns no latency of its own: the consumers record from the pushed time
// to the reply of their SET.
func handoff(ctx context.Context, c valkey.Client, cfg config) (func(context.Context, int) (time.Duration, error), func() ([]time.Duration, error), error) {
	const list = "rt:list"
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var lats []time.Duration
	var failed error
	var wg sync.WaitGroup
	var waiting atomic.Int64
	base := time.Now()
	for range cfg.workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				waiting.Add(1)
				kv, err := c.Do(ctx, c.B().Blpop().Key(list).Timeout(1).Build()).AsStrSlice()
				waiting.Add(-1)
				if valkey.IsValkeyNil(err) {
					continue
				}
				if err != nil {
					if ctx.Err() == nil {
						mu.Lock()
						failed = err
						mu.Unlock()
					}
					return
				}
				ns, perr := strconv.ParseInt(kv[1], 10, 64)
				if perr != nil {
					mu.Lock()
					failed = perr
					mu.Unlock()
					return
				}
				if err := c.Do(ctx, c.B().Set().Key("rt:done:"+kv[1]).Value("1").Build()).Error(); err != nil {
					if ctx.Err() == nil {
						mu.Lock()
						failed = err
						mu.Unlock()
					}
					return
				}
				d := time.Since(base) - time.Duration(ns)
				mu.Lock()
				lats = append(lats, d)
				mu.Unlock()
			}
		})
	}
	for waiting.Load() < int64(cfg.workers) {
		time.Sleep(time.Millisecond)
	}
	op := func(ctx context.Context, k int) (time.Duration, error) {
		ns := strconv.FormatInt(int64(time.Since(base)), 10)
		return -1, c.Do(ctx, c.B().Lpush().Key(list).Element(ns).Build()).Error()
	}
	stop := func() ([]time.Duration, error) {
		// Every pushed value is popped before the run ends: wait for the list
		// to drain and the last SETs to return.
		for {
			n, err := c.Do(context.Background(), c.B().Llen().Key(list).Build()).AsInt64()
			if err != nil {
				cancel()
				wg.Wait()
				return nil, err
			}
			if n == 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return lats, failed
	}
	return op, stop, nil
}

func run(ctx context.Context, cfg config) error {
	srv, err := valkeyserver.Start(ctx, valkeyserver.Options{})
	if err != nil {
		return err
	}
	defer srv.Stop()
	pinNote := "not pinned"
	if cfg.pin && runtime.NumCPU() >= 2 {
		if out, err := exec.Command("taskset", "-a", "-p", "-c", "1", strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
			return fmt.Errorf("taskset self: %v: %s", err, out)
		}
		if out, err := exec.Command("taskset", "-a", "-p", "-c", "0", strconv.Itoa(srv.PID())).CombinedOutput(); err != nil {
			return fmt.Errorf("taskset server: %v: %s", err, out)
		}
		runtime.GOMAXPROCS(1)
		pinNote = "valkey-server pinned to CPU 0, this process to CPU 1 (GOMAXPROCS=1)"
	}
	version, _ := srv.Info(ctx, "server")
	c, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{srv.Addr()}, DisableCache: true})
	if err != nil {
		return err
	}
	defer c.Close()

	loadStart := loadAvg()
	p50s := map[string][]float64{}
	p99s := map[string][]float64{}
	var rows []string
	for r := range cfg.rounds {
		for _, mode := range rotate(cfg.modes, r) {
			lats, err := runMode(ctx, c, cfg, mode)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, mode, err)
			}
			want := int(float64(cfg.rate) * cfg.steady.Seconds())
			if len(lats) != want {
				return fmt.Errorf("round %d, %s: %d operations timed, want %d", r+1, mode, len(lats), want)
			}
			p50, p99 := quantile(lats, 0.50), quantile(lats, 0.99)
			p50s[mode] = append(p50s[mode], p50)
			p99s[mode] = append(p99s[mode], p99)
			rows = append(rows, fmt.Sprintf("| %d | %s | %.0f | %.0f | %s |", r+1, mode, p50, p99, loadAvg()))
		}
	}
	fmt.Printf("valkey-server %s; %s; %s; %d/s for %s, %d producers, %d rounds; load average at the start %s, at the end %s\n\n",
		valkeyserver.InfoField(version, "valkey_version"), pinNote, runtime.Version(), cfg.rate, cfg.steady, cfg.producers, cfg.rounds, loadStart, loadAvg())
	fmt.Println("| round | mode | p50 µs | p99 µs | load after |")
	fmt.Println("|---:|---|---:|---:|---|")
	for _, row := range rows {
		fmt.Println(row)
	}
	fmt.Println()
	fmt.Println("| mode | p50 µs, median (min–max) | p99 µs, median (min–max) |")
	fmt.Println("|---|---:|---:|")
	for _, mode := range cfg.modes {
		fmt.Printf("| %s | %s | %s |\n", mode, medRange(p50s[mode]), medRange(p99s[mode]))
	}
	return nil
}

// runMode offers cfg.rate operations a second for cfg.steady from
// cfg.producers producers, the k-th due at start + k/rate, and returns each
// operation's latency.
func runMode(ctx context.Context, c valkey.Client, cfg config, mode string) ([]time.Duration, error) {
	op, stop, err := runners[mode](ctx, c, cfg)
	if err != nil {
		return nil, err
	}
	n := int(float64(cfg.rate) * cfg.steady.Seconds())
	interval := time.Second / time.Duration(cfg.rate)
	lats := make([]time.Duration, 0, n)
	var mu sync.Mutex
	var next atomic.Int64
	var firstErr error
	var wg sync.WaitGroup
	t0 := time.Now()
	for range cfg.producers {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				if d := time.Until(t0.Add(time.Duration(k) * interval)); d > 0 {
					time.Sleep(d)
				}
				d, err := op(ctx, k)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if d >= 0 {
					lats = append(lats, d)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if stop != nil {
		ls, err := stop()
		if err != nil && firstErr == nil {
			firstErr = err
		}
		lats = append(lats, ls...)
	}
	return lats, firstErr
}

func rotate(s []string, r int) []string {
	r %= len(s)
	return append(slices.Clone(s[r:]), s[:r]...)
}

// quantile is the q-quantile of ds in µs (nearest rank).
func quantile(ds []time.Duration, q float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := max(0, min(int(q*float64(len(s))+0.999999)-1, len(s)-1))
	return float64(s[i]) / 1e3
}

func medRange(xs []float64) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("%.0f (%.0f–%.0f)", s[len(s)/2], s[0], s[len(s)-1])
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return "?"
	}
	return f[0]
}
