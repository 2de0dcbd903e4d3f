package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// report collects the runs' figures and writes them as Markdown.
type report struct {
	cfg          config
	version      string
	start        time.Time
	load0        string
	cost         map[string][]costRun // by costKey, one per round
	claims       map[int][]claimRun   // by partitions, one per round
	scale        map[int][]scaleRun   // by primaries
	pinned       map[int]string       // by primaries
	rate         []rateRun
	idle         []idleRun
	targetsTable []target
	loads        map[string]string // by measurement: the load average at its start and end
	tree         string            // the checkout's commit
}

// section runs measurement f and notes the load average around it.
func (r *report) section(name string, f func() error) error {
	before := loadAvg()
	err := f()
	r.loads[name] = fmt.Sprintf("Load average (1, 5, 15 min) %s at its start, %s at its end.", before, loadAvg())
	return err
}

// target is one line of the targets table.
type target struct {
	figure, want, got string
	met               bool
}

// atMost110 is the target that the median of xs, a ratio, is at most 1.10.
func atMost110(figure string, xs []float64) target {
	return target{figure: figure, want: "≤ 1.10", got: spread(xs, f2), met: median(xs) <= 1.10}
}

func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
func f0(v float64) string { return fmt.Sprintf("%.0f", v) }

func (r *report) write(out io.Writer) {
	cfg := r.cfg
	var b strings.Builder
	fmt.Fprintf(&b, "Machine: %s/%s, %d CPUs (%s), Go %s; %s, clusters on loopback without replicas, the trafikey module loaded, executor %s; tree %s. Command: `go run ./bench/partitions%s`. Run %s–%s UTC, load average %s at the start, %s at the end. %d rounds; median (min–max).\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), runtime.Version(), r.version, cfg.executor, r.tree,
		argsText(), r.start.UTC().Format("2006-01-02 15:04:05"), time.Now().UTC().Format("15:04:05"), r.load0, loadAvg(), cfg.rounds)
	if r.cost != nil {
		r.writeCost(&b)
	}
	if r.scale != nil {
		r.writeScale(&b)
	}
	if r.rate != nil {
		r.writeRate(&b)
	}
	if r.idle != nil {
		r.writeIdle(&b)
	}
	r.writeTargets(&b)
	fmt.Fprint(out, b.String())
}

// argsText is the command line's flags, as given.
func argsText() string {
	if len(os.Args) < 2 {
		return ""
	}
	return " " + strings.Join(os.Args[1:], " ")
}

func (r *report) writeCost(b *strings.Builder) {
	cfg := r.cfg
	fmt.Fprintf(b, "**Cost per job.** A 3-primary cluster, not pinned. *add*: %d jobs, %d goroutines each adding one job per `Add` (coalesced by the client, its default); *batch*: %d jobs in `AddBatch` calls of %d from %d goroutines; *process*: a Worker at concurrency %d completing %d pre-added jobs, no-op handler. Each primary's CPU (INFO cpu, user + sys) over the measured part divided by the jobs of the partitions it holds (their TotalAdded or TotalCompleted in `Stats.Partitions`, the primary found with CLUSTER KEYSLOT of the tag and CLUSTER SLOTS); *all* is every primary's CPU over every job, idle primaries included; the ratios are each round's figure over the same round's unpartitioned queue (N=1). µs per job; and the commands the queues' client sent over the measured part (counted by a wrapper of its valkey.Client), per 100 jobs, and the primaries' reads from client connections (INFO stats total_reads_processed, summed, less the measurement's own), per 100 jobs: a read brings in as many pipelined commands as have arrived. The row *by hand* is the same workload over three unpartitioned queues, one on each primary (a queue sharded by hand): the producers take the queues in turn, and each queue has a Worker at a third of the concurrency (its jobs a third of the backlog). %s\n\n",
		cfg.jobs, cfg.producers, cfg.batchJobs, cfg.batch, cfg.producers, cfg.workers, cfg.jobs, r.loads["cost"])
	for _, w := range workloads {
		fmt.Fprintf(b, "*%s*\n\n", w)
		r.costTable(b, 3, func(n int) string { return costKey(w, n) }, handKey(w))
		for _, n := range cfg.partitions {
			rs := ratios(r.cost[costKey(w, n)], r.cost[costKey(w, 1)], worst)
			if n == 1 || rs == nil {
				continue
			}
			r.targetsTable = append(r.targetsTable, atMost110(fmt.Sprintf("cost, %s, %d partitions: worst primary's µs per job ÷ N=1", w, n), rs))
		}
	}
	fmt.Fprintf(b, "**Cost per job on one primary.** The same runs on a 1-primary cluster of their own, run before the ones above: every partition on the one server, so that the server's load and the client's are as they are for the unpartitioned queue, and what is left is what partitioning costs the server per job. %s\n\n", r.loads["cost"])
	for _, w := range workloads {
		fmt.Fprintf(b, "*%s*\n\n", w)
		r.costTable(b, 1, func(n int) string { return oneKey(w, n) }, "")
	}
	for _, w := range workloads {
		for _, n := range cfg.partitions {
			if n == 1 {
				continue
			}
			if rs := ratios(r.cost[oneKey(w, n)], r.cost[oneKey(w, 1)], worst); rs != nil {
				r.targetsTable = append(r.targetsTable, atMost110(fmt.Sprintf("beside the target: cost, %s, %d partitions on one primary: µs per job ÷ N=1", w, n), rs))
			}
			if rs := ratios(r.cost[costKey(w, n)], r.cost[handKey(w)], worst); rs != nil {
				r.targetsTable = append(r.targetsTable, atMost110(fmt.Sprintf("beside the target: cost, %s, %d partitions: worst primary's µs per job ÷ by hand's", w, n), rs))
			}
		}
	}
	r.writeBalance(b)
}

