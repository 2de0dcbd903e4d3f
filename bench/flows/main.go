// Command flows measures flows and retention on one valkey-server with the
// trafikey module, for each executor: the server µs per child to add and to
// complete a flow of 1, 10 and 1,000 children; the memory a retained
// completed job takes beyond its payload and result; the server time of one
// TRIM step with many retained jobs, and a concurrent client's PING latency
// while trimming runs.
//
//	go run ./bench/flows          # the full sizes, a Markdown report on stdout
//	go run ./bench/flows -small   # seconds, for a check
package main

import (
	"context"
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
)

// workerTrimStep is the TRIM step a Worker takes on each executor (trimStepOf in
// the trafikey package, which keeps it unexported): the benchmark measures
// the steps a worker takes.
var workerTrimStep = map[trafikey.Executor]int{trafikey.ExecutorNative: 200, trafikey.ExecutorLua: 50}

func main() {
	small := flag.Bool("small", false, "small sizes: a check in seconds, not a measurement")
	rounds := flag.Int("rounds", 3, "rounds per measurement, executors alternating")
	flag.Parse()
	retained := 1_000_000
	if *small {
		retained = 20_000
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *rounds, retained, *small); err != nil {
		fmt.Fprintln(os.Stderr, "flows:", err)
		os.Exit(1)
	}
}

type bench struct {
	*feature.Server
}

