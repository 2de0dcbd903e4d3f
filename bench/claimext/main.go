// Command claimext measures what CLAIM's extended rows cost plain jobs (no
// kind, timeout or headers): the server's µs per claimed job (INFO
// commandstats) of `CLAIM lease 100`, the reply of wire-2 callers, and of
// `CLAIM lease 100 1`, which the Go client sends, on one valkey-server with
// the trafikey module, for each executor.
//
//	go run ./bench/claimext              # 10000 jobs per form, 7 rounds
//	go run ./bench/claimext -small       # seconds, for a check
//
// The two forms alternate call by call on one backlog, each call timed
// alone, so a machine whose load drifts weighs on both alike; the change is
// the median of the ratios of adjacent calls.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"syscall"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/bench/internal/feature"
	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/protocol"
)

func main() {
	jobs := flag.Int("jobs", 10_000, "jobs claimed per form, executor and round")
	rounds := flag.Int("rounds", 7, "rounds per executor")
	small := flag.Bool("small", false, "small sizes: a check, not a measurement")
	flag.Parse()
	if *small {
		*jobs, *rounds = 2000, 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *jobs, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "claimext:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, jobs, rounds int) error {
	srv, err := feature.Start(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Printf("Machine: %s/%s, %d CPUs, Go %s; one valkey-server (%s). Command: `go run ./bench/claimext`; per executor and round, %d plain jobs claimed 100 at a time by CLAIMs alternating between the two forms, each CLAIM timed alone (INFO commandstats reset before it); %d rounds. Per-job µs: median (min–max) over the rounds of each round's median; change: median over all pairs of adjacent calls of ext / plain − 1.\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), srv.Version(ctx), 2*jobs, rounds)
	fmt.Println("| executor | `CLAIM lease 100` | `CLAIM lease 100 1` | change (pairs) |")
	fmt.Println("|---|---|---|---|")
	us := func(x float64) string { return fmt.Sprintf("%.2f", x) }
	for _, e := range []trafikey.Executor{trafikey.ExecutorNative, trafikey.ExecutorLua} {
		var plain, ext, ratios []float64
		for round := range rounds {
			fmt.Fprintf(os.Stderr, "round %d, %s …\n", round+1, e)
			p, x, r, err := pairs(ctx, srv, e, jobs)
			if err != nil {
				return err
			}
			plain, ext, ratios = append(plain, median(p)), append(ext, median(x)), append(ratios, r...)
		}
		fmt.Printf("| %s | %s | %s | %+.1f%% |\n", e, feature.Spread(plain, us), feature.Spread(ext, us), 100*(median(ratios)-1))
	}
	return nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// pairs adds 2n plain jobs and claims them 100 at a time, alternating the
// plain and the extended CLAIM, each timed alone: the per-job µs of each
// call of both forms, and the ratio ext / plain of each adjacent pair.
func pairs(ctx context.Context, srv *feature.Server, e trafikey.Executor, n int) (plain, ext, ratios []float64, err error) {
	q, err := srv.Open(ctx, e, "ext")
	if err != nil {
		return nil, nil, nil, err
	}
	batch := make([]trafikey.JobSpec, 0, trafikey.MaxBatch)
	for added := 0; added < 2*n; added += len(batch) {
		batch = batch[:0]
		for range min(trafikey.MaxBatch, 2*n-added) {
			batch = append(batch, trafikey.JobSpec{Payload: []byte("payload of a plain job")})
		}
		if _, err := q.AddBatch(ctx, batch); err != nil {
			return nil, nil, nil, err
		}
	}
	var exec executor.Executor = executor.NewNative(srv.Client)
	if e == trafikey.ExecutorLua {
		exec = executor.NewLua(srv.Client)
	}
	keys := protocol.Claim.KeyNames(protocol.KeysOf("ext"))
	forms := [][]string{{"3600000", "100"}, {"3600000", "100", protocol.ClaimExtended}}
	// one call of each first, so the Lua executor's script is loaded
	for _, args := range forms {
		if err := exec.Exec(ctx, protocol.Claim, keys, args).Error(); err != nil {
			return nil, nil, nil, err
		}
	}
	timed := func(args []string) (float64, bool, error) {
		if err := srv.ResetStats(ctx); err != nil {
			return 0, false, err
		}
		rows, err := exec.Exec(ctx, protocol.Claim, keys, args).ToArray()
		if err != nil || len(rows) == 0 {
			return 0, false, err
		}
		total, err := srv.Usec(ctx, e, "claim")
		return total / float64(len(rows)), true, err
	}
	for {
		p, ok, err := timed(forms[0])
		if err != nil || !ok {
			return plain, ext, ratios, err
		}
		x, ok, err := timed(forms[1])
		if err != nil || !ok {
			return plain, ext, ratios, err
		}
		plain, ext, ratios = append(plain, p), append(ext, x), append(ratios, x/p)
	}
}
