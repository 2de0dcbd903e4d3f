package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey/cmd/trafikey/internal/dash"
)

// dashShutdown bounds how long the dashboard waits for requests in flight
// when it stops.
const dashShutdown = 5 * time.Second

func (a *app) newDashCmd() *cobra.Command {
	var (
		conn   connFlags
		listen string
		o      dash.Options
	)
	cmd := &cobra.Command{
		Use:   "dash",
		Short: "Serve the web dashboard and Prometheus metrics",
		Long: `dash serves a web dashboard of every queue on the server or cluster: an
overview with counts per state and a throughput and failure chart, a page per
queue with its lanes, tables of a queue's jobs by state (paged, with find by
id), and a page per job (find it by queue and id). Unless --read-only, its
pages can pause, resume and promote a queue, requeue, run now or remove a
job, and requeue all dead jobs, remove the dead older than an age or run
every delayed job now; with --read-only the actions are hidden and the API
refuses them (HTTP 403). Every queue's STATS is read every --sample, and the queues are
found again by SCAN every --discover; the pages follow over server-sent
events, at once for the queues with job events on (up to --live-queues of
them: the dashboard watches their events streams). Prometheus metrics of
every queue are on /metrics.

The pages, the JSON API (under /api/) and /metrics have no login: the
default --listen is loopback only. Give it another address only behind a
proxy that authenticates, or with --read-only.`,
		Args: args(cobra.NoArgs),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if err := applyEnv(cmd.Flags(), a.lookupEnv); err != nil {
				return err
			}
			ctx := cmd.Context()
			client, err := conn.connect()
			if err != nil {
				return err
			}
			defer client.Close()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("--listen: %w", err)
			}
			defer ln.Close()
			o.Where, o.Timeout = conn.where(), conn.timeout
			o.Log = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			// On loopback, answer loopback names only (no DNS rebinding).
			if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
				o.LoopbackHosts = true
			}
			d, err := dash.New(client, o)
			if err != nil {
				return err
			}
			mode := ""
			if o.ReadOnly {
				mode = " (read-only)"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "trafikey dash: http://%s/ for %s%s\n", ln.Addr(), conn.where(), mode)
			return serve(ctx, ln, d)
		}),
	}
	conn.register(cmd.Flags())
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", "127.0.0.1:8090", "address to serve on")
	fl.BoolVar(&o.ReadOnly, "read-only", false, "hide the actions and refuse them in the API")
	fl.DurationVar(&o.SampleEvery, "sample", 2*time.Second, "how often every queue's STATS is read")
	fl.DurationVar(&o.DiscoverEvery, "discover", 10*time.Second, "how often the queues are found again by SCAN")
	fl.IntVar(&o.History, "history", 300, "samples per queue kept for the charts")
	fl.IntVar(&o.LiveQueues, "live-queues", 64, "most queues with job events on whose events are watched for live updates (-1: none)")
	fl.IntVar(&o.MetricsLanes, "metrics-lanes", 0, "per-lane series on /metrics for up to this many lanes of each queue")
	return cmd
}

// serve runs d on ln until ctx ends, then lets requests in flight finish.
func serve(ctx context.Context, ln net.Listener, d *dash.Server) error {
	srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 10 * time.Second}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(runCtx)
	}()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
		shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dashShutdown)
		err = srv.Shutdown(shutCtx)
		cancel()
	case err = <-errc:
	}
	stop()
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