func run(ctx context.Context, rounds, retained int, small bool) error {
	srv, err := feature.Start(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	b := &bench{Server: srv}

	executors := []trafikey.Executor{trafikey.ExecutorNative, trafikey.ExecutorLua}
	sizes := []int{1, 10, 1000}
	addCost, doneCost := map[string][]float64{}, map[string][]float64{}
	memory := map[trafikey.Executor][]float64{}
	trimStep, pingP99 := map[trafikey.Executor][]float64{}, map[trafikey.Executor][]float64{}
	for round := range rounds {
		order := slices.Clone(executors)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, e := range order {
			for _, n := range sizes {
				fmt.Fprintf(os.Stderr, "round %d, %s: flow of %d …\n", round+1, e, n)
				// the first flow warms the scripts and the code paths up
				if _, _, err := b.flow(ctx, e, n); err != nil {
					return err
				}
				a, c, err := b.flow(ctx, e, n)
				if err != nil {
					return err
				}
				k := string(e) + "/" + strconv.Itoa(n)
				addCost[k], doneCost[k] = append(addCost[k], a), append(doneCost[k], c)
			}
			fmt.Fprintf(os.Stderr, "round %d, %s: retention …\n", round+1, e)
			mem, step, p99, err := b.retention(ctx, e, retained)
			if err != nil {
				return err
			}
			memory[e] = append(memory[e], mem)
			trimStep[e] = append(trimStep[e], step)
			pingP99[e] = append(pingP99[e], p99)
		}
	}

	var out strings.Builder
	fmt.Fprintf(&out, "Machine: %s/%s, %d CPUs, Go %s; one valkey-server (%s). Command: `go run ./bench/flows%s`, %d rounds, executors alternating; median (min–max).\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), b.Version(ctx), map[bool]string{true: " -small"}[small], rounds)
	fmt.Fprintf(&out, "**Flows.** A parent with n children added in one ADD, then every child and the parent completed one COMPLETE each: the server's µs per job (ADD's and COMPLETE's `usec` in INFO commandstats over the flow's jobs).\n\n")
	fmt.Fprintf(&out, "| executor | add, 1 child | 10 | 1000 | complete, 1 child | 10 | 1000 |\n|---|---|---|---|---|---|---|\n")
	us := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	for _, e := range executors {
		fmt.Fprintf(&out, "| %s |", e)
		for _, m := range []map[string][]float64{addCost, doneCost} {
			for _, n := range sizes {
				fmt.Fprintf(&out, " %s |", feature.Spread(m[string(e)+"/"+strconv.Itoa(n)], us))
			}
		}
		fmt.Fprintln(&out)
	}
	fmt.Fprintf(&out, "\n**Retention.** %d jobs of a 16-byte payload completed with a 16-byte result and retained: used_memory per retained job beyond the payload and the result; then TRIM steps of %d jobs natively and %d with the Lua executor, as a worker takes them (the queue's bound lowered to keep none): the server µs of one step (`usec` of the TRIM calls), while a second client sends PING in a loop: its p99 round trip during 20 steps.\n\n", retained, workerTrimStep[trafikey.ExecutorNative], workerTrimStep[trafikey.ExecutorLua])
	fmt.Fprintf(&out, "| executor | bytes per retained job | one TRIM step µs | PING p99 while trimming |\n|---|---|---|---|\n")
	for _, e := range executors {
		fmt.Fprintf(&out, "| %s | %s | %s | %s |\n", e,
			feature.Spread(memory[e], func(v float64) string { return fmt.Sprintf("%.0f B", v) }),
			feature.Spread(trimStep[e], func(v float64) string { return fmt.Sprintf("%.0f", v) }),
			feature.Spread(pingP99[e], func(v float64) string { return fmt.Sprintf("%.2f ms", v) }))
	}
	fmt.Print(out.String())
	return nil
}

// flow adds a parent with n children and completes them all, and returns
// the server µs per job of the ADD and of the COMPLETEs.
func (b *bench) flow(ctx context.Context, e trafikey.Executor, n int) (add, complete float64, err error) {
	q, err := b.Open(ctx, e, "flow")
	if err != nil {
		return 0, 0, err
	}
	root := trafikey.JobSpec{Payload: []byte("parent")}
	for range min(n, trafikey.MaxBatch-1) {
		root.Children = append(root.Children, trafikey.JobSpec{Payload: []byte("child")})
	}
	jobs := 1 + len(root.Children)
	if err := b.ResetStats(ctx); err != nil {
		return 0, 0, err
	}
	if _, err := q.AddFlow(ctx, root); err != nil {
		return 0, 0, err
	}
	if add, err = b.Usec(ctx, e, "add"); err != nil {
		return 0, 0, err
	}
	// claim outside the measured part; COMPLETE alone is measured
	var claimed []*trafikey.Job
	for len(claimed) < jobs {
		got, err := q.Claim(ctx, time.Hour, trafikey.MaxBatch)
		if err != nil {
			return 0, 0, err
		}
		if len(got) == 0 {
			if err := b.ResetStats(ctx); err != nil {
				return 0, 0, err
			}
			for _, j := range claimed {
				if err := j.Complete(ctx); err != nil {
					return 0, 0, err
				}
			}
			if complete, err = b.Usec(ctx, e, "complete"); err != nil {
				return 0, 0, err
			}
			done := complete
			claimed = nil
			// the parent is pending now
			got, err = q.Claim(ctx, time.Hour, 1)
			if err != nil || len(got) != 1 {
				return 0, 0, fmt.Errorf("the parent was not released: %v", err)
			}
			if err := b.ResetStats(ctx); err != nil {
				return 0, 0, err
			}
			if err := got[0].Complete(ctx); err != nil {
				return 0, 0, err
			}
			last, err := b.Usec(ctx, e, "complete")
			if err != nil {
				return 0, 0, err
			}
			return add / float64(jobs), (done + last) / float64(jobs), nil
		}
		claimed = append(claimed, got...)
	}
	return 0, 0, fmt.Errorf("claimed the waiting parent")
}

func (b *bench) usedMemory(ctx context.Context) (float64, error) {
	v, err := b.Admin.Do(ctx, "INFO", "memory")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(fmt.Sprint(v), "\r\n") {
		if m, ok := strings.CutPrefix(line, "used_memory:"); ok {
			return strconv.ParseFloat(m, 64)
		}
	}
	return 0, fmt.Errorf("no used_memory")
}

// retention retains n completed jobs and measures their memory, one TRIM
// step, and PING's p99 while TRIM runs step after step.
func (b *bench) retention(ctx context.Context, e trafikey.Executor, n int) (perJob, stepUS, p99ms float64, err error) {
	q, err := b.Open(ctx, e, "keep")
	if err != nil {
		return 0, 0, 0, err
	}
	if err := q.Admin().SetRetention(ctx, trafikey.RetentionPolicy{KeepCompleted: 24 * time.Hour}); err != nil {
		return 0, 0, 0, err
	}
	before, err := b.usedMemory(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	payload, result := []byte("0123456789abcdef"), []byte("fedcba9876543210")
	for done := 0; done < n; {
		k := min(trafikey.MaxBatch, n-done)
		batch := make([]trafikey.JobSpec, k)
		for i := range batch {
			batch[i].Payload = payload
		}
		if _, err := q.AddBatch(ctx, batch); err != nil {
			return 0, 0, 0, err
		}
		jobs, err := q.Claim(ctx, time.Hour, k)
		if err != nil {
			return 0, 0, 0, err
		}
		for _, j := range jobs {
			j.SetResult(result)
		}
		if _, err := q.CompleteMany(ctx, jobs); err != nil {
			return 0, 0, 0, err
		}
		done += len(jobs)
	}
	after, err := b.usedMemory(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	perJob = (after-before)/float64(n) - float64(len(payload)+len(result))

	// keep none: every retained job is past the bound
	if err := q.Admin().SetRetention(ctx, trafikey.RetentionPolicy{KeepCompleted: time.Millisecond, KeepCompletedMax: 1}); err != nil {
		return 0, 0, 0, err
	}
	time.Sleep(10 * time.Millisecond)
	var mu sync.Mutex
	var pings []time.Duration
	stop := make(chan struct{})
	var wg sync.WaitGroup
	pinger, err := b.Srv.Dial(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	defer pinger.Close()
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			if _, err := pinger.Do(ctx, "PING"); err != nil {
				return
			}
			mu.Lock()
			pings = append(pings, time.Since(t0))
			mu.Unlock()
		}
	})
	if err := b.ResetStats(ctx); err != nil {
		return 0, 0, 0, err
	}
	steps := 0
	for range 20 {
		mt, err := q.Admin().Maintain(ctx, workerTrimStep[e])
		done := mt.TrimmedCompleted
		if err != nil {
			close(stop)
			wg.Wait()
			return 0, 0, 0, err
		}
		steps++
		if done == 0 {
			break
		}
	}
	close(stop)
	wg.Wait()
	us, err := b.Usec(ctx, e, "trim")
	if err != nil {
		return 0, 0, 0, err
	}
	slices.Sort(pings)
	if len(pings) > 0 {
		p99ms = float64(pings[len(pings)*99/100]) / float64(time.Millisecond)
	}
	return perJob, us / float64(steps), p99ms, nil
}
