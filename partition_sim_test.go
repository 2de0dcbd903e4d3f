package trafikey

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A simulation of one partitioned queue on a cluster of S primaries, to
// answer what throughput it reaches beyond the machine the benchmarks run
// on, given a measured server cost per job. It calls the routing
// (partitions.route, spread, keyedPartition), the placement
// (slotOwners.tag) and the workers' weights (expandParts) themselves; the
// claim loop of (*Worker).claim calls the server once per partition, so its
// order (the weighted draw, the fall-through, the marks on partitions found
// empty) is followed here step by step with a simulated clock.
// docs/BENCHMARKS.md ("Partitioned queues: simulated scaling") has the
// model, its figures and the table this test prints.

// The server's cost of a job, natively, on Valkey 8.0.1 (docs/BENCHMARKS.md):
// an ADD coalesced from 50 concurrent producers, 4.63 µs of server CPU a job
// (Summary, "server CPU µs per job, add"), and a CLAIM and a COMPLETEMANY at
// concurrency 100, 5.96 µs a job ("The servers users run", Throughput). A
// CLAIM that finds nothing costs the call's fixed cost, 4.49 µs ("The native
// call's fixed cost", on an idle moment).
const (
	simAddUS        = 4.63
	simProcessUS    = 5.96
	simEmptyClaimUS = 4.49
)

// simTick is the simulated clock's step: each primary serves simTick of
// server time per tick, each worker makes up to simCallsPerTick calls (a
// round trip of 100 µs) and one claim that returns jobs, of up to
// simClaimCount jobs, per tick.
const (
	simTick         = time.Millisecond
	simCallsPerTick = 10
	simClaimCount   = 100
)

// simCapacity is one primary's capacity C, in jobs per second: the server
// time of a second over the cost of a job's add, claim and completion.
const simCapacity = 1e6 / (simAddUS + simProcessUS)

// simMix is the share of the jobs with a unique key (from a large key
// space) and with a lane (of simLanes, each as busy); the others have
// neither and are added in coalesced batches of 1 to simMaxBatch jobs.
type simMix struct {
	name          string
	unique, lanes float64
}

const (
	simLanes    = 1000
	simMaxBatch = 64
	simProducer = 16 // producers, each with its own handle
	// unique keys routed a partition to measure their shares
	simKeysPerPartition = 2000
	simWorkers          = 5 // workers a primary, each claiming up to simClaimCount
)

var simMixes = []simMix{
	{"plain", 0, 0},
	{"70/20/10", 0.2, 0.1},
}

// simCluster is a partitioned queue of P partitions placed on S primaries,
// each owning an equal contiguous range of slots.
type simCluster struct {
	S, P    int
	q       *Queue
	shardOf []int          // by partition
	index   map[*Queue]int // a partition's handle to its index
}

func newSimCluster(t testing.TB, S, P int) *simCluster {
	t.Helper()
	o := &slotOwners{owner: make([]int, 16384), primaries: S}
	for s := range o.owner {
		o.owner[s] = s * S / 16384
	}
	tags := []string{"mail"}
	for i := 1; i < P; i++ {
		tags = append(tags, o.tag("mail", i, tags))
	}
	cfg := &QueueOptions{LogCap: 10, partsEvery: noRefresh}
	q := newHandle(nil, "mail", "mail", cfg)
	q.parts.Store(newPartitions(q, tags, P, cfg))
	// a queue of one partition is claimed through its own handle
	// (expandParts leaves it whole)
	c := &simCluster{S: S, P: P, q: q, shardOf: make([]int, P), index: map[*Queue]int{q: 0}}
	for i, h := range q.parts.Load().list() {
		c.index[h] = i
		c.shardOf[i] = o.owner[hashSlot(tags[i])]
	}
	return c
}

// producers are the handles of simProducer producers: each routes as the
// queue's handle does, with a start of its own for the jobs in turn. list
// is the partitions they route over: the queue's own, or another list to
// skew the routing.
func (c *simCluster) producers(rng *rand.Rand, list []*Queue) []*partitions {
	out := make([]*partitions, simProducer)
	for i := range out {
		p := &partitions{keyed: c.q.parts.Load().keyed, cfg: QueueOptions{partsEvery: noRefresh}}
		p.cur.Store(&list)
		p.next.Store(rng.Uint32())
		out[i] = p
	}
	return out
}

// simShares is each partition's long-run share of the jobs of each kind,
// as the routing places them: those without a key or a lane (in coalesced
// batches, whose sizes do not depend on the partition), those with a
// unique key, and those with a lane. Each sums to 1.
type simShares struct {
	plain, unique, lane []float64
}