func worst(c costRun) float64 { return c.worst }

// costTable writes the cost table of primaries columns: a row per
// partition count (the runs key(n)), and the runs hand when not "".
func (r *report) costTable(b *strings.Builder, primaries int, key func(n int) string, hand string) {
	b.WriteString("| partitions |")
	for i := range primaries {
		fmt.Fprintf(b, " primary %d |", i+1)
	}
	b.WriteString(" all | all ÷ N=1 | worst primary ÷ N=1 | client calls per 100 jobs | server reads per 100 jobs | waits per 100 jobs | preemptions per 100 jobs |\n|---:|")
	b.WriteString(strings.Repeat("---:|", primaries+8-1) + "\n")
	base := r.cost[key(1)]
	row := func(label string, runs []costRun) {
		fmt.Fprintf(b, "| %s |", label)
		for i := range primaries {
			fmt.Fprintf(b, " %s |", spread(pick(runs, func(c costRun) float64 { return c.us[i] }), f2))
		}
		fmt.Fprintf(b, " %s | %s | %s | %s | %s | %s | %s |\n",
			spread(pick(runs, func(c costRun) float64 { return c.all }), f2),
			spread(ratios(runs, base, func(c costRun) float64 { return c.all }), f2),
			spread(ratios(runs, base, worst), f2),
			spread(pick(runs, func(c costRun) float64 { return c.calls }), f2),
			spread(pick(runs, func(c costRun) float64 { return c.reads }), f2),
			spread(pick(runs, func(c costRun) float64 { return c.waits }), f2),
			spread(pick(runs, func(c costRun) float64 { return c.preempts }), f2))
	}
	for _, n := range r.cfg.partitions {
		row(strconv.Itoa(n), r.cost[key(n)])
	}
	if hand != "" {
		row("by hand", r.cost[hand])
	}
	b.WriteString("\n")
}

