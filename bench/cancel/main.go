// Command cancel measures how long a running job's handler goes on after
// Queue.Cancel: the time from the Cancel call to the moment the handler's
// context is done, on one valkey-server with the trafikey module, for each
// executor, with a Worker at its default lease (30 s, a heartbeat every
// 10 s).
//
//	go run ./bench/cancel                # 1000 cancels per executor and round, 5 rounds
//	go run ./bench/cancel -small         # seconds, for a check
//	go run ./bench/cancel -fallback      # the canceller may not publish the notice: the heartbeat finds it
//
// The worker runs -running jobs at once, each handler waiting for its
// context; one at a time, a running job is cancelled (by a client of its
// own), its handler's context seen done, and a new job added in its place. With -fallback the
// cancels are sent by an ACL user that may not SPUBLISH on the queue's
// cancels channel: no notice is sent and the worker learns of each cancel
// at the job's next heartbeat, as every cancel did before the notices; all
// the running jobs are cancelled at once then, as each waits for a
// heartbeat.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/bench/internal/feature"
)

func main() {
	cancels := flag.Int("cancels", 1000, "cancels per executor and round")
	rounds := flag.Int("rounds", 5, "rounds; the executors alternate")
	running := flag.Int("running", 10, "jobs running at once (the worker's concurrency)")
	fallback := flag.Bool("fallback", false, "cancel as a user that may not publish the notice: the heartbeat finds each cancel")
	small := flag.Bool("small", false, "small sizes: a check, not a measurement")
	flag.Parse()
	if *small {
		*cancels, *rounds = 20, 1
	}
	if *fallback && *cancels%*running != 0 {
		*cancels += *running - *cancels%*running
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *cancels, *rounds, *running, *fallback); err != nil {
		fmt.Fprintln(os.Stderr, "cancel:", err)
		os.Exit(1)
	}
}

// sample is one round's latencies of one executor, in ms.
type sample struct{ p50, p99, max float64 }