// shares routes through prods: simProducer·P·4 batches, each producer's
// in turn as its handle sends them; simKeysPerPartition·P unique keys drawn
// at random; and each of simLanes lanes once, every lane as busy.
func (c *simCluster) shares(prods []*partitions, rng *rand.Rand) simShares {
	sh := simShares{plain: make([]float64, c.P), unique: make([]float64, c.P), lane: make([]float64, c.P)}
	for range 4 * c.P {
		for _, p := range prods {
			sh.plain[c.index[p.spread(1)]]++
		}
	}
	for range simKeysPerPartition * c.P {
		key := "order-" + strconv.FormatUint(rng.Uint64(), 36)
		sh.unique[c.index[prods[rng.IntN(len(prods))].route(&JobOptions{UniqueKey: key})]]++
	}
	for l := range simLanes {
		sh.lane[c.index[prods[l%len(prods)].route(&JobOptions{Lane: "tenant-" + strconv.Itoa(l)})]]++
	}
	for _, v := range [][]float64{sh.plain, sh.unique, sh.lane} {
		sum := 0.0
		for _, n := range v {
			sum += n
		}
		for i := range v {
			v[i] /= sum
		}
	}
	return sh
}

// keyed is each partition's share of all jobs that have a unique key or a
// lane under mix.
func (sh simShares) keyed(mix simMix) []float64 {
	out := make([]float64, len(sh.plain))
	for i := range out {
		out[i] = mix.unique*sh.unique[i] + mix.lanes*sh.lane[i]
	}
	return out
}

// balance is the mean primary's share of the jobs under mix over the
// busiest's: the fraction of S·C the queue sustains when the busiest
// primary is the bound.
func (c *simCluster) balance(sh simShares, mix simMix) float64 {
	load := make([]float64, c.S)
	keyed := sh.keyed(mix)
	for i := range c.P {
		load[c.shardOf[i]] += (1-mix.unique-mix.lanes)*sh.plain[i] + keyed[i]
	}
	most := 0.0
	for _, l := range load {
		most = max(most, l)
	}
	return 1 / float64(c.S) / most
}

// simRun is one run of the discrete simulation at an offered load (a
// fraction of S·C): whether every primary kept up, the jobs completed a
// second as a fraction of S·C, the share of claim calls that found their
// partition empty, and the jobs a claim that found some took.
type simRun struct {
	kept     bool
	done     float64
	empty    float64
	perClaim float64
}