func (r *report) writeBalance(b *strings.Builder) {
	cfg := r.cfg
	fmt.Fprintf(b, "**Balance.** Jobs per primary after the adds of the runs above (TotalAdded of each primary's partitions), max ÷ mean over the 3 primaries. Claims per partition: a run of its own, %d jobs pre-added and at least %d a partition, as many to each partition, a Worker at concurrency %d claiming them; `Stats` read every %v (the partitions at once) until a partition has no pending job left; each partition's claims (TotalCompleted since the start, plus Active) ÷ even, max and min, at the first reading with half the backlog claimed and at the last reading at which every partition still had pending jobs, with the share of the backlog claimed by then (at the last reading the max is about 1 ÷ that share: the partition claimed most is the one about to run dry).\n\n",
		cfg.jobs, claimJobs, cfg.workers, claimEvery)
	fmt.Fprintf(b, "| partitions | add: per primary max ÷ mean | batch: per primary max ÷ mean | claims per partition at half: max ÷ even | min ÷ even | last with work everywhere: max ÷ even | min ÷ even | backlog claimed then |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, n := range cfg.partitions {
		if n == 1 {
			continue
		}
		add, batch, claims := r.cost[costKey("add", n)], r.cost[costKey("batch", n)], r.claims[n]
		shardMax := func(c costRun) float64 { return c.shardMax }
		var hi, lo, share, hhi, hlo []float64
		for _, c := range claims {
			hi, lo, share = append(hi, c.max), append(lo, c.min), append(share, c.share)
			hhi, hlo = append(hhi, c.halfMax), append(hlo, c.halfMin)
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", n, spread(pick(add, shardMax), f2), spread(pick(batch, shardMax), f2),
			spread(hhi, f2), spread(hlo, f2), spread(hi, f2), spread(lo, f2),
			spread(share, func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }))
		for _, w := range []struct {
			name string
			runs []costRun
		}{{"add", add}, {"batch", batch}} {
			xs := pick(w.runs, shardMax)
			r.targetsTable = append(r.targetsTable, atMost110(fmt.Sprintf("balance, %s, %d partitions: jobs per primary max ÷ mean", w.name, n), xs))
		}
		r.targetsTable = append(r.targetsTable, target{
			figure: fmt.Sprintf("balance, %d partitions: claims per partition at half the backlog, max and min ÷ even", n),
			want:   "within 10% of even", got: spread(hhi, f2) + " and " + spread(hlo, f2),
			met: median(hhi) <= 1.10 && median(hlo) >= 0.90,
		}, target{
			figure: fmt.Sprintf("balance, %d partitions: claims per partition at the last reading with work everywhere, max and min ÷ even", n),
			want:   "within 10% of even", got: spread(hi, f2) + " and " + spread(lo, f2),
			met: median(hi) <= 1.10 && median(lo) >= 0.90,
		})
	}
	fmt.Fprintln(b)
}

func (r *report) writeScale(b *strings.Builder) {
	cfg := r.cfg
	pin := "not pinned (-pin=false)"
	if cfg.pin {
		pin = fmt.Sprintf("1 primary: %s; 2 primaries: %s", r.pinned[1], r.pinned[2])
	}
	fmt.Fprintf(b, "**Scaling.** One queue of %d partitions on a 1-primary and on a 2-primary cluster (the partitions spread over the primaries at creation), the clusters alternating round by round; %d Worker values in this process at concurrency %d each completing %d pre-added jobs, no-op handler. Pinning: %s; this process is not pinned and shares the %d CPUs with them. Completed jobs per second; each primary's CPU (INFO cpu) and this process's (getrusage) over the run's time, in cores. %s\n\n",
		cfg.scaleParts, cfg.scaleWorks, cfg.workers, cfg.scaleJobs, pin, runtime.NumCPU(), r.loads["scale"])
	fmt.Fprintf(b, "| primaries | jobs/s | server CPU, primary 1 | server CPU, primary 2 | client CPU | jobs/s ÷ busiest primary's CPU |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range []int{1, 2} {
		runs := r.scale[p]
		fmt.Fprintf(b, "| %d | %s |", p, spread(pickS(runs, func(s scaleRun) float64 { return s.rate }), f0))
		for i := range 2 {
			fmt.Fprintf(b, " %s |", spread(pickS(runs, func(s scaleRun) float64 {
				if i < len(s.serverCPU) {
					return s.serverCPU[i]
				}
				return math.NaN()
			}), f2))
		}
		fmt.Fprintf(b, " %s | %s |\n", spread(pickS(runs, func(s scaleRun) float64 { return s.clientCPU }), f2),
			spread(pickS(runs, func(s scaleRun) float64 { return s.rate / slices.Max(s.serverCPU) }), f0))
	}
	var rs []float64
	for i := range min(len(r.scale[1]), len(r.scale[2])) {
		rs = append(rs, r.scale[2][i].rate/r.scale[1][i].rate)
	}
	var per []float64
	for i := range min(len(r.scale[1]), len(r.scale[2])) {
		one, two := r.scale[1][i], r.scale[2][i]
		per = append(per, (two.rate/slices.Max(two.serverCPU))/(one.rate/slices.Max(one.serverCPU)))
	}
	fmt.Fprintf(b, "\n2 primaries ÷ 1 primary, round by round: %s in jobs/s; %s in jobs/s per core of the busiest primary (not a throughput: what the servers could carry if the busiest primary had its core to itself, which the client sharing the CPUs keeps from being measured directly).\n\n", spread(rs, f2), spread(per, f2))
	r.targetsTable = append(r.targetsTable, target{
		figure: fmt.Sprintf("scaling, %d partitions, process: 2 primaries ÷ 1", cfg.scaleParts),
		want:   "≥ 1.8", got: spread(rs, f2), met: median(rs) >= 1.8,
	})
}

