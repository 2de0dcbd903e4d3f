// Command partitions measures partitioned queues (QueueOptions.Partitions)
// on clusters of valkey-server processes with the trafikey module, started on
// loopback by the program itself, without replicas:
//
//   - cost: the server CPU µs per job on each primary of a 3-primary cluster
//     (INFO cpu, user + sys, over the measured part, divided by the jobs of
//     the partitions that primary holds), for an unpartitioned queue and for
//     queues of 3, 12 and 48 partitions, on three workloads: add (concurrent
//     single Adds), batch (AddBatch of 100) and process (a Worker at
//     concurrency 100 over a pre-added backlog, no-op handler);
//   - balance: from the add runs, the jobs per primary (max ÷ mean); and in
//     a process run of its own, the jobs claimed from each partition up to
//     the last moment every partition still had pending jobs (max and min ÷
//     even);
//   - scaling: process throughput of one partitioned queue on a 2-primary
//     cluster against the same queue on a 1-primary cluster, each primary
//     pinned to a core of its own, with this process's CPU beside it;
//   - rate: claims per 1-second window of 4 workers on a queue of 12
//     partitions under Admin.SetRate(1000, time.Second), and the most in any
//     second as the client saw them and as the partitions' rate logs hold
//     them (the servers' clocks);
//   - idle: the commands per second one idle worker over 48 partitions costs
//     the primaries (INFO stats total_commands_processed).
//
// Each measurement runs -rounds times; the report (Markdown, on stdout)
// gives the median and the range (min–max), and the figures against their
// targets.
//
//	go run ./bench/partitions                 # the full sizes
//	go run ./bench/partitions -short          # a check in a minute or two, not a measurement
//	go run ./bench/partitions -executor lua   # the Lua scripts on the same servers
//	go run ./bench/partitions -only rate,idle # some of the measurements
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/bench/internal/feature"
	"github.com/trafikey/trafikey/bench/internal/noop"
	"github.com/trafikey/trafikey/internal/modbuild"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/repo"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

type config struct {
	rounds     int
	executor   trafikey.Executor
	parts      []string // the measurements to run: cost, scale, rate, idle
	partitions []int    // partition counts of the cost runs; 1 is an unpartitioned queue
	jobs       int      // jobs per add and process cost run
	batchJobs  int      // jobs per batch cost run
	producers  int      // concurrent producers of the add and batch runs
	batch      int      // jobs per AddBatch
	workers    int      // worker concurrency of the process runs
	scaleParts int      // partitions of the scaling queue
	scaleJobs  int      // jobs per scaling run
	scaleWorks int      // Worker values of a scaling run, each at concurrency workers
	pin        bool     // pin the scaling runs' primaries to cores of their own
	rateParts  int      // partitions of the rate-limited queue
	rateLimit  int      // jobs per second of the rate limit
	rateWorker int      // Worker values of the rate run
	rateFor    time.Duration
	idleParts  int // partitions of the idle queue
	idleFor    time.Duration
	module     string // the module to load; built from this checkout when empty
}

func main() {
	cfg := config{producers: 64, batch: 100, workers: 100, rateLimit: 1000, rateWorker: 4}
	short := flag.Bool("short", false, "small sizes and short windows: a check in a minute or two, not a measurement")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds per measurement")
	executor := flag.String("executor", "native", "executor of the queues: native or lua (the module is loaded either way)")
	only := flag.String("only", "cost,scale,rate,idle", "measurements to run, comma-separated")
	partitions := flag.String("partitions", "1,3,12,48", "partition counts of the cost runs (1: an unpartitioned queue)")
	flag.IntVar(&cfg.jobs, "jobs", 50_000, "jobs per add and process cost run")
	flag.IntVar(&cfg.batchJobs, "batch-jobs", 200_000, "jobs per batch cost run")
	flag.IntVar(&cfg.scaleParts, "scale-partitions", 12, "partitions of the scaling queue")
	flag.IntVar(&cfg.scaleJobs, "scale-jobs", 200_000, "jobs per scaling run")
	flag.IntVar(&cfg.scaleWorks, "scale-workers", 2, "Worker values of a scaling run, each at concurrency 100")
	flag.BoolVar(&cfg.pin, "pin", true, "pin each primary of the scaling runs to a core of its own (taskset)")
	flag.IntVar(&cfg.rateParts, "rate-partitions", 12, "partitions of the rate-limited queue")
	flag.DurationVar(&cfg.rateFor, "rate-for", 20*time.Second, "length of a rate run (whole seconds)")
	flag.IntVar(&cfg.idleParts, "idle-partitions", 48, "partitions of the idle queue")
	flag.DurationVar(&cfg.idleFor, "idle-for", 20*time.Second, "length of an idle run")
	flag.StringVar(&cfg.module, "module", "", "the trafikey module to load (default: built from this checkout)")
	flag.Parse()
	if *short {
		cfg.rounds, cfg.jobs, cfg.batchJobs, cfg.scaleJobs = 1, 5000, 20_000, 20_000
		cfg.rateFor, cfg.idleFor = 3*time.Second, 3*time.Second
	}
	cfg.executor = trafikey.Executor(*executor)
	cfg.parts = strings.Split(*only, ",")
	for _, s := range strings.Split(*partitions, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "partitions: -partitions %q: want positive counts\n", *partitions)
			os.Exit(2)
		}
		cfg.partitions = append(cfg.partitions, n)
	}
	if err := cfg.check(); err != nil {
		fmt.Fprintln(os.Stderr, "partitions:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "partitions:", err)
		os.Exit(1)
	}
}

