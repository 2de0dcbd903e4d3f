// Package trafikeytest helps test code that uses trafikey: a throwaway
// valkey-server on a free loopback port, optionally with the trafikey
// module loaded, and Work, which runs a handler on one job exactly as a
// Worker would and returns what became of it.
//
// The server is a real valkey-server process (Valkey 8 is assumed on PATH,
// or named by $TRAFIKEY_VALKEY_SERVER), never a fake, so a test sees the
// same replies, refusals and timing rules as production.
package trafikeytest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// Server is a valkey-server process started for a test, with a client
// connected to it.
type Server struct {
	srv    *valkeyserver.Server
	client valkey.Client
}

// Options are what Start and NewServer configure of the server.
type Options struct {
	// Module is the path of a trafikey module to load (WithModule).
	Module string
	// Config holds configuration directive and value pairs (WithConfig).
	Config []string
}

// Option configures Start and NewServer.
type Option func(*Options)

// WithModule loads the trafikey module at path (a file built with
// `go build -buildmode=c-shared -o trafikey.so github.com/trafikey/trafikey/module`),
// so queues opened on the server run on the native executor. See
// BuildModule.
func WithModule(path string) Option {
	return func(o *Options) { o.Module = path }
}

// WithConfig adds server configuration as directive and value pairs, e.g.
// WithConfig("maxmemory", "10mb").
func WithConfig(pairs ...string) Option {
	return func(o *Options) { o.Config = append(o.Config, pairs...) }
}

// Start starts a valkey-server on a free loopback port in a temporary
// directory and connects a client to it. Close stops it and removes the
// directory.
func Start(ctx context.Context, opts ...Option) (*Server, error) {
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	srv, err := valkeyserver.Start(ctx, valkeyserver.Options{Module: o.Module, Config: o.Config})
	if err != nil {
		return nil, fmt.Errorf("trafikeytest: start valkey-server: %w", err)
	}
	client, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{srv.Addr()}, DisableCache: true})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("trafikeytest: connect to %s: %w", srv.Addr(), err), srv.Stop())
	}
	return &Server{srv: srv, client: client}, nil
}

// NewServer is Start for a test: it fails tb when the server cannot start,
// and stops the server when the test ends, printing the server's log when
// the test failed.
func NewServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s, err := Start(context.Background(), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("valkey-server log (%s):\n%s", s.Addr(), s.srv.LogTail(40))
		}
		if err := s.Close(); err != nil {
			tb.Errorf("trafikeytest: stop valkey-server: %v", err)
		}
	})
	return s
}

// Addr is the server's host:port on loopback.
func (s *Server) Addr() string { return s.srv.Addr() }

// Client is a client connected to the server, closed by Close.
func (s *Server) Client() valkey.Client { return s.client }

// Close closes the client, stops the server (the process this package
// started, by its PID) and removes its directory.
func (s *Server) Close() error {
	s.client.Close()
	return s.srv.Stop()
}