func (r *report) writeRate(b *strings.Builder) {
	cfg := r.cfg
	secs := int(cfg.rateFor / time.Second)
	fmt.Fprintf(b, "**Rate limit.** A queue of %d partitions on the 3-primary cluster, `Admin.SetRate(%d, time.Second)`, %d pre-added jobs (none of the partitions runs dry), %d Worker values in this process at concurrency %d each; the claims the Observer's JobsClaimed reports, counted in %d one-second windows from the workers' start; and the most claims in any second, a window sliding over the claims' times, as the client saw them and as the partitions' rate logs hold them (each log read every 200 ms; an entry stays a second: the servers' clocks of the claim calls, the limit's own measure). %s\n\n",
		cfg.rateParts, cfg.rateLimit, 2*(secs+1)*cfg.rateLimit, cfg.rateWorker, max(1, cfg.workers/cfg.rateWorker), secs, r.loads["rate"])
	fmt.Fprintf(b, "| round | mean per second | deviation from %d | highest window | lowest window | windows above %d | most in any second (sliding), client | most in any second, the rate logs | log entries read |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", cfg.rateLimit, cfg.rateLimit)
	var means, highs, slides, logged []float64
	for i, rr := range r.rate {
		sum, above := 0, 0
		for _, w := range rr.windows {
			sum += w
			if w > cfg.rateLimit {
				above++
			}
		}
		mean := float64(sum) / float64(len(rr.windows))
		means = append(means, mean)
		highs = append(highs, float64(slices.Max(rr.windows)))
		slides = append(slides, float64(rr.sliding))
		logged = append(logged, float64(rr.logged))
		fmt.Fprintf(b, "| %d | %.1f | %+.2f%% | %d | %d | %d | %d | %d | %d |\n", i+1, mean, 100*(mean/float64(cfg.rateLimit)-1),
			slices.Max(rr.windows), slices.Min(rr.windows), above, rr.sliding, rr.logged, rr.entries)
	}
	fmt.Fprintf(b, "\nWindows, round 1: %v.\n\n", r.rate[0].windows)
	limit := float64(cfg.rateLimit)
	m := median(means)
	r.targetsTable = append(r.targetsTable, target{
		figure: fmt.Sprintf("rate, %d partitions, %d workers: mean claims per second", cfg.rateParts, cfg.rateWorker),
		want:   fmt.Sprintf("within 2%% of %d", cfg.rateLimit), got: spread(means, f0) + fmt.Sprintf(" (%+.1f%%)", 100*(m/limit-1)),
		met: math.Abs(m/limit-1) <= 0.02,
	})
	r.targetsTable = append(r.targetsTable, target{
		figure: "rate: highest one-second window from the workers' start",
		want:   fmt.Sprintf("never above %d", cfg.rateLimit), got: spread(highs, f0),
		met: slices.Max(highs) <= limit,
	}, target{
		figure: "rate: most claims in any second (sliding), as the client saw them",
		want:   fmt.Sprintf("never above %d", cfg.rateLimit), got: spread(slides, f0),
		met: slices.Max(slides) <= limit,
	}, target{
		figure: "rate: most claims in any second of the servers' clocks (the rate logs)",
		want:   fmt.Sprintf("never above %d", cfg.rateLimit), got: spread(logged, f0),
		met: slices.Max(logged) <= limit,
	})
}

