package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey/cmd/trafikey/internal/dash"
)

// dashShutdown bounds how long the dashboard waits for requests in flight
// when it stops.
const dashShutdown = 5 * time.Second

func (a *app) newDashCmd() *cobra.Command {
	var (
		conn        connFlags
		listen      string
		o           dash.Options
		token       string
		basic       string
		allowNoAuth bool
	)
	cmd := &cobra.Command{
		Use:   "dash",
		Short: "Serve the web dashboard and Prometheus metrics",
		Long: `dash serves a web dashboard of every queue on the server or cluster: an
overview with counts per state, the failure rate over the last minute and 5
minutes and a throughput and failure chart, a page per queue with its lanes,
its schedules (with their next occurrences), tables of a queue's jobs by
state (paged, with find by id, the pending ones by lane), and a page per job
(find it by queue and id). Unless --read-only, its pages can pause, resume,
promote and delete a queue (after its name is typed), pause, resume and cap a
lane, pause, resume and remove a schedule, requeue, run now, cancel or remove
a job (a waiting parent with its flow), and requeue all dead jobs, remove the
dead older than an age or run every delayed job now; with --read-only the
actions are hidden and the API refuses them (HTTP 403). Every queue's STATS is read every --sample, and the queues are
found again by SCAN every --discover; the pages follow over server-sent
events, at once for the queues with job events on (up to --live-queues of
them: the dashboard watches their events streams). Prometheus metrics of
every queue are on /metrics.

The dashboard starts whether or not the server answers: until it does, and
whenever it stops answering, the pages say the server is unreachable (the
queues keep their last counts read) and the dashboard connects again by
itself.

Login: --token (env TRAFIKEY_DASH_TOKEN; at least 16 characters) asks every
request of the pages, the API and /metrics for that bearer token (a browser
opens the dashboard once at /?token=<token>, which sets it as a cookie), and
--basic-auth user:password (env TRAFIKEY_DASH_BASIC_AUTH) for HTTP basic
authentication; with both, either is accepted. Prefer the environment
variables, which no process listing shows. The default --listen is loopback
only; on any other address dash refuses to start without a login unless
--allow-no-auth says a proxy in front of it authenticates, and then warns on
stderr.`,
		Args: args(cobra.NoArgs),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if err := applyEnv(cmd.Flags(), a.lookupEnv); err != nil {
				return err
			}
			authFromEnv(cmd, a.lookupEnv, &token, &basic)
			ctx := cmd.Context()
			stderr := cmd.ErrOrStderr()
			o.Auth.Token = token
			if basic != "" {
				user, password, ok := strings.Cut(basic, ":")
				if !ok || user == "" || password == "" {
					return usageErrorf("--basic-auth: user:password")
				}
				o.Auth.User, o.Auth.Password = user, password
			}
			// The options are checked before anything is opened.
			if _, err := conn.clientOption(); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("--listen: %w", err)
			}
			defer ln.Close()
			if dash.Exposed(ln.Addr()) && !o.Auth.Enabled() {
				if !allowNoAuth {
					return usageErrorf("--listen %s is reachable from other machines and the dashboard has no login: set --token or --basic-auth (or TRAFIKEY_DASH_TOKEN, TRAFIKEY_DASH_BASIC_AUTH), or pass --allow-no-auth when a proxy in front of it authenticates", ln.Addr())
				}
				fmt.Fprintf(stderr, "WARNING: trafikey dash listens on %s with NO LOGIN (--allow-no-auth): anyone who reaches it reads every job's payload", ln.Addr())
				if !o.ReadOnly {
					fmt.Fprint(stderr, " and can pause, remove and delete queues and jobs")
				}
				fmt.Fprintln(stderr, "; put an authenticating proxy in front of it, or set --token or --basic-auth.")
			}
			o.Where, o.Timeout = conn.where(), conn.timeout
			o.Log = slog.New(slog.NewTextHandler(stderr, nil))
			// On loopback, answer loopback names only (no DNS rebinding).
			if !dash.Exposed(ln.Addr()) {
				o.LoopbackHosts = true
			}
			d, err := dash.Dial(conn.connect, o)
			if err != nil {
				return usageErrorf("%v", err)
			}
			var mode []string
			if o.ReadOnly {
				mode = append(mode, "read-only")
			}
			if o.Auth.Enabled() {
				mode = append(mode, "login asked")
			}
			suffix := ""
			if len(mode) > 0 {
				suffix = " (" + strings.Join(mode, ", ") + ")"
			}
			fmt.Fprintf(stderr, "trafikey dash: http://%s/ for %s%s\n", ln.Addr(), conn.where(), suffix)
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
	fl.StringVar(&token, "token", "", "ask every request for this bearer token, 16 characters or more; prefer the environment variable (env TRAFIKEY_DASH_TOKEN)")
	fl.StringVar(&basic, "basic-auth", "", "ask every request for HTTP basic authentication as user:password; prefer the environment variable (env TRAFIKEY_DASH_BASIC_AUTH)")
	fl.BoolVar(&allowNoAuth, "allow-no-auth", false, "serve beyond loopback without a login (behind a proxy that authenticates), with a warning")
	return cmd
}

// authFromEnv sets the login flags the command line left unset from their
// environment variables.
func authFromEnv(cmd *cobra.Command, lookup func(string) (string, bool), token, basic *string) {
	for _, e := range []struct {
		flag, env string
		v         *string
	}{{"token", "TRAFIKEY_DASH_TOKEN", token}, {"basic-auth", "TRAFIKEY_DASH_BASIC_AUTH", basic}} {
		if cmd.Flags().Changed(e.flag) {
			continue
		}
		if v, ok := lookup(e.env); ok && v != "" {
			*e.v = v
		}
	}
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
