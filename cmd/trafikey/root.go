package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/spf13/cobra"
	"github.com/valkey-io/valkey-go"
	"golang.org/x/term"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
	"github.com/trafikey/trafikey/internal/protocol"
)

// app is what every command shares: how it reads the environment, and
// whether its standard input is a terminal a person types on.
type app struct {
	lookupEnv func(string) (string, bool)
	terminal  func(in io.Reader) bool
}

// newRootCmd builds the command tree; lookupEnv reads the environment
// variables of the connection flags (os.LookupEnv in main).
func newRootCmd(lookupEnv func(string) (string, bool)) *cobra.Command {
	return (&app{lookupEnv: lookupEnv, terminal: isTerminal}).rootCmd()
}

// isTerminal reports whether in is a terminal.
func isTerminal(in io.Reader) bool {
	f, ok := in.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// rootCmd builds the command tree of a.
func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "trafikey",
		Short: "trafikey: a job queue inside Valkey",
		Long: `trafikey is a job queue that lives inside Valkey. This tool lists and inspects
queues, lanes, schedules and jobs, pauses and resumes queues and lanes, requeues,
removes and cancels jobs, deletes queues, serves a web dashboard with Prometheus
metrics, and runs a demo on a local server.

Every command that talks to a server takes the same connection flags: --addr
for a server (a cluster node brings in its cluster), or --cluster with several
seed addresses; --tls, --tls-ca, --tls-cert,
--tls-key, --tls-insecure, --tls-server-name; --user and --password for an ACL
user. Each one left off the command line is read from its environment
variable: TRAFIKEY_ADDR, TRAFIKEY_CLUSTER (comma-separated), TRAFIKEY_TLS,
TRAFIKEY_TLS_CA, TRAFIKEY_TLS_CERT, TRAFIKEY_TLS_KEY, TRAFIKEY_TLS_INSECURE,
TRAFIKEY_TLS_SERVER_NAME, TRAFIKEY_USER, TRAFIKEY_PASSWORD, TRAFIKEY_TIMEOUT.
Every command that reads prints JSON with --json.

` + exitCodesHelp,
		SilenceUsage: true,
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath())
	})
	root.AddCommand(
		a.newDemoCmd(),
		a.newQueuesCmd(), a.newStatsCmd(), a.newLanesCmd(), a.newWorkersCmd(), a.newInspectCmd(), a.newEventsCmd(),
		a.newPauseCmd(true), a.newPauseCmd(false), a.newPromoteCmd(),
		a.newJobActionCmd(requeueAction()), a.newJobActionCmd(removeAction()), a.newJobActionCmd(cancelAction()),
		a.newJobsCmd(), a.newJobActionCmd(retryAction()),
		a.newDashCmd(), a.newSchedulesCmd(), a.newLaneCmd(), a.newDeleteQueueCmd(),
	)
	return root
}

// session is one command's connection and output settings.
type session struct {
	cmd  *cobra.Command
	conn *connFlags
	json bool

	mu sync.Mutex
	c  valkey.Client // connected on first use
}

// client returns the session's client, connecting on the first call.
func (s *session) client() (valkey.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		c, err := s.conn.connect()
		if err != nil {
			return nil, err
		}
		s.c = c
	}
	return s.c, nil
}

// out is where the command prints its result.
func (s *session) out() io.Writer { return s.cmd.OutOrStdout() }

// printJSON prints v as indented JSON.
func (s *session) printJSON(v any) error {
	enc := json.NewEncoder(s.out())
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// queue opens an existing queue without writing to it.
func (s *session) queue(ctx context.Context, name string) (*trafikey.Queue, error) {
	if !protocol.ValidQueueName(name) {
		return nil, usageErrorf("%s is not a queue name (1..%d bytes, no braces)", strconv.Quote(name), protocol.MaxQueueName)
	}
	client, err := s.client()
	if err != nil {
		return nil, err
	}
	q, err := admin.Open(ctx, client, name)
	if errors.Is(err, admin.ErrNoQueue) {
		return nil, fmt.Errorf("queue %q not found on %s: %w", name, s.conn.where(), admin.ErrNoQueue)
	}
	return q, err
}

// explain adds what an error of a queue's call means to an operator.
func (s *session) explain(q *trafikey.Queue, err error) error {
	if errors.Is(err, trafikey.ErrWire) {
		return fmt.Errorf("queue %q on %s was written by another wire version: %w", q.Name(), s.conn.where(), err)
	}
	return err
}

// bound returns ctx bounded by --timeout, for one call or one read.
func (s *session) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.conn.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.conn.timeout)
}

// connected makes a command that talks to a server: it registers the
// connection flags (and --json when withJSON), and runs run with a
// session connected as they say.
func (a *app) connected(cmd *cobra.Command, withJSON bool, run func(ctx context.Context, s *session, args []string) error) *cobra.Command {
	s := &session{cmd: cmd, conn: &connFlags{}}
	s.conn.register(cmd.Flags())
	if withJSON {
		cmd.Flags().BoolVar(&s.json, "json", false, "print JSON")
	}
	cmd.RunE = runE(func(cmd *cobra.Command, args []string) error {
		if err := applyEnv(cmd.Flags(), a.lookupEnv); err != nil {
			return err
		}
		defer func() {
			if s.c != nil {
				s.c.Close()
			}
		}()
		return run(cmd.Context(), s, args)
	})
	return cmd
}

// args wraps a positional-argument check so that its refusal is a usage
// error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return usageErrorf("%v (see %s --help)", err, cmd.CommandPath())
		}
		return nil
	}
}