func (cfg config) check() error {
	if cfg.executor != trafikey.ExecutorNative && cfg.executor != trafikey.ExecutorLua {
		return fmt.Errorf("-executor %q: want native or lua", cfg.executor)
	}
	for _, p := range cfg.parts {
		if !slices.Contains([]string{"cost", "scale", "rate", "idle"}, p) {
			return fmt.Errorf("-only: unknown measurement %q (cost, scale, rate, idle)", p)
		}
	}
	if cfg.rounds < 1 || cfg.jobs < 1 || cfg.batchJobs < 1 || cfg.scaleJobs < 1 || cfg.scaleParts < 1 || cfg.scaleWorks < 1 ||
		cfg.rateParts < 1 || cfg.idleParts < 1 || cfg.rateFor < time.Second || cfg.idleFor <= 0 {
		return errors.New("-rounds, the job counts and the partition counts must be positive, -rate-for at least 1s and -idle-for positive")
	}
	return nil
}

func (cfg config) runs(part string) bool { return slices.Contains(cfg.parts, part) }

// run runs the measurements cfg asks for, writes the report to out and
// returns its figures.
func run(ctx context.Context, cfg config, out io.Writer) (*report, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	if cfg.module == "" {
		fmt.Fprintln(os.Stderr, "building the module …")
		if cfg.module, err = modbuild.Cached(ctx, root); err != nil {
			return nil, err
		}
	}
	r := &report{cfg: cfg, start: time.Now(), load0: loadAvg(), loads: map[string]string{}, tree: tree(root)}
	if cfg.runs("cost") || cfg.runs("rate") || cfg.runs("idle") {
		c, err := startCluster(ctx, cfg, 3)
		if err != nil {
			return nil, err
		}
		r.version = c.version
		err = func() error {
			defer c.stop()
			if cfg.runs("cost") {
				if err := r.section("cost", func() error { return r.costs(ctx, c) }); err != nil {
					return fmt.Errorf("cost: %w", err)
				}
			}
			if cfg.runs("rate") {
				if err := r.section("rate", func() error { return r.rates(ctx, c) }); err != nil {
					return fmt.Errorf("rate: %w", err)
				}
			}
			if cfg.runs("idle") {
				if err := r.section("idle", func() error { return r.idles(ctx, c) }); err != nil {
					return fmt.Errorf("idle: %w", err)
				}
			}
			return nil
		}()
		if err != nil {
			return nil, err
		}
	}
	if cfg.runs("scale") {
		if err := r.section("scale", func() error { return r.scaling(ctx) }); err != nil {
			return nil, fmt.Errorf("scale: %w", err)
		}
	}
	r.write(out)
	return r, nil
}

// cluster is a running cluster, an admin connection to each primary and a
// client of the whole.
type cluster struct {
	cl      *valkeyserver.Cluster
	admins  []*valkeyserver.Conn // one per primary, in slot order
	client  *countingClient      // every queue's client, counting the commands it sends
	owner   []int                // primary index of each slot
	version string
	shardOf map[string]int // partition tag → primary index
	pinned  string         // how the primaries were pinned, for the report
}

func startCluster(ctx context.Context, cfg config, primaries int) (*cluster, error) {
	fmt.Fprintf(os.Stderr, "starting a %d-primary cluster …\n", primaries)
	cl, err := valkeyserver.StartCluster(ctx, valkeyserver.ClusterOptions{Primaries: primaries, Base: valkeyserver.Options{Module: cfg.module}})
	if err != nil {
		return nil, err
	}
	c := &cluster{cl: cl, owner: make([]int, valkeyserver.NumSlots), shardOf: map[string]int{}}
	if err := c.init(ctx); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *cluster) init(ctx context.Context) error {
	port := map[int64]int{}
	for i, p := range c.cl.Primaries() {
		conn, err := p.Dial(ctx)
		if err != nil {
			return err
		}
		c.admins = append(c.admins, conn)
		port[int64(p.Port())] = i
	}
	v, err := c.admins[0].Do(ctx, "CLUSTER", "SLOTS")
	if err != nil {
		return err
	}
	for i := range c.owner {
		c.owner[i] = -1
	}
	ranges, _ := v.([]any)
	for _, e := range ranges {
		r, _ := e.([]any)
		if len(r) < 3 {
			return fmt.Errorf("CLUSTER SLOTS: unexpected entry %v", e)
		}
		lo, _ := r[0].(int64)
		hi, _ := r[1].(int64)
		node, _ := r[2].([]any)
		if len(node) < 2 {
			return fmt.Errorf("CLUSTER SLOTS: unexpected node %v", r[2])
		}
		p, _ := node[1].(int64)
		idx, ok := port[p]
		if !ok {
			return fmt.Errorf("CLUSTER SLOTS: port %d is none of the primaries", p)
		}
		for s := lo; s <= hi; s++ {
			c.owner[s] = idx
		}
	}
	if slices.Contains(c.owner, -1) {
		return errors.New("CLUSTER SLOTS: a slot without an owner")
	}
	ver, err := c.cl.Primaries()[0].Version(ctx)
	if err != nil {
		return err
	}
	c.version = ver.String()
	client, err := valkey.NewClient(valkey.ClientOption{InitAddress: c.cl.Addrs(), DisableCache: true})
	if err != nil {
		return err
	}
	c.client = newCountingClient(client)
	return nil
}

func (c *cluster) stop() {
	if c.client != nil {
		c.client.Close()
	}
	for _, a := range c.admins {
		_ = a.Close()
	}
	_ = c.cl.Stop()
}

// flush empties every primary.
func (c *cluster) flush(ctx context.Context) error {
	for _, a := range c.admins {
		if _, err := a.Do(ctx, "FLUSHALL", "SYNC"); err != nil {
			return err
		}
	}
	return nil
}

