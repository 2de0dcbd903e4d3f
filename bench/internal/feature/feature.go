// Package feature holds what the feature benchmarks (bench/lanes,
// bench/flows, bench/schedules, bench/events) share: one valkey-server with
// the module built from this checkout, its statistics, and the report's
// median and range.
package feature

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/modbuild"
	"github.com/trafikey/trafikey/internal/repo"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// Server is one valkey-server with the module, an admin connection for
// its statistics and a client for the queues.
type Server struct {
	Srv    *valkeyserver.Server
	Admin  *valkeyserver.Conn
	Client valkey.Client
}

// Start builds the module and starts the server.
func Start(ctx context.Context) (*Server, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(os.Stderr, "building the module …")
	module, err := modbuild.Cached(ctx, root)
	if err != nil {
		return nil, err
	}
	srv, err := valkeyserver.Start(ctx, valkeyserver.Options{Module: module})
	if err != nil {
		return nil, err
	}
	admin, err := srv.Dial(ctx)
	if err != nil {
		_ = srv.Stop()
		return nil, err
	}
	client, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{srv.Addr()}, DisableCache: true})
	if err != nil {
		_ = admin.Close()
		_ = srv.Stop()
		return nil, err
	}
	return &Server{Srv: srv, Admin: admin, Client: client}, nil
}

// Close stops the client and the server.
func (s *Server) Close() {
	s.Client.Close()
	_ = s.Admin.Close()
	_ = s.Srv.Stop()
}

// Open flushes the server and opens queue name with executor e.
func (s *Server) Open(ctx context.Context, e trafikey.Executor, name string) (*trafikey.Queue, error) {
	if _, err := s.Admin.Do(ctx, "FLUSHALL", "SYNC"); err != nil {
		return nil, err
	}
	return trafikey.Open(ctx, s.Client, name, &trafikey.QueueOptions{Executor: e})
}

// ResetStats zeroes the server's command statistics.
func (s *Server) ResetStats(ctx context.Context) error {
	_, err := s.Admin.Do(ctx, "CONFIG", "RESETSTAT")
	return err
}

// Usec is the total usec INFO commandstats gives verb (as in EMQ.CLAIM,
// lower case: "claim") since the last ResetStats: the module's command, or
// for the Lua executor every script call (EVALSHA, and EVAL where a first
// call met NOSCRIPT; their _RO forms for the read verbs).
func (s *Server) Usec(ctx context.Context, e trafikey.Executor, verb string) (float64, error) {
	v, err := s.Admin.Do(ctx, "INFO", "commandstats")
	if err != nil {
		return 0, err
	}
	names := []string{"cmdstat_emq." + verb + ":"}
	if e == trafikey.ExecutorLua {
		names = []string{"cmdstat_evalsha:", "cmdstat_eval:", "cmdstat_evalsha_ro:", "cmdstat_eval_ro:"}
	}
	total := 0.0
	for _, line := range strings.Split(fmt.Sprint(v), "\r\n") {
		for _, name := range names {
			// module commands are listed as registered (EMQ.CLAIM)
			rest, ok := strings.CutPrefix(strings.ToLower(line), name)
			if !ok {
				continue
			}
			for _, f := range strings.Split(rest, ",") {
				if u, ok := strings.CutPrefix(f, "usec="); ok {
					n, err := strconv.ParseFloat(u, 64)
					if err != nil {
						return 0, err
					}
					total += n
				}
			}
		}
	}
	return total, nil
}

// Version is the server's version, for the report.
func (s *Server) Version(ctx context.Context) string {
	v, err := s.Admin.Do(ctx, "INFO", "server")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(fmt.Sprint(v), "\r\n") {
		if ver, ok := strings.CutPrefix(line, "valkey_version:"); ok {
			return "Valkey " + ver
		}
	}
	return "?"
}

// Spread renders the median and the range of xs.
func Spread(xs []float64, f func(float64) string) string {
	if len(xs) == 0 {
		return "—"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("%s (%s–%s)", f(s[len(s)/2]), f(s[0]), f(s[len(s)-1]))
}

// CPU is the server process's CPU time so far, in seconds (used_cpu_user
// plus used_cpu_sys of INFO cpu): every thread, the background ones too.
func (s *Server) CPU(ctx context.Context) (float64, error) {
	v, err := s.Admin.Do(ctx, "INFO", "cpu")
	if err != nil {
		return 0, err
	}
	text := fmt.Sprint(v)
	total := 0.0
	for _, f := range []string{"used_cpu_user", "used_cpu_sys"} {
		n, err := strconv.ParseFloat(valkeyserver.InfoField(text, f), 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu %s: %w", f, err)
		}
		total += n
	}
	return total, nil
}