// run simulates ticks ticks of producers offering x·S·C jobs a second
// under mix and workers claiming them. The jobs without a key or a lane
// come in coalesced batches of 1 to simMaxBatch jobs, each sent by one of
// prods through spread; the others come at their partitions' shares
// (keyed). Each tick, each primary serves its adds first, then the
// workers' claims, within simTick of server time; a worker's call on a
// primary with no time left waits for the next tick. A primary kept up
// when its backlog (adds not served and jobs not claimed) grew by at most
// simGrowth of the jobs offered to it, from the second quarter of the run
// to the last.
func (c *simCluster) run(prods []*partitions, keyed []float64, mix simMix, x float64, workers, ticks int, seed uint64) simRun {
	rng := rand.New(rand.NewPCG(seed, 1))
	perTick := float64(c.S) * simCapacity * simTick.Seconds()
	// the worker's queues and weights, as (*Worker).claim draws from them
	queues := expandParts([]QueueWeight{{Queue: c.q, Weight: 1}})
	order := make([]int, len(queues))
	var drawn []int // by r, the queue the draw of r picks
	for i, qw := range queues {
		order[i] = c.index[qw.Queue]
		for range qw.Weight {
			drawn = append(drawn, i)
		}
	}
	budgetUS := float64(simTick.Microseconds())
	hold := int(partitionEmptyHold / simTick)
	addQ := make([]float64, c.P)    // jobs whose ADD waits at the primary
	pending := make([]float64, c.P) // jobs added, not claimed
	budget := make([]float64, c.S)
	addWork := make([]float64, c.S)
	// marks: per worker and partition, the tick until which its claims
	// pass the partition over, unless the worker swept its marks since
	// the mark was made (swept)
	marks := make([][]int, workers)
	swept := make([]int, workers)
	idle := make([]bool, workers)
	quiet := make([]int, workers)
	for w := range marks {
		marks[w] = make([]int, c.P)
		swept[w] = -hold
	}
	offered := make([]float64, c.S)
	backlogA, backlogB := make([]float64, c.S), make([]float64, c.S)
	arrivals := make([]float64, c.P)
	due, batch := 0.0, float64(1+rng.IntN(simMaxBatch))
	done, calls, empties, claimed := 0.0, 0, 0, 0.0
	for t := range ticks {
		clear(arrivals)
		due += x * perTick * (1 - mix.unique - mix.lanes)
		for due >= batch {
			arrivals[c.index[prods[rng.IntN(len(prods))].spread(int(batch))]] += batch
			due -= batch
			batch = float64(1 + rng.IntN(simMaxBatch))
		}
		arrived := false
		for i, n := range arrivals {
			n += x * perTick * keyed[i]
			addQ[i] += n
			if n > 0 {
				// its announcement reaches every worker: each tries the
				// partition again (partitionMarks.readied)
				arrived = true
				for w := range marks {
					marks[w][i] = 0
				}
			}
			if t >= ticks/4 && t < 3*ticks/4 {
				offered[c.shardOf[i]] += n
			}
		}
		// each primary serves its adds first, in proportion when it cannot
		// serve them all
		clear(addWork)
		for i, n := range addQ {
			addWork[c.shardOf[i]] += n * simAddUS
		}
		for i, n := range addQ {
			f := min(1, budgetUS/addWork[c.shardOf[i]])
			pending[i] += f * n
			addQ[i] -= f * n
		}
		for s := range budget {
			budget[s] = budgetUS - min(budgetUS, addWork[s])
		}
		// the workers, from a different one each tick
		for k := range workers {
			w := (t + k) % workers
			if idle[w] {
				// the idle wait: an announcement ends it, and every
				// partitionSweepEvery-th wait sweeps the marks, as
				// partitionMarks.woken does
				quiet[w]++
				if quiet[w] >= partitionSweepEvery {
					quiet[w] = 0
					swept[w] = t
				}
				if !arrived {
					continue
				}
			}
			idle[w] = true
			// the weighted draw of (*Worker).claim: r below the total
			// weight picks the first queue whose weights summed pass it
			first := drawn[rng.IntN(len(drawn))]
			n := 0
			for j := range queues {
				p := order[(first+j)%len(queues)]
				if marks[w][p] > t && marks[w][p]-hold >= swept[w] {
					continue
				}
				s := c.shardOf[p]
				if n == simCallsPerTick || budget[s] < simEmptyClaimUS {
					// out of round trips, or the primary is busy: the
					// call waits for the next tick
					idle[w] = false
					break
				}
				n++
				calls++
				if pending[p] < 1 {
					empties++
					budget[s] -= simEmptyClaimUS
					marks[w][p] = t + hold
					continue
				}
				got := min(simClaimCount, pending[p], budget[s]/simProcessUS)
				pending[p] -= got
				claimed += got
				budget[s] -= got * simProcessUS
				if t >= ticks/2 {
					done += got
				}
				idle[w] = false
				break
			}
		}
		for i := range c.P {
			s := c.shardOf[i]
			switch {
			case t >= ticks/4 && t < ticks/2:
				backlogA[s] += addQ[i] + pending[i]
			case t >= 3*ticks/4:
				backlogB[s] += addQ[i] + pending[i]
			}
		}
	}
	res := simRun{kept: true, done: done / (float64(ticks-ticks/2) * perTick), empty: float64(empties) / float64(max(calls, 1)),
		perClaim: claimed / float64(max(calls-empties, 1))}
	for s := range c.S {
		growth := (backlogB[s] - backlogA[s]) / float64(ticks/4)
		if growth > simGrowth*offered[s] {
			res.kept = false
		}
	}
	return res
}

// The discrete run's length, and how much a primary's backlog may grow
// over the jobs offered to it while it keeps up: bursts of batches make a
// backlog that keeps up wander by about a percent of the jobs offered over
// a run of a few seconds, which is why the run is checked 3 % on either
// side of the bound rather than searched for it.
const (
	simTicks   = 3000
	simGrowth  = 0.02
	simBracket = 0.03
)

// simRow is one line of the table.
type simRow struct {
	S, P       int
	mix        string
	perPrimary [2]int // fewest and most partitions on a primary
	lanes      int    // lanes on the primary with the most
	balance    float64
	// the discrete runs at (1 - simBracket) and (1 + simBracket) times the
	// bound
	below, above simRun
}

func (c *simCluster) perPrimary() [2]int {
	n := make([]int, c.S)
	for _, s := range c.shardOf {
		n[s]++
	}
	return [2]int{slices.Min(n), slices.Max(n)}
}

// mostLanes is how many lanes the primary with the most holds.
func (c *simCluster) mostLanes(sh simShares) int {
	n := make([]float64, c.S)
	for i, l := range sh.lane {
		n[c.shardOf[i]] += l * simLanes
	}
	return int(math.Round(slices.Max(n)))
}