func run(ctx context.Context, cancels, rounds, running int, fallback bool) error {
	srv, err := feature.Start(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	// The canceller is a client of its own, as a producer or an admin
	// process would be: the notice goes from its call to the worker's
	// connection.
	opt := valkey.ClientOption{InitAddress: []string{srv.Srv.Addr()}, DisableCache: true}
	if fallback {
		if _, err := srv.Admin.Do(ctx, "ACL", "SETUSER", "quiet", "on", ">quiet", "+@all", "~*", "resetchannels"); err != nil {
			return err
		}
		opt.Username, opt.Password = "quiet", "quiet"
	}
	canceller, err := valkey.NewClient(opt)
	if err != nil {
		return err
	}
	defer canceller.Close()
	mode := "the notice"
	if fallback {
		mode = "no notice (the canceller's ACL denies the SPUBLISH): the heartbeat"
	}
	fmt.Printf("Machine: %s/%s, %d CPUs, Go %s; one valkey-server (%s). Command: `go run ./bench/cancel%s`; per executor and round, %d cancels of running jobs, %d running at once, a Worker at the default lease (30 s, heartbeat every 10 s), the cancels sent by a client of their own; %s. Latency: from the Cancel call to the handler seeing its context done, on the client's clock; each round's p50, p99 and max, then the median (min–max) over %d rounds, executors alternating.\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), srv.Version(ctx), command(), cancels, running, mode, rounds)
	results := map[trafikey.Executor][]sample{}
	executors := []trafikey.Executor{trafikey.ExecutorNative, trafikey.ExecutorLua}
	for round := range rounds {
		for _, e := range executors {
			fmt.Fprintf(os.Stderr, "round %d, %s …\n", round+1, e)
			lat, err := measure(ctx, srv, canceller, e, cancels, running, fallback)
			if err != nil {
				return err
			}
			slices.Sort(lat)
			results[e] = append(results[e], sample{p50: pct(lat, 50), p99: pct(lat, 99), max: lat[len(lat)-1]})
		}
	}
	ms := func(x float64) string {
		if x >= 1000 {
			return fmt.Sprintf("%.2f s", x/1000)
		}
		return fmt.Sprintf("%.2f ms", x)
	}
	fmt.Println("| executor | p50 | p99 | max |")
	fmt.Println("|---|---|---|---|")
	for _, e := range executors {
		var p50, p99, mx []float64
		for _, s := range results[e] {
			p50, p99, mx = append(p50, s.p50), append(p99, s.p99), append(mx, s.max)
		}
		fmt.Printf("| %s | %s | %s | %s |\n", e, feature.Spread(p50, ms), feature.Spread(p99, ms), feature.Spread(mx, ms))
	}
	return nil
}

// command is the command line's flags, for the report.
func command() string {
	if len(os.Args) < 2 {
		return ""
	}
	return " " + strings.Join(os.Args[1:], " ")
}

// pct is the p-th percentile of sorted xs (nearest rank).
func pct(xs []float64, p int) float64 {
	i := (len(xs)*p + 99) / 100
	return xs[max(i-1, 0)]
}

// done is a handler's report that its context ended.
type done struct {
	id    string
	at    time.Time
	cause error
}

// measure runs a worker on a fresh queue with running jobs at once and
// cancels n of them (one at a time, or with fallback all running ones at
// once), each replaced by a new job: the latency of each cancel, in ms.
func measure(ctx context.Context, srv *feature.Server, canceller valkey.Client, e trafikey.Executor, n, running int, fallback bool) ([]float64, error) {
	q, err := srv.Open(ctx, e, "cancel")
	if err != nil {
		return nil, err
	}
	cq, err := trafikey.Open(ctx, canceller, "cancel", &trafikey.QueueOptions{Executor: e})
	if err != nil {
		return nil, err
	}
	started := make(chan string, running)
	ended := make(chan done, running)
	w, err := trafikey.NewWorker(q, func(ctx context.Context, j *trafikey.Job) error {
		started <- j.ID
		<-ctx.Done()
		ended <- done{id: j.ID, at: time.Now(), cause: context.Cause(ctx)}
		return ctx.Err()
	}, trafikey.WorkerOptions{Concurrency: running, ShutdownTimeout: -1,
		// each cancel is logged at Info: left out
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		return nil, err
	}
	wctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(wctx) }()
	defer func() {
		stop()
		<-ran
	}()

	add := func(k int) error {
		for range k {
			if _, err := q.Add(ctx, []byte("long"), nil); err != nil {
				return err
			}
		}
		return nil
	}
	// wait takes k handlers' starts, bounded by the lease: a job not
	// started by then is a failure of the run, not a latency.
	var live []string
	wait := func(k int) error {
		for range k {
			select {
			case id := <-started:
				live = append(live, id)
			case <-time.After(30 * time.Second):
				return errors.New("a job did not start")
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	if err := add(running); err != nil {
		return nil, err
	}
	if err := wait(running); err != nil {
		return nil, err
	}
	batch := 1
	if fallback {
		batch = running
	}
	var lat []float64
	for len(lat) < n {
		sent := map[string]time.Time{}
		for _, id := range live[:batch] {
			sent[id] = time.Now()
			if err := cq.Cancel(ctx, id); err != nil {
				return nil, err
			}
		}
		live = live[batch:]
		for range batch {
			var d done
			select {
			case d = <-ended:
			case <-time.After(time.Minute):
				return nil, errors.New("a cancelled handler's context did not end")
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			t0, ok := sent[d.id]
			if !ok || !errors.Is(d.cause, trafikey.ErrCancelled) {
				return nil, fmt.Errorf("job %s ended with cause %v", d.id, d.cause)
			}
			lat = append(lat, float64(d.at.Sub(t0).Nanoseconds())/1e6)
		}
		if err := add(batch); err != nil {
			return nil, err
		}
		if err := wait(batch); err != nil {
			return nil, err
		}
	}
	if got := w.Info().Cancelled; got < n {
		return nil, errors.New("the worker counted " + strconv.Itoa(got) + " cancelled jobs of " + strconv.Itoa(n))
	}
	return lat, nil
}
