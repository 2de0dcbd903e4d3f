package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/bench/internal/feature"
)

// benchKind is the kind of the jobs added with one: what a job type's name
// looks like, 10 bytes.
const benchKind = "email.send"

// kindVariant is one process-100 measurement of a -kinds round.
type kindVariant struct {
	on   bool // events on (bound cfg.maxLen) or never turned on
	kind bool // jobs added with benchKind or without a kind
}

func (v kindVariant) String() string {
	k := "no kind"
	if v.kind {
		k = "kind"
	}
	return "events " + onOff(v.on) + ", " + k
}

// runKinds measures process-100 on each executor in four variants a round:
// events off and on, the jobs added with a kind and without. The executors
// alternate over the rounds and the variants' order turns by one each
// round; the report gives each variant's server CPU µs per job and jobs per
// second, and the ratios of the variants within each round.
func (b *bench) runKinds(ctx context.Context) error {
	cfg := b.cfg
	executors := []trafikey.Executor{trafikey.ExecutorNative, trafikey.ExecutorLua}
	variants := []kindVariant{{false, false}, {false, true}, {true, false}, {true, true}}
	type key struct {
		e trafikey.Executor
		v kindVariant
	}
	us, rate, claim, complete := map[key][]float64{}, map[key][]float64{}, map[key][]float64{}, map[key][]float64{}
	// ratio[e][name]: one value a round, of two variants of that round
	ratio := map[trafikey.Executor]map[string][]float64{}
	ratios := []struct {
		name     string
		num, den kindVariant
	}{
		{"on/off, no kind", kindVariant{true, false}, kindVariant{false, false}},
		{"on/off, kind", kindVariant{true, true}, kindVariant{false, true}},
		{"kind/no kind, events off", kindVariant{false, true}, kindVariant{false, false}},
		{"kind/no kind, events on", kindVariant{true, true}, kindVariant{true, false}},
		{"on with kind / off without", kindVariant{true, true}, kindVariant{false, false}},
	}
	startLoad := loadAvg()
	for round := range cfg.rounds {
		order := slices.Clone(executors)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, e := range order {
			got := map[kindVariant]float64{}
			for i := range variants {
				v := variants[(i+round)%len(variants)]
				kind := ""
				if v.kind {
					kind = benchKind
				}
				fmt.Fprintf(os.Stderr, "round %d, %s: process-%d, %v …\n", round+1, e, cfg.workers, v)
				r, err := b.processCost(ctx, e, v.on, kind)
				if err != nil {
					return err
				}
				got[v] = r.us
				k := key{e, v}
				us[k] = append(us[k], r.us)
				rate[k] = append(rate[k], r.perSec)
				claim[k] = append(claim[k], r.claim)
				complete[k] = append(complete[k], r.complete)
			}
			if ratio[e] == nil {
				ratio[e] = map[string][]float64{}
			}
			for _, r := range ratios {
				ratio[e][r.name] = append(ratio[e][r.name], got[r.num]/got[r.den])
			}
		}
	}

	var out strings.Builder
	fmt.Fprintf(&out, "Machine: %s/%s, %d CPUs, Go %s; one valkey-server (%s), not pinned; load average at the start %s, at the end %s. Command: `go run ./bench/events%s`, %d rounds, executors alternating, the four variants' order turning by one each round; median (min–max).\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), b.Version(ctx), startLoad, loadAvg(), flagsText(cfg), cfg.rounds)
	fmt.Fprintf(&out, "**process-%d, %d jobs a measurement**, pre-added in batches of %d on a fresh queue (events never turned on, or on with bound %d before the adds), with kind `%s` or without: the server process's CPU (INFO cpu, user + sys) µs per job while a worker completes them, and its completed jobs per second; natively also the two verbs' time in INFO commandstats per job (the Lua executor's are all EVALSHA).\n\n",
		cfg.workers, cfg.costJobs, trafikey.MaxBatch, cfg.maxLen, benchKind)
	fmt.Fprintf(&out, "| executor | variant | server µs per job | jobs/s | EMQ.CLAIM µs per job | EMQ.COMPLETEMANY µs per job |\n|---|---|---:|---:|---:|---:|\n")
	f2 := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	f0 := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	for _, e := range executors {
		for _, v := range variants {
			k := key{e, v}
			verbs := "— | —"
			if e == trafikey.ExecutorNative {
				verbs = feature.Spread(claim[k], f2) + " | " + feature.Spread(complete[k], f2)
			}
			fmt.Fprintf(&out, "| %s | %v | %s | %s | %s |\n", e, v, feature.Spread(us[k], f2), feature.Spread(rate[k], f0), verbs)
		}
	}
	fmt.Fprintf(&out, "\nServer µs per job, the ratios of each round's variants, median (min–max) over the rounds:\n\n| executor |")
	for _, r := range ratios {
		fmt.Fprintf(&out, " %s |", r.name)
	}
	fmt.Fprintf(&out, "\n|---|%s\n", strings.Repeat("---:|", len(ratios)))
	pct := func(v float64) string { return fmt.Sprintf("%+.1f%%", 100*(v-1)) }
	for _, e := range executors {
		fmt.Fprintf(&out, "| %s |", e)
		for _, r := range ratios {
			fmt.Fprintf(&out, " %s |", feature.Spread(ratio[e][r.name], pct))
		}
		fmt.Fprintln(&out)
	}
	fmt.Print(out.String())
	return nil
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