func (r *report) writeIdle(b *strings.Builder) {
	cfg := r.cfg
	fmt.Fprintf(b, "**Idle cost.** One Worker (concurrency 10, default periods) over an empty queue of %d partitions on the 3-primary cluster; after %v, the primaries' INFO stats total_commands_processed over %v, summed, less the measurement's own INFO calls, which counts the commands a Lua script or the module runs inside a call as well as the calls; by command from INFO commandstats (the same counting); and the commands the queue's client sent (counted by a wrapper of its valkey.Client), the calls alone; and, at the end, the primaries' blocked clients and client connections (INFO clients, summed; the measurement's own connection to each primary included). %s\n\n",
		cfg.idleParts, idleWarm, cfg.idleFor, r.loads["idle"])
	fmt.Fprintf(b, "| server commands per second | client commands per second | blocked clients | client connections | by command, server (median) |\n|---:|---:|---:|---:|---|\n")
	per, sent := make([]float64, len(r.idle)), make([]float64, len(r.idle))
	blocked, conns := make([]float64, len(r.idle)), make([]float64, len(r.idle))
	cmds := map[string][]float64{}
	for i, ir := range r.idle {
		per[i], sent[i] = ir.perSec, ir.clientPerSec
		blocked[i], conns[i] = float64(ir.blocked), float64(ir.conns)
		for c, v := range ir.byCmd {
			cmds[c] = append(cmds[c], v)
		}
	}
	names := make([]string, 0, len(cmds))
	for c := range cmds {
		names = append(names, c)
	}
	slices.SortFunc(names, func(a, c string) int {
		return -compare(median(pad(cmds[a], len(r.idle))), median(pad(cmds[c], len(r.idle))))
	})
	var parts []string
	for _, c := range names {
		if v := median(pad(cmds[c], len(r.idle))); v >= 0.05 {
			parts = append(parts, fmt.Sprintf("%s %.1f", c, v))
		}
	}
	f1 := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	f0 := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n\n", spread(per, f1), spread(sent, f1), spread(blocked, f0), spread(conns, f0), strings.Join(parts, ", "))
	r.targetsTable = append(r.targetsTable, target{
		figure: fmt.Sprintf("idle worker over %d partitions: calls the servers receive per second (the client's count)", cfg.idleParts),
		want:   "≤ 100", got: spread(sent, f1), met: median(sent) <= 100,
	}, target{
		figure: fmt.Sprintf("idle worker over %d partitions: server commands per second, the commands the module runs inside a call included", cfg.idleParts),
		want:   "≤ 100", got: spread(per, f1), met: median(per) <= 100,
	})
}

func (r *report) writeTargets(b *strings.Builder) {
	if len(r.targetsTable) == 0 {
		return
	}
	fmt.Fprintf(b, "**Against the targets** (the median decides).\n\n| figure | target | measured | met |\n|---|---|---|---|\n")
	for _, t := range r.targetsTable {
		met := "no"
		if t.met {
			met = "yes"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", t.figure, t.want, t.got, met)
	}
}

func compare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pad fills xs with zeros to n values: a command missing from a round ran
// no call in it.
func pad(xs []float64, n int) []float64 {
	for len(xs) < n {
		xs = append(xs, 0)
	}
	return xs
}

func pick(runs []costRun, f func(costRun) float64) []float64 {
	out := make([]float64, len(runs))
	for i, c := range runs {
		out[i] = f(c)
	}
	return out
}

func pickS(runs []scaleRun, f func(scaleRun) float64) []float64 {
	out := make([]float64, len(runs))
	for i, s := range runs {
		out[i] = f(s)
	}
	return out
}

// ratios is each round's f of runs over f of the same round of base.
func ratios(runs, base []costRun, f func(costRun) float64) []float64 {
	var out []float64
	for i := range min(len(runs), len(base)) {
		out = append(out, f(runs[i])/f(base[i]))
	}
	return out
}