// simulate builds the cluster, routes through the queue's partitions (or
// through those skew returns) to find the bound, and runs the discrete
// simulation on either side of it.
func simulate(t testing.TB, S, P int, mix simMix, skew func(*simCluster) []*Queue) (simRow, func(x float64) simRun) {
	t.Helper()
	seed := uint64(S*1000 + P)
	rng := rand.New(rand.NewPCG(seed, 2))
	c := newSimCluster(t, S, P)
	list := c.q.parts.Load().list()
	if skew != nil {
		list = skew(c)
	}
	prods := c.producers(rng, list)
	sh := c.shares(prods, rng)
	keyed := sh.keyed(mix)
	run := func(x float64) simRun { return c.run(prods, keyed, mix, x, simWorkers*S, simTicks, seed) }
	row := simRow{S: S, P: P, mix: mix.name, perPrimary: c.perPrimary(), lanes: c.mostLanes(sh), balance: c.balance(sh, mix)}
	row.below = run((1 - simBracket) * row.balance)
	row.above = run((1 + simBracket) * row.balance)
	return row, run
}

func TestPartitionSimulation(t *testing.T) {
	var rows []simRow
	for _, S := range []int{1, 3, 10, 100} {
		for _, P := range []int{S, 2 * S, 4 * S} {
			P = min(P, maxPartitions)
			for _, mix := range simMixes {
				row, _ := simulate(t, S, P, mix, nil)
				rows = append(rows, row)
				what := fmt.Sprintf("S=%d P=%d %s", S, P, mix.name)
				// the discrete run finds the bound the routed shares set
				assert.True(t, row.below.kept, "%s: keeps up %.0f %% below the bound", what, 100*simBracket)
				assert.InDelta(t, (1-simBracket)*row.balance, row.below.done, 0.01, "%s: completes what is offered", what)
				assert.False(t, row.above.kept, "%s: falls behind %.0f %% above the bound", what, 100*simBracket)
				// placement: the partitions in turn over the primaries, so
				// a primary holds P/S of them rounded down or up
				pp := row.perPrimary
				assert.Equal(t, [2]int{P / S, (P + S - 1) / S}, pp, "%s: partitions a primary", what)
				// a primary with more partitions than another bounds the
				// queue at the mean count over the most
				even := float64(P) / float64(S) / float64(pp[1])
				assert.LessOrEqual(t, row.balance, even+1e-9, what)
				if mix.unique == 0 && mix.lanes == 0 {
					// jobs in turn: even over the partitions
					assert.InDelta(t, even, row.balance, 1e-9, "%s: jobs in turn spread evenly", what)
				}
				if P%S == 0 {
					// the target, where the model says it holds: as many
					// partitions on every primary
					assert.GreaterOrEqual(t, (1-simBracket)*row.balance, 0.9, "%s: reaches 0.9 × S × C", what)
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "C = %.0f jobs/s a primary (%.2f + %.2f server µs a job)\n", simCapacity, simAddUS, simProcessUS)
	b.WriteString("| primaries S | partitions P | partitions a primary | most lanes on a primary | jobs | throughput ÷ (S·C) | jobs/s | kept up at 0.97× | completed ÷ (S·C) | claims empty | jobs a claim | fell behind at 1.03× |\n")
	b.WriteString("|---:|---:|---|---:|---|---:|---:|---|---:|---:|---:|---|\n")
	for _, r := range rows {
		per := strconv.Itoa(r.perPrimary[0])
		if r.perPrimary[1] != r.perPrimary[0] {
			per += "–" + strconv.Itoa(r.perPrimary[1])
		}
		lanes := "—"
		if r.mix != "plain" {
			lanes = strconv.Itoa(r.lanes)
		}
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %s | %.3f | %s | %s | %.3f | %.0f %% | %.1f | %s |\n", r.S, r.P, per, lanes, r.mix, r.balance,
			simRate(r.balance*float64(r.S)*simCapacity), simYes(r.below.kept), r.below.done, 100*r.below.empty, r.below.perClaim, simYes(!r.above.kept))
	}
	t.Log("\n" + b.String())

	t.Run("skewed", func(t *testing.T) {
		// every job routed to partition 0, as if spread and keyedPartition
		// always returned it: the same checks find the queue far below its
		// target, and the discrete run falls behind at 0.9 × S × C
		for _, mix := range simMixes {
			row, run := simulate(t, 10, 20, mix, func(c *simCluster) []*Queue {
				list := make([]*Queue, c.P)
				for i := range list {
					list[i] = c.q.parts.Load().list()[0]
				}
				return list
			})
			require.Less(t, row.balance, 0.9, mix.name)
			require.False(t, run(0.9).kept, mix.name)
			t.Logf("S=10 P=20 %s, skewed: throughput ÷ (S·C) %.3f", mix.name, row.balance)
		}
	})
}

func simYes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// simRate formats jobs a second.
func simRate(r float64) string {
	switch {
	case r >= 1e6:
		return strconv.FormatFloat(r/1e6, 'f', 2, 64) + "M"
	case r >= 1e3:
		return strconv.FormatFloat(math.Round(r/1e3), 'f', 0, 64) + "k"
	}
	return strconv.FormatFloat(r, 'f', 0, 64)
}