// pin pins every thread of primary i to CPU i (taskset -a -c -p).
func (c *cluster) pin() error {
	var notes []string
	for i, p := range c.cl.Primaries() {
		args := []string{"-a", "-c", "-p", strconv.Itoa(i), strconv.Itoa(p.PID())}
		if b, err := exec.Command("taskset", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("taskset %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(b)))
		}
		notes = append(notes, fmt.Sprintf("primary %d on CPU %d", i+1, i))
	}
	c.pinned = strings.Join(notes, ", ") + " (`taskset -a -c -p <cpu> <pid>`)"
	return nil
}

// info reads INFO sections from every primary.
func (c *cluster) info(ctx context.Context, sections ...string) ([]string, error) {
	out := make([]string, len(c.admins))
	for i, a := range c.admins {
		v, err := a.Do(ctx, append([]string{"INFO"}, sections...)...)
		if err != nil {
			return nil, err
		}
		out[i], _ = v.(string)
	}
	return out, nil
}

// cpu is each primary's CPU time so far, seconds (used_cpu_user +
// used_cpu_sys: every thread of the process).
func (c *cluster) cpu(ctx context.Context) ([]float64, error) {
	texts, err := c.info(ctx, "cpu")
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(texts))
	for i, text := range texts {
		for _, f := range []string{"used_cpu_user", "used_cpu_sys"} {
			n, err := strconv.ParseFloat(valkeyserver.InfoField(text, f), 64)
			if err != nil {
				return nil, fmt.Errorf("INFO cpu %s: %w", f, err)
			}
			out[i] += n
		}
	}
	return out, nil
}

// reads is each primary's INFO stats total_reads_processed: the reads
// from client connections so far, each of which may bring several
// pipelined commands.
func (c *cluster) reads(ctx context.Context) ([]int64, error) {
	texts, err := c.info(ctx, "stats")
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(texts))
	for i, text := range texts {
		if out[i], err = strconv.ParseInt(valkeyserver.InfoField(text, "total_reads_processed"), 10, 64); err != nil {
			return nil, fmt.Errorf("INFO stats total_reads_processed: %w", err)
		}
	}
	return out, nil
}

// switches is each primary's main thread's voluntary and involuntary
// context switches so far (/proc/<pid>/status of the process, whose
// leader thread runs the commands).
func (c *cluster) switches() ([][2]int64, error) {
	var out [][2]int64
	for _, p := range c.cl.Primaries() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID()))
		if err != nil {
			return nil, err
		}
		var sw [2]int64
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			var i int
			switch k {
			case "voluntary_ctxt_switches":
				i = 0
			case "nonvoluntary_ctxt_switches":
				i = 1
			default:
				continue
			}
			if sw[i], err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
				return nil, fmt.Errorf("/proc/%d/status %s: %w", p.PID(), k, err)
			}
		}
		out = append(out, sw)
	}
	return out, nil
}

// shard is the primary index holding the partition whose keys carry tag.
func (c *cluster) shard(ctx context.Context, tag string) (int, error) {
	if i, ok := c.shardOf[tag]; ok {
		return i, nil
	}
	v, err := c.admins[0].Do(ctx, "CLUSTER", "KEYSLOT", "{"+tag+"}")
	if err != nil {
		return 0, err
	}
	slot, ok := v.(int64)
	if !ok || slot < 0 || slot >= valkeyserver.NumSlots {
		return 0, fmt.Errorf("CLUSTER KEYSLOT {%s}: %v", tag, v)
	}
	c.shardOf[tag] = c.owner[slot]
	return c.owner[slot], nil
}

// part is one partition's figures of a Stats reading.
type part struct {
	tag                      string
	shard                    int
	added, completed, active int
	pending                  int
}

// parts reads q's Stats: one entry per partition (one for an unpartitioned
// queue), in the order of Stats.Partitions.
func (c *cluster) parts(ctx context.Context, q *trafikey.Queue, name string) ([]part, error) {
	st, err := q.Stats(ctx)
	if err != nil {
		return nil, err
	}
	list := st.Partitions
	if len(list) == 0 {
		st.Partition = name
		list = []trafikey.Stats{st}
	}
	out := make([]part, len(list))
	for i, p := range list {
		if p.Partition == "" {
			return nil, fmt.Errorf("stats of %s: partition %d without a tag", name, i)
		}
		sh, err := c.shard(ctx, p.Partition)
		if err != nil {
			return nil, err
		}
		out[i] = part{tag: p.Partition, shard: sh, added: p.TotalAdded, completed: p.TotalCompleted, active: p.Active, pending: p.Pending}
	}
	return out, nil
}

// open flushes the cluster and opens queue name with n partitions (n = 1:
// an unpartitioned queue).
func (c *cluster) open(ctx context.Context, cfg config, name string, n int, obs trafikey.Observer) (*trafikey.Queue, error) {
	if err := c.flush(ctx); err != nil {
		return nil, err
	}
	return c.openQueue(ctx, cfg, name, n, obs)
}

// openQueue opens queue name with n partitions and checks its stats list
// as many.
func (c *cluster) openQueue(ctx context.Context, cfg config, name string, n int, obs trafikey.Observer) (*trafikey.Queue, error) {
	opts := &trafikey.QueueOptions{Executor: cfg.executor, Observer: obs}
	if n > 1 {
		opts.Partitions = n
	}
	q, err := trafikey.Open(ctx, c.client, name, opts)
	if err != nil {
		return nil, err
	}
	ps, err := c.parts(ctx, q, name)
	if err != nil {
		return nil, err
	}
	if len(ps) != n {
		return nil, fmt.Errorf("queue %s opened with %d partitions has %d in its stats", name, n, len(ps))
	}
	return q, nil
}

