// Command reshard measures what moving a queue's hash slot to another
// primary costs its clients, on a two-primary cluster (Lua executor: the
// keys a queue has, which the move carries, are the same on both).
//
// The classic move (CLUSTER SETSLOT MIGRATING/IMPORTING, MIGRATE in batches,
// SETSLOT NODE, as valkey-cli --cluster reshard does) refuses every verb of
// the queue with TRYAGAIN from MIGRATING until the target owns the slot,
// since each verb names several keys of the queue and one of them never
// exists: the window grows with the queue's keys (one per job) and shrinks
// with the MIGRATE batch. For each backlog and batch it reports the window
// (valkeyserver.Migration.Window) and the longest Add of a producer that adds
// throughout (the client retries TRYAGAIN, so the window shows as latency).
// On Valkey 9.0+ it also moves the slot with atomic slot migration
// (CLUSTER MIGRATESLOTS) and reports the move's time and the longest Add.
//
//	go run ./bench/reshard                # 1k, 10k and 100k pending jobs; batches of 10 and 1000
//	go run ./bench/reshard -small         # seconds, for a check
//
// Each measurement runs -rounds times; the report (Markdown, on stdout)
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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/bench/internal/feature"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

type config struct {
	rounds  int
	backlog []int // pending jobs of the moved queue
	batches []int // keys per MIGRATE
}

func main() {
	cfg := config{}
	small := flag.Bool("small", false, "small sizes: a check in seconds, not a measurement")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds per measurement")
	flag.Parse()
	cfg.backlog, cfg.batches = []int{1000, 10_000, 100_000}, []int{10, 1000}
	if *small {
		cfg.backlog, cfg.rounds = []int{1000}, 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "reshard:", err)
		os.Exit(1)
	}
}

// bench is the cluster, a client of it and the queue that moves.
type bench struct {
	cl     *valkeyserver.Cluster
	client valkey.Client
	name   string
	slot   int
}

// result is one move: its window (classic) or its whole time (atomic), the
// MIGRATE calls, and the longest Add while it ran.
type result struct {
	window, maxAdd time.Duration
	batches        int
}

func run(ctx context.Context, cfg config) error {
	cl, err := valkeyserver.StartCluster(ctx, valkeyserver.ClusterOptions{Primaries: 2})
	if err != nil {
		return err
	}
	defer func() { _ = cl.Stop() }()
	client, err := valkey.NewClient(valkey.ClientOption{InitAddress: cl.Addrs(), DisableCache: true})
	if err != nil {
		return err
	}
	defer client.Close()
	b := &bench{cl: cl, client: client, name: "moving"}
	v, err := cl.Primaries()[0].Do(ctx, "CLUSTER", "KEYSLOT", "{"+b.name+"}")
	if err != nil {
		return err
	}
	b.slot = int(v.(int64))
	version, err := cl.Primaries()[0].Version(ctx)
	if err != nil {
		return err
	}

	classic := map[string][]result{}
	atomic := map[int][]result{}
	for round := range cfg.rounds {
		for _, n := range cfg.backlog {
			for _, batch := range cfg.batches {
				fmt.Fprintf(os.Stderr, "round %d: %d pending, MIGRATE batches of %d …\n", round+1, n, batch)
				r, err := b.move(ctx, n, func(from, to *valkeyserver.Server) (result, error) {
					m, err := cl.MigrateSlot(ctx, b.slot, from, to, batch)
					return result{window: m.Window, batches: m.Batches}, err
				})
				if err != nil {
					return err
				}
				k := strconv.Itoa(n) + "/" + strconv.Itoa(batch)
				classic[k] = append(classic[k], r)
			}
			if version.AtLeast("valkey", 9, 0) {
				fmt.Fprintf(os.Stderr, "round %d: %d pending, atomic slot migration …\n", round+1, n)
				r, err := b.move(ctx, n, func(from, to *valkeyserver.Server) (result, error) {
					start := time.Now()
					err := cl.MigrateSlotAtomic(ctx, b.slot, from, to)
					return result{window: time.Since(start)}, err
				})
				if err != nil {
					return err
				}
				atomic[n] = append(atomic[n], r)
			}
		}
	}
	report(cfg, version, classic, atomic)
	return nil
}

