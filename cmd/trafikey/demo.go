package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/demo"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// serverStartTimeout bounds the start of the demo's own server.
const serverStartTimeout = 30 * time.Second

type demoFlags struct {
	cfg      demo.Config
	conn     connFlags // ACL and TLS of the server given with --addr
	addr     string
	module   string
	noModule bool
	executor string
	queue    string
	progress bool
}

func (a *app) newDemoCmd() *cobra.Command {
	f := demoFlags{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run jobs through a local valkey-server and report throughput and latency",
		Long: `demo starts a valkey-server on a free loopback port (with the trafikey module
when one is given or found, else the Lua executor), adds --jobs no-op jobs from
--producers goroutines while a worker with --concurrency handler slots runs them,
then adds jobs at a steady rate and one at a time to an idle worker, and prints
throughput and latency. With --addr it uses that server instead (with the ACL
and TLS flags, or their environment variables, as every command takes them),
on a queue demo-<time> that it deletes when it ends, interrupted or not; a
queue named with --queue is kept.

The module is --module, else trafikey.so next to this binary, else build/trafikey.so
in the repository around the working directory (scripts/demo.sh builds it there).`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("addr") {
				if err := applyEnv(cmd.Flags(), a.lookupEnv); err != nil {
					return err
				}
			}
			return runDemo(cmd, &f, cmd.Flags().Changed("module"))
		}),
	}
	fl := cmd.Flags()
	f.conn.registerAuth(fl)
	fl.IntVar(&f.cfg.Jobs, "jobs", 100_000, "jobs to add and run")
	fl.IntVar(&f.cfg.Producers, "producers", 4, "goroutines adding jobs")
	fl.IntVar(&f.cfg.Batch, "batch", 100, "jobs per ADD call (1..1000)")
	fl.IntVar(&f.cfg.Concurrency, "concurrency", 100, "the worker's handler slots")
	fl.IntVar(&f.cfg.SteadyRate, "steady-rate", 2000, "jobs/s of the steady run (0 skips it)")
	fl.IntVar(&f.cfg.SteadyJobs, "steady-jobs", 2000, "jobs of the steady run")
	fl.IntVar(&f.cfg.IdleProbes, "idle-probes", 200, "jobs added one at a time to an idle worker (0 skips the probe)")
	fl.StringVar(&f.addr, "addr", "", "use the server at host:port instead of starting one")
	fl.StringVar(&f.module, "module", "", "the trafikey module to load into the demo's server")
	fl.BoolVar(&f.noModule, "no-module", false, "start the demo's server without any module")
	fl.StringVar(&f.executor, "executor", "auto", "lua, native, or auto (native when the module is loaded)")
	fl.StringVar(&f.queue, "queue", "", `queue name (default "demo" on the demo's server, "demo-<time>" with --addr, deleted at the end); a queue given is kept`)
	fl.BoolVar(&f.progress, "progress", true, "show a progress bar on stderr")
	return cmd
}

func runDemo(cmd *cobra.Command, f *demoFlags, moduleAsked bool) error {
	ctx := cmd.Context()
	if err := f.cfg.Validate(); err != nil {
		return err
	}
	if moduleAsked && f.noModule {
		return errors.New("--module and --no-module exclude each other")
	}
	stderr := cmd.ErrOrStderr()
	addr, queue := f.addr, f.queue
	if addr != "" {
		if moduleAsked || f.noModule {
			return errors.New("--module and --no-module are for the demo's own server; with --addr, the server has what it was started with")
		}
		if queue == "" {
			queue = "demo-" + strconv.FormatInt(time.Now().UnixMilli(), 10)
		}
	} else {
		module := f.module
		if module == "" && !f.noModule {
			module = demo.FindModule()
		}
		startCtx, cancel := context.WithTimeout(ctx, serverStartTimeout)
		s, err := demo.StartServer(startCtx, module, moduleAsked, stderr)
		cancel()
		if err != nil {
			return err
		}
		defer s.Stop()
		addr = s.Addr()
		if loaded := s.Options().Module; loaded != "" {
			fmt.Fprintf(stderr, "demo: valkey-server on %s with module %s\n", addr, loaded)
		} else {
			fmt.Fprintf(stderr, "demo: valkey-server on %s without the module\n", addr)
		}
		if queue == "" {
			queue = "demo"
		}
	}

	// The demo's own server has no ACL user and no TLS.
	conn := connFlags{addr: addr}
	if f.addr != "" {
		conn = f.conn
		conn.addr = addr
	}
	client, err := conn.connect()
	if err != nil {
		return err
	}
	defer client.Close()
	exec, fallback, err := demo.ChooseExecutor(ctx, client, f.executor)
	if err != nil {
		return err
	}
	if fallback != "" && !f.noModule && (f.module != "" || demo.FindModule() != "") {
		fmt.Fprintf(stderr, "demo: using the Lua executor: %s\n", fallback)
	}
	q, err := trafikey.Open(ctx, client, queue, &trafikey.QueueOptions{Executor: exec})
	if err != nil {
		return err
	}
	if s, err := q.Stats(ctx); err == nil && s.Pending+s.Delayed+s.Active > 0 {
		return fmt.Errorf("queue %q on %s already holds jobs; pick another with --queue", queue, addr)
	}
	if f.addr != "" && f.queue == "" {
		// the demo's own queue on someone's server goes when the demo
		// ends, however it ends
		defer deleteDemoQueue(ctx, q, stderr)
	}

	cfg := f.cfg
	cfg.Log = stderr
	if f.progress {
		cfg.Progress = stderr
	}
	fmt.Fprintf(stderr, "demo: %d jobs, %s executor\n", cfg.Jobs, q.Executor())
	res, err := demo.Run(ctx, q, cfg)
	if err != nil {
		return err
	}
	return demo.WriteReport(cmd.OutOrStdout(), res, serverName(ctx, client, addr))
}

// demoCleanupTimeout bounds the deletion of the demo's queue.
const demoCleanupTimeout = 30 * time.Second

// deleteDemoQueue deletes the queue the demo made on a server given with
// --addr, even after an interrupt, and says so on w.
func deleteDemoQueue(ctx context.Context, q *trafikey.Queue, w io.Writer) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), demoCleanupTimeout)
	defer cancel()
	n, err := q.Admin().DeleteQueue(ctx)
	if err != nil {
		fmt.Fprintf(w, "demo: delete queue %s: %v (trafikey delete-queue %s deletes it)\n", q.Name(), err, q.Name())
		return
	}
	fmt.Fprintf(w, "demo: deleted queue %s (%d keys)\n", q.Name(), n)
}

// serverName describes the server: "valkey 8.0.1 at 127.0.0.1:40211".
func serverName(ctx context.Context, client valkey.Client, addr string) string {
	info, err := client.Do(ctx, client.B().Info().Section("server").Build()).ToString()
	if err != nil {
		return addr
	}
	for _, field := range []string{"valkey_version", "redis_version"} {
		if v := valkeyserver.InfoField(strings.ReplaceAll(info, "\r\n", "\n"), field); v != "" {
			return "valkey " + v + " at " + addr
		}
	}
	return addr
}