// byHand flushes the cluster and opens one unpartitioned queue on each
// primary, in the primaries' order: a queue sharded by hand, as users of a
// queue that lives in one slot do.
func (c *cluster) byHand(ctx context.Context, cfg config, prefix string) ([]*trafikey.Queue, []string, error) {
	if err := c.flush(ctx); err != nil {
		return nil, nil, err
	}
	qs := make([]*trafikey.Queue, len(c.admins))
	names := make([]string, len(c.admins))
	for k, left := 0, len(c.admins); left > 0; k++ {
		if k == 10_000 {
			return nil, nil, fmt.Errorf("no name %s-<k> below %d whose slot is on each primary", prefix, k)
		}
		name := fmt.Sprintf("%s-%d", prefix, k)
		i, err := c.shard(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		if qs[i] != nil {
			continue
		}
		if qs[i], err = c.openQueue(ctx, cfg, name, 1, trafikey.Observer{}); err != nil {
			return nil, nil, err
		}
		names[i] = name
		left--
	}
	return qs, names, nil
}

// partsOf is parts of each of qs, named names, one after the other.
func (c *cluster) partsOf(ctx context.Context, qs []*trafikey.Queue, names []string) ([]part, error) {
	var out []part
	for i, q := range qs {
		ps, err := c.parts(ctx, q, names[i])
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

var payload = []byte("0123456789abcdef0123456789abcdef")

// produce adds n jobs with producers goroutines, one Add per job (batch 1)
// or AddBatch calls of batch jobs; goroutine p adds to qs[p % len(qs)].
func produce(ctx context.Context, qs []*trafikey.Queue, n, producers, batch int) error {
	var next atomic.Int64
	errs := make([]error, producers)
	var wg sync.WaitGroup
	for p := range producers {
		q := qs[p%len(qs)]
		wg.Go(func() {
			specs := make([]trafikey.JobSpec, batch)
			for i := range specs {
				specs[i].Payload = payload
			}
			for ctx.Err() == nil {
				lo := next.Add(int64(batch)) - int64(batch)
				if lo >= int64(n) {
					return
				}
				k := min(int64(batch), int64(n)-lo)
				var err error
				if batch == 1 {
					_, err = q.Add(ctx, payload, nil)
				} else {
					_, err = q.AddBatch(ctx, specs[:k])
				}
				if err != nil {
					errs[p] = err
					return
				}
			}
			errs[p] = ctx.Err()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fill adds n jobs to a queue of parts partitions, unmeasured, from a few
// goroutines: in AddBatch calls of at most trafikey.MaxBatch, their number
// a multiple of parts, so that the partitions, which take the calls in turn,
// get as many jobs each.
func fill(ctx context.Context, q *trafikey.Queue, n, parts int) error {
	calls := parts * ceilDiv(n, parts*trafikey.MaxBatch)
	return produce(ctx, []*trafikey.Queue{q}, n, 8, ceilDiv(n, calls))
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// evenShare is part i's share of total split over parts as evenly as it
// goes: the first total % parts parts take one more.
func evenShare(total, parts, i int) int {
	share := total / parts
	if i < total%parts {
		share++
	}
	return share
}

// worker runs workers Worker values on q, each at concurrency conc with a
// no-op handler, and calls done after each completed job; stop ends them and
// returns their errors and the first job that did not complete.
func worker(ctx context.Context, q *trafikey.Queue, workers, conc int, done func()) (stop func() error, err error) {
	var each func(*trafikey.Job)
	if done != nil {
		each = func(*trafikey.Job) { done() }
	}
	return noop.Workers(ctx, q, workers, conc, each)
}

// costRun is one cost measurement.
type costRun struct {
	jobs  []int     // jobs of each primary's partitions
	us    []float64 // server CPU µs per job of each primary; NaN when it had no job
	all   float64   // every primary's CPU over every job
	worst float64   // the highest of us
	calls float64   // the commands the client sent over the measured part, per 100 jobs
	reads float64   // the primaries' reads from client connections, per 100 jobs
	// the primaries' main threads' context switches, summed, per 100 jobs:
	// their waits for work (voluntary) and their preemptions by another
	// process (involuntary)
	waits, preempts float64
	// shardMax is the jobs per primary, max ÷ mean (add and batch).
	shardMax float64
}

// claimRun is one balance run of claims: the jobs claimed from each
// partition up to the last reading at which every partition had pending
// jobs, max and min ÷ even, and the share of the backlog claimed by then.
type claimRun struct {
	max, min, share float64
	// the same at the first reading at which half the backlog or more was
	// claimed (NaN when a partition had run dry by then)
	halfMax, halfMin, halfShare float64
}

var workloads = []string{"add", "batch", "process"}

// costs runs the cost measurements: on a 1-primary cluster of its own
// first (a queue of each partition count: what partitioning costs on one
// server), then on c, where each round also runs the balance of claims and
// the queue sharded by hand.
func (r *report) costs(ctx context.Context, c *cluster) error {
	r.cost, r.claims = map[string][]costRun{}, map[int][]claimRun{}
	if err := r.onePrimary(ctx); err != nil {
		return err
	}
	for round := range r.cfg.rounds {
		for _, w := range workloads {
			if err := r.costPartitions(ctx, c, round, w, "", func(n int) string { return costKey(w, n) }); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "cost, round %d: %s, a queue on each primary …\n", round+1, w)
			cr, err := r.costRun(ctx, c, w, 1, true)
			if err != nil {
				return fmt.Errorf("%s, a queue on each primary: %w", w, err)
			}
			r.cost[handKey(w)] = append(r.cost[handKey(w)], cr)
		}
		for _, n := range r.cfg.partitions {
			if n == 1 {
				continue
			}
			fmt.Fprintf(os.Stderr, "balance, round %d: claims over %d partitions …\n", round+1, n)
			cr, err := r.claimRun(ctx, c, n)
			if err != nil {
				return fmt.Errorf("claims over %d partitions: %w", n, err)
			}
			r.claims[n] = append(r.claims[n], cr)
		}
	}
	return nil
}

// onePrimary runs the cost runs of every partition count on a 1-primary
// cluster, stopped before the 3-primary runs start.
func (r *report) onePrimary(ctx context.Context) error {
	one, err := startCluster(ctx, r.cfg, 1)
	if err != nil {
		return err
	}
	defer one.stop()
	for round := range r.cfg.rounds {
		for _, w := range workloads {
			if err := r.costPartitions(ctx, one, round, w, " on one primary", func(n int) string { return oneKey(w, n) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// costPartitions runs workload w's cost run of each partition count on c
// for round, each appended to r.cost under key(n); where names the cluster
// in the progress lines and errors.
func (r *report) costPartitions(ctx context.Context, c *cluster, round int, w, where string, key func(n int) string) error {
	for _, n := range r.cfg.partitions {
		fmt.Fprintf(os.Stderr, "cost%s, round %d: %s, %d partitions …\n", where, round+1, w, n)
		cr, err := r.costRun(ctx, c, w, n, false)
		if err != nil {
			return fmt.Errorf("%s, %d partitions%s: %w", w, n, where, err)
		}
		r.cost[key(n)] = append(r.cost[key(n)], cr)
	}
	return nil
}

// costKey, handKey and oneKey name the cost runs: a queue of n partitions
// on the 3-primary cluster, an unpartitioned queue on each of its
// primaries, a queue of n partitions on one primary.
func costKey(w string, n int) string { return w + "/" + strconv.Itoa(n) }
func handKey(w string) string        { return "hand/" + w }
func oneKey(w string, n int) string  { return "one/" + costKey(w, n) }

// costRun measures workload w on c: on a queue of n partitions, or with
// hand, on an unpartitioned queue on each primary, the producers and the
// worker's concurrency split over them.
func (r *report) costRun(ctx context.Context, c *cluster, w string, n int, hand bool) (costRun, error) {
	var qs []*trafikey.Queue
	var names []string
	if hand {
		var err error
		if qs, names, err = c.byHand(ctx, r.cfg, w+"-hand"); err != nil {
			return costRun{}, err
		}
	} else {
		name := fmt.Sprintf("%s%d", w, n)
		q, err := c.open(ctx, r.cfg, name, n, trafikey.Observer{})
		if err != nil {
			return costRun{}, err
		}
		qs, names = []*trafikey.Queue{q}, []string{name}
	}
	jobs := r.cfg.jobs
	switch w {
	case "batch":
		jobs = r.cfg.batchJobs
	case "process":
		for i, q := range qs {
			if err := fill(ctx, q, evenShare(jobs, len(qs), i), n); err != nil {
				return costRun{}, err
			}
		}
	default:
		// a first call of each partition loads the scripts (Lua) and
		// warms the code paths up
		if err := produce(ctx, qs, 4*n*len(qs), len(qs), 1); err != nil {
			return costRun{}, err
		}
	}
	before, err := c.partsOf(ctx, qs, names)
	if err != nil {
		return costRun{}, err
	}
	reads0, err := c.reads(ctx)
	if err != nil {
		return costRun{}, err
	}
	cpu0, err := c.cpu(ctx)
	if err != nil {
		return costRun{}, err
	}
	sw0, err := c.switches()
	if err != nil {
		return costRun{}, err
	}
	sent0 := c.client.n.Load()
	switch w {
	case "add":
		err = produce(ctx, qs, jobs, r.cfg.producers, 1)
	case "batch":
		err = produce(ctx, qs, jobs, r.cfg.producers, r.cfg.batch)
	case "process":
		err = process(ctx, qs, jobs, 1, r.cfg.workers)
	}
	if err != nil {
		return costRun{}, err
	}
	sent1 := c.client.n.Load()
	sw1, err := c.switches()
	if err != nil {
		return costRun{}, err
	}
	cpu1, err := c.cpu(ctx)
	if err != nil {
		return costRun{}, err
	}
	reads1, err := c.reads(ctx)
	if err != nil {
		return costRun{}, err
	}
	after, err := c.partsOf(ctx, qs, names)
	if err != nil {
		return costRun{}, err
	}

	cr := costRun{jobs: make([]int, len(c.admins)), us: make([]float64, len(c.admins)), shardMax: math.NaN(), calls: float64(sent1 - sent0)}
	total := 0
	for i, p := range after {
		if p.tag != before[i].tag {
			return costRun{}, fmt.Errorf("partition %d: tag %q, was %q", i, p.tag, before[i].tag)
		}
		d := p.added - before[i].added
		if w == "process" {
			d = p.completed - before[i].completed
		}
		cr.jobs[p.shard] += d
		total += d
	}
	if total != jobs {
		return costRun{}, fmt.Errorf("the partitions' counters moved by %d jobs, the run had %d", total, jobs)
	}
	sum := 0.0
	for i := range cr.us {
		d := cpu1[i] - cpu0[i]
		sum += d
		cr.us[i] = math.NaN()
		if cr.jobs[i] > 0 {
			cr.us[i] = d * 1e6 / float64(cr.jobs[i])
			cr.worst = max(cr.worst, cr.us[i])
		}
	}
	cr.all = sum * 1e6 / float64(jobs)
	cr.calls = 100 * cr.calls / float64(jobs)
	for i := range reads0 {
		// less the admin connection's own: the two INFO cpu and the
		// second INFO stats, which counts its own read
		cr.reads += float64(reads1[i] - reads0[i] - 3)
	}
	cr.reads = 100 * cr.reads / float64(jobs)
	for i := range sw0 {
		cr.waits += float64(sw1[i][0] - sw0[i][0])
		cr.preempts += float64(sw1[i][1] - sw0[i][1])
	}
	cr.waits, cr.preempts = 100*cr.waits/float64(jobs), 100*cr.preempts/float64(jobs)
	if w != "process" && (n > 1 || hand) {
		cr.shardMax = float64(slices.Max(cr.jobs)) * float64(len(cr.jobs)) / float64(jobs)
	}
	return cr, nil
}

// process runs workers Worker values over each of qs' pre-added backlogs
// until they have completed jobs in all, their concurrency conc split over
// qs (as even as it goes).
func process(ctx context.Context, qs []*trafikey.Queue, jobs, workers, conc int) error {
	var completed atomic.Int64
	finished := make(chan struct{})
	done := func() {
		if completed.Add(1) == int64(jobs) {
			close(finished)
		}
	}
	var stops []func() error
	stopAll := func() error {
		var errs []error
		for _, stop := range stops {
			errs = append(errs, stop())
		}
		return errors.Join(errs...)
	}
	for i, q := range qs {
		stop, err := worker(ctx, q, workers, evenShare(conc, len(qs), i), done)
		if err != nil {
			return errors.Join(err, stopAll())
		}
		stops = append(stops, stop)
	}
	select {
	case <-finished:
	case <-ctx.Done():
	}
	return errors.Join(stopAll(), ctx.Err())
}

// claimEvery is how often a balance run of claims reads the partitions.
const claimEvery = 10 * time.Millisecond

// claimJobs is the least backlog of a balance run of claims per
// partition: a worker's claim takes up to its free slots from one
// partition, so a few hundred jobs a partition are gone in a claim or two.
const claimJobs = 2000

// claimRun fills a queue of n partitions with cfg.jobs jobs, and at least
// claimJobs per partition, as many on each, and runs a worker over them, reading Stats every claimEvery, until
// a partition has no pending job left. Each partition's claims are its
// TotalCompleted and Active, which one Stats call of the partition reads
// together; the partitions are read at once.
func (r *report) claimRun(ctx context.Context, c *cluster, n int) (claimRun, error) {
	name := fmt.Sprintf("claims%d", n)
	q, err := c.open(ctx, r.cfg, name, n, trafikey.Observer{})
	if err != nil {
		return claimRun{}, err
	}
	jobs := max(r.cfg.jobs, claimJobs*n)
	if err := fill(ctx, q, jobs, n); err != nil {
		return claimRun{}, err
	}
	before, err := c.parts(ctx, q, name)
	if err != nil {
		return claimRun{}, err
	}
	for _, p := range before {
		if p.pending == 0 {
			return claimRun{}, fmt.Errorf("partition %s got no job", p.tag)
		}
	}
	stop, err := worker(ctx, q, 1, r.cfg.workers, nil)
	if err != nil {
		return claimRun{}, err
	}
	var last, half []part
	claimed := func(ps []part) (claims []float64, sum float64) {
		claims = make([]float64, len(ps))
		for i, p := range ps {
			claims[i] = float64(p.completed - before[i].completed + p.active)
			sum += claims[i]
		}
		return claims, sum
	}
	tick := time.NewTicker(claimEvery)
	err = func() error {
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return ctx.Err()
			}
			ps, err := c.parts(ctx, q, name)
			if err != nil {
				return err
			}
			for _, p := range ps {
				if p.pending == 0 {
					return nil
				}
			}
			last = ps
			if _, sum := claimed(ps); half == nil && 2*sum >= float64(jobs) {
				half = ps
			}
		}
	}()
	if err := errors.Join(err, stop()); err != nil {
		return claimRun{}, err
	}
	cr := claimRun{max: math.NaN(), min: math.NaN(), halfMax: math.NaN(), halfMin: math.NaN()}
	if last == nil {
		// a partition ran dry before the first reading
		return cr, nil
	}
	claims, sum := claimed(last)
	even := sum / float64(n)
	cr.max, cr.min, cr.share = slices.Max(claims)/even, slices.Min(claims)/even, sum/float64(jobs)
	if half != nil {
		claims, sum := claimed(half)
		even := sum / float64(n)
		cr.halfMax, cr.halfMin, cr.halfShare = slices.Max(claims)/even, slices.Min(claims)/even, sum/float64(jobs)
	}
	return cr, nil
}

// scaleRun is one scaling measurement.
type scaleRun struct {
	rate      float64   // completed jobs per second
	serverCPU []float64 // each primary's CPU over the run's time, cores
	clientCPU float64   // this process's CPU over the run's time, cores
}

// scaling alternates a 1-primary and a 2-primary cluster, the queue of
// cfg.scaleParts partitions on each.
func (r *report) scaling(ctx context.Context) error {
	var cs []*cluster
	defer func() {
		for _, c := range cs {
			c.stop()
		}
	}()
	for _, n := range []int{1, 2} {
		c, err := startCluster(ctx, r.cfg, n)
		if err != nil {
			return err
		}
		cs = append(cs, c)
		if r.version == "" {
			r.version = c.version
		}
		if r.cfg.pin {
			if err := c.pin(); err != nil {
				return err
			}
		}
	}
	r.scale = map[int][]scaleRun{}
	for round := range r.cfg.rounds {
		order := slices.Clone(cs)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, c := range order {
			p := len(c.admins)
			fmt.Fprintf(os.Stderr, "scale, round %d: %d primaries …\n", round+1, p)
			sr, err := r.scaleRun(ctx, c)
			if err != nil {
				return fmt.Errorf("%d primaries: %w", p, err)
			}
			r.scale[p] = append(r.scale[p], sr)
		}
	}
	r.pinned = map[int]string{1: cs[0].pinned, 2: cs[1].pinned}
	return nil
}

func (r *report) scaleRun(ctx context.Context, c *cluster) (scaleRun, error) {
	name := "scale"
	q, err := c.open(ctx, r.cfg, name, r.cfg.scaleParts, trafikey.Observer{})
	if err != nil {
		return scaleRun{}, err
	}
	if err := fill(ctx, q, r.cfg.scaleJobs, r.cfg.scaleParts); err != nil {
		return scaleRun{}, err
	}
	cpu0, err := c.cpu(ctx)
	if err != nil {
		return scaleRun{}, err
	}
	ru0, err := rusage()
	if err != nil {
		return scaleRun{}, err
	}
	start := time.Now()
	if err := process(ctx, []*trafikey.Queue{q}, r.cfg.scaleJobs, r.cfg.scaleWorks, r.cfg.workers); err != nil {
		return scaleRun{}, err
	}
	elapsed := time.Since(start).Seconds()
	ru1, err := rusage()
	if err != nil {
		return scaleRun{}, err
	}
	cpu1, err := c.cpu(ctx)
	if err != nil {
		return scaleRun{}, err
	}
	sr := scaleRun{rate: float64(r.cfg.scaleJobs) / elapsed, clientCPU: (ru1 - ru0) / elapsed}
	for i := range cpu0 {
		sr.serverCPU = append(sr.serverCPU, (cpu1[i]-cpu0[i])/elapsed)
	}
	st, err := q.Stats(ctx)
	if err != nil {
		return scaleRun{}, err
	}
	if st.TotalCompleted != r.cfg.scaleJobs {
		return scaleRun{}, fmt.Errorf("%d of %d jobs completed", st.TotalCompleted, r.cfg.scaleJobs)
	}
	return sr, nil
}

// rusage is this process's CPU time so far (user + system), seconds.
func rusage() (float64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds(), nil
}

// rateRun is one rate-limited run: the claims of each whole second from
// the workers' start, and the most claims in any second (a sliding window
// over the claims' times).
type rateRun struct {
	windows []int
	sliding int
	// logged is the most claims the partitions' rate logs hold in any
	// second of the servers' clock (mostInSpan); entries the number of
	// entries read from the logs
	logged, entries int
}

// claimed is one claim call's jobs and when the client had them.
type claimed struct {
	at time.Duration
	n  int
}

func (r *report) rates(ctx context.Context, c *cluster) error {
	for round := range r.cfg.rounds {
		fmt.Fprintf(os.Stderr, "rate, round %d: %d/s over %d partitions, %d workers, %v …\n", round+1, r.cfg.rateLimit, r.cfg.rateParts, r.cfg.rateWorker, r.cfg.rateFor)
		rr, err := r.rateRun(ctx, c)
		if err != nil {
			return err
		}
		r.rate = append(r.rate, rr)
	}
	return nil
}

func (r *report) rateRun(ctx context.Context, c *cluster) (rateRun, error) {
	secs := int(r.cfg.rateFor / time.Second)
	var mu sync.Mutex
	var claims []claimed
	var start time.Time
	obs := trafikey.Observer{JobsClaimed: func(_, _ string, n int) {
		mu.Lock()
		defer mu.Unlock()
		claims = append(claims, claimed{time.Since(start), n})
	}}
	name := "rated"
	q, err := c.open(ctx, r.cfg, name, r.cfg.rateParts, obs)
	if err != nil {
		return rateRun{}, err
	}
	// twice what the run can claim, so no partition runs dry
	if err := fill(ctx, q, 2*(secs+1)*r.cfg.rateLimit, r.cfg.rateParts); err != nil {
		return rateRun{}, err
	}
	if err := q.Admin().SetRate(ctx, r.cfg.rateLimit, time.Second); err != nil {
		return rateRun{}, err
	}
	before, err := c.parts(ctx, q, name)
	if err != nil {
		return rateRun{}, err
	}
	logs, err := c.watchRateLogs(ctx, before)
	if err != nil {
		return rateRun{}, err
	}
	mu.Lock()
	start = time.Now()
	mu.Unlock()
	stop, err := worker(ctx, q, r.cfg.rateWorker, max(1, r.cfg.workers/r.cfg.rateWorker), nil)
	if err != nil {
		return rateRun{}, err
	}
	select {
	case <-time.After(time.Duration(secs) * time.Second):
	case <-ctx.Done():
	}
	if err := errors.Join(stop(), ctx.Err()); err != nil {
		return rateRun{}, err
	}
	entries, err := logs()
	if err != nil {
		return rateRun{}, err
	}
	ps, err := c.parts(ctx, q, name)
	if err != nil {
		return rateRun{}, err
	}
	for _, p := range ps {
		if p.pending == 0 {
			return rateRun{}, fmt.Errorf("partition %s ran dry", p.tag)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	rr := rateFigures(claims, secs)
	rr.logged, rr.entries = mostInSpan(entries, time.Second), len(entries)
	return rr, nil
}

// logEntry is an entry of a partition's rate log (docs/PROTOCOL.md, "Rate
// limit"): the server's clock of the claim call it logs, in ms, and the
// jobs it claimed; or a claim call as the client saw it (rateFigures).
type logEntry struct {
	at float64
	n  int
}

// watchRateLogs reads the rate log of every partition of ps every 200 ms,
// on a connection of its own to each primary, until the returned func is
// called: that reads them once more and returns every entry seen. An
// entry stays in its log for a window (a second here), so each is seen.
func (c *cluster) watchRateLogs(ctx context.Context, ps []part) (func() ([]logEntry, error), error) {
	conns := make([]*valkeyserver.Conn, len(c.admins))
	for i, s := range c.cl.Primaries() {
		conn, err := valkeyserver.Dial(ctx, s.Addr())
		if err != nil {
			return nil, err
		}
		conns[i] = conn
	}
	type seen struct{ tag, member, score string }
	entries := map[seen]logEntry{}
	read := func() error {
		for _, p := range ps {
			v, err := conns[p.shard].Do(ctx, "ZRANGE", protocol.Base(p.tag)+protocol.SuffixRate, "0", "-1", "WITHSCORES")
			if err != nil {
				return err
			}
			l, _ := v.([]any)
			for i := 0; i+1 < len(l); i += 2 {
				member, score := fmt.Sprint(l[i]), fmt.Sprint(l[i+1])
				at, err := strconv.ParseFloat(score, 64)
				_, k, ok := strings.Cut(member, ":")
				n, err2 := strconv.Atoi(k)
				if err != nil || !ok || err2 != nil {
					return fmt.Errorf("rate log of %s: entry %q %q", p.tag, member, score)
				}
				entries[seen{p.tag, member, score}] = logEntry{at, n}
			}
		}
		return nil
	}
	done, stopped := make(chan struct{}), make(chan error, 1)
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				stopped <- read()
				return
			case <-tick.C:
				if err := read(); err != nil {
					<-done
					stopped <- err
					return
				}
			}
		}
	}()
	return func() ([]logEntry, error) {
		close(done)
		err := <-stopped
		for _, conn := range conns {
			conn.Close()
		}
		out := make([]logEntry, 0, len(entries))
		for _, e := range entries {
			out = append(out, e)
		}
		return out, err
	}, nil
}

// mostInSpan is the most jobs the entries hold in any span of window: for
// each entry, those at more than window before it and up to it, as CLAIM
// counts a rate log's.
func mostInSpan(entries []logEntry, window time.Duration) int {
	slices.SortFunc(entries, func(a, b logEntry) int { return cmp.Compare(a.at, b.at) })
	w := float64(window.Milliseconds())
	most, in, lo := 0, 0, 0
	for i, e := range entries {
		in += e.n
		for entries[lo].at <= entries[i].at-w {
			in -= entries[lo].n
			lo++
		}
		most = max(most, in)
	}
	return most
}

// rateFigures counts claims, in time order, in secs one-second windows
// and finds the most in any second.
func rateFigures(claims []claimed, secs int) rateRun {
	rr := rateRun{windows: make([]int, secs)}
	seen := make([]logEntry, 0, len(claims))
	for _, c := range claims {
		if c.at >= time.Duration(secs)*time.Second {
			break
		}
		rr.windows[c.at/time.Second] += c.n
		seen = append(seen, logEntry{float64(c.at) / float64(time.Millisecond), c.n})
	}
	rr.sliding = mostInSpan(seen, time.Second)
	return rr
}

// idleRun is one idle run: the primaries' commands per second, in all and
// by command, and the commands the queue's client sent per second.
type idleRun struct {
	perSec, clientPerSec float64
	byCmd                map[string]float64
	// blocked and conns are the primaries' blocked clients and client
	// connections (INFO clients, summed) at the end of the run, the
	// measurement's own connection included in conns.
	blocked, conns int
}

func (r *report) idles(ctx context.Context, c *cluster) error {
	for round := range r.cfg.rounds {
		fmt.Fprintf(os.Stderr, "idle, round %d: one worker over %d partitions for %v …\n", round+1, r.cfg.idleParts, r.cfg.idleFor)
		ir, err := r.idleRun(ctx, c)
		if err != nil {
			return err
		}
		r.idle = append(r.idle, ir)
	}
	return nil
}

// idleWarm is how long the idle worker runs before the counting starts: its
// start-up calls are not its idle cost.
const idleWarm = 2 * time.Second

func (r *report) idleRun(ctx context.Context, c *cluster) (idleRun, error) {
	client := c.client
	q, err := c.open(ctx, r.cfg, "idle", r.cfg.idleParts, trafikey.Observer{})
	if err != nil {
		return idleRun{}, err
	}
	var sent0, sent1 int64
	stop, err := worker(ctx, q, 1, 10, nil)
	if err != nil {
		return idleRun{}, err
	}
	var before, after, clients []string
	var start time.Time
	err = func() error {
		select {
		case <-time.After(idleWarm):
		case <-ctx.Done():
			return ctx.Err()
		}
		if before, err = c.info(ctx, "stats", "commandstats"); err != nil {
			return err
		}
		sent0, start = client.n.Load(), time.Now()
		select {
		case <-time.After(r.cfg.idleFor):
		case <-ctx.Done():
			return ctx.Err()
		}
		sent1 = client.n.Load()
		if after, err = c.info(ctx, "stats", "commandstats"); err != nil {
			return err
		}
		clients, err = c.info(ctx, "clients")
		return err
	}()
	elapsed := time.Since(start).Seconds()
	if err := errors.Join(err, stop()); err != nil {
		return idleRun{}, err
	}
	ir := idleRun{byCmd: map[string]float64{}}
	calls := 0.0
	for i := range before {
		n0, err0 := strconv.ParseInt(valkeyserver.InfoField(before[i], "total_commands_processed"), 10, 64)
		n1, err1 := strconv.ParseInt(valkeyserver.InfoField(after[i], "total_commands_processed"), 10, 64)
		if err := errors.Join(err0, err1); err != nil {
			return idleRun{}, fmt.Errorf("INFO stats total_commands_processed: %w", err)
		}
		// the first INFO is counted once it has run; the second is not yet
		calls += float64(n1 - n0 - 1)
		s0, s1 := commandStats(before[i]), commandStats(after[i])
		s1["info"]--
		for cmd, n := range s1 {
			if d := n - s0[cmd]; d > 0 {
				ir.byCmd[cmd] += float64(d) / elapsed
			}
		}
	}
	for _, text := range clients {
		b, err0 := strconv.Atoi(valkeyserver.InfoField(text, "blocked_clients"))
		n, err1 := strconv.Atoi(valkeyserver.InfoField(text, "connected_clients"))
		if err := errors.Join(err0, err1); err != nil {
			return idleRun{}, fmt.Errorf("INFO clients: %w", err)
		}
		ir.blocked += b
		ir.conns += n
	}
	ir.perSec, ir.clientPerSec = calls/elapsed, float64(sent1-sent0)/elapsed
	return ir, nil
}

// commandStats parses INFO commandstats: calls by command, lower case.
func commandStats(text string) map[string]int64 {
	out := map[string]int64{}
	for line := range strings.Lines(text) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for kv := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				out[strings.ToLower(strings.TrimPrefix(name, "cmdstat_"))] = n
			}
		}
	}
	return out
}

// tree names the checkout's commit, "+ changes" when its files differ
// from it, or "?".
func tree(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "?"
	}
	name := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err != nil || len(st) > 0 {
		name += " + changes"
	}
	return name
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
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

// spread renders the median and range of xs, leaving out NaNs.
func spread(xs []float64, f func(float64) string) string {
	xs = slices.DeleteFunc(slices.Clone(xs), math.IsNaN)
	return feature.Spread(xs, f)
}

func median(xs []float64) float64 {
	xs = slices.DeleteFunc(slices.Clone(xs), math.IsNaN)
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}