// move fills the queue with n pending jobs, then moves its slot from its
// owner to the other primary with migrate while a producer adds to it, and
// returns migrate's result with the producer's longest Add.
func (b *bench) move(ctx context.Context, n int, migrate func(from, to *valkeyserver.Server) (result, error)) (result, error) {
	for _, p := range b.cl.Primaries() {
		if _, err := p.Do(ctx, "FLUSHALL"); err != nil {
			return result{}, err
		}
	}
	q, err := trafikey.Open(ctx, b.client, b.name, &trafikey.QueueOptions{Executor: trafikey.ExecutorLua})
	if err != nil {
		return result{}, err
	}
	jobs := make([]trafikey.JobSpec, n)
	for i := range jobs {
		jobs[i] = trafikey.JobSpec{Payload: []byte("0123456789abcdef0123456789abcdef")}
	}
	if _, err := q.AddBatch(ctx, jobs); err != nil {
		return result{}, err
	}
	from, to, err := b.owners(ctx)
	if err != nil {
		return result{}, err
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var maxAdd time.Duration
	var addErr error
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			if _, err := q.Add(ctx, []byte("during the move"), nil); err != nil {
				addErr = err
				return
			}
			maxAdd = max(maxAdd, time.Since(start))
		}
	})
	r, err := migrate(from, to)
	close(stop)
	wg.Wait()
	r.maxAdd = maxAdd
	return r, errors.Join(err, addErr)
}

// owners returns the primary that owns the queue's slot and the other.
func (b *bench) owners(ctx context.Context) (from, to *valkeyserver.Server, err error) {
	ps := b.cl.Primaries()
	id, err := valkeyserver.NodeID(ctx, ps[0])
	if err != nil {
		return nil, nil, err
	}
	owner, err := valkeyserver.SlotOwner(ctx, ps[0], b.slot)
	if err != nil {
		return nil, nil, err
	}
	if owner == id {
		return ps[0], ps[1], nil
	}
	return ps[1], ps[0], nil
}

func spread(rs []result, f func(result) time.Duration) string {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = float64(f(r).Microseconds()) / 1000
	}
	return feature.Spread(xs, func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) })
}

func report(cfg config, version valkeyserver.Version, classic map[string][]result, atomic map[int][]result) {
	fmt.Printf("%s, two primaries on loopback, %d CPUs (%s), %s; %d rounds, median (min–max), ms.\n\n",
		version, runtime.NumCPU(), cpuModel(), runtime.GOOS+"/"+runtime.GOARCH, cfg.rounds)
	fmt.Println("| pending jobs | keys per MIGRATE | MIGRATE calls | TRYAGAIN window | longest Add |")
	fmt.Println("|---:|---:|---:|---:|---:|")
	for _, n := range cfg.backlog {
		for _, batch := range cfg.batches {
			rs := classic[strconv.Itoa(n)+"/"+strconv.Itoa(batch)]
			calls := 0
			if len(rs) > 0 {
				calls = rs[0].batches
			}
			fmt.Printf("| %d | %d | %d | %s | %s |\n", n, batch, calls,
				spread(rs, func(r result) time.Duration { return r.window }),
				spread(rs, func(r result) time.Duration { return r.maxAdd }))
		}
	}
	if len(atomic) == 0 {
		fmt.Printf("\n%s has no atomic slot migration (Valkey 9.0+).\n", version)
		return
	}
	fmt.Println("\n| pending jobs | atomic move (MIGRATESLOTS to owner change) | longest Add |")
	fmt.Println("|---:|---:|---:|")
	for _, n := range cfg.backlog {
		rs := atomic[n]
		fmt.Printf("| %d | %s | %s |\n", n,
			spread(rs, func(r result) time.Duration { return r.window }),
			spread(rs, func(r result) time.Duration { return r.maxAdd }))
	}
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "?".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
