package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/valkey-io/valkey-go"
)

// defaultAddr is the server the commands talk to by default.
const defaultAddr = "127.0.0.1:6379"

// connFlags are the connection settings every command that talks to a
// server shares: a single node (--addr) or a cluster (--cluster seeds), TLS,
// and an ACL user. Each flag left unset on the command line is taken from
// its environment variable.
type connFlags struct {
	addr        string
	cluster     []string
	user        string
	password    string
	tls         bool
	tlsCA       string
	tlsCert     string
	tlsKey      string
	tlsInsecure bool
	tlsServer   string
	timeout     time.Duration
}

// envFlags maps each connection flag to its environment variable.
var envFlags = []struct{ flag, env string }{
	{"addr", "TRAFIKEY_ADDR"},
	{"cluster", "TRAFIKEY_CLUSTER"},
	{"user", "TRAFIKEY_USER"},
	{"password", "TRAFIKEY_PASSWORD"},
	{"tls", "TRAFIKEY_TLS"},
	{"tls-ca", "TRAFIKEY_TLS_CA"},
	{"tls-cert", "TRAFIKEY_TLS_CERT"},
	{"tls-key", "TRAFIKEY_TLS_KEY"},
	{"tls-insecure", "TRAFIKEY_TLS_INSECURE"},
	{"tls-server-name", "TRAFIKEY_TLS_SERVER_NAME"},
	{"timeout", "TRAFIKEY_TIMEOUT"},
}

func (c *connFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.addr, "addr", defaultAddr, "server address host:port; a cluster node brings in its cluster (env TRAFIKEY_ADDR)")
	fs.StringSliceVar(&c.cluster, "cluster", nil, "cluster seed addresses host:port,host:port, tried in turn (env TRAFIKEY_CLUSTER)")
	c.registerAuth(fs)
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "bound on each server call or read of a command, and on each dashboard request (env TRAFIKEY_TIMEOUT)")
}

// registerAuth registers the ACL and TLS flags alone, for a command with
// its own way of choosing the server (demo).
func (c *connFlags) registerAuth(fs *pflag.FlagSet) {
	fs.StringVar(&c.user, "user", "", "ACL user name (env TRAFIKEY_USER)")
	fs.StringVar(&c.password, "password", "", "ACL password; prefer the environment variable, which no process listing shows (env TRAFIKEY_PASSWORD)")
	fs.BoolVar(&c.tls, "tls", false, "connect with TLS (env TRAFIKEY_TLS=1)")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "PEM file of the CA certificates that sign the server's certificate; implies --tls (env TRAFIKEY_TLS_CA)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM file of a client certificate, for servers that ask for one; implies --tls (env TRAFIKEY_TLS_CERT)")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM file of the client certificate's key (env TRAFIKEY_TLS_KEY)")
	fs.BoolVar(&c.tlsInsecure, "tls-insecure", false, "do not verify the server's certificate; implies --tls (env TRAFIKEY_TLS_INSECURE=1)")
	fs.StringVar(&c.tlsServer, "tls-server-name", "", "the name the server's certificate must carry (default: the address's host) (env TRAFIKEY_TLS_SERVER_NAME)")
}

// applyEnv sets every connection flag the command line left unset from its
// environment variable, read through lookup. --addr and --cluster exclude
// each other: one given on the command line makes the other's variable
// ignored.
func applyEnv(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	if fs.Changed("addr") && fs.Changed("cluster") {
		return usageErrorf("--addr and --cluster exclude each other")
	}
	for _, e := range envFlags {
		f := fs.Lookup(e.flag)
		if f == nil || f.Changed {
			continue
		}
		if (e.flag == "cluster" && fs.Changed("addr")) || (e.flag == "addr" && fs.Changed("cluster")) {
			continue
		}
		v, ok := lookup(e.env)
		if !ok || v == "" {
			continue
		}
		if err := fs.Set(e.flag, v); err != nil {
			return usageErrorf("environment variable %s: %v", e.env, err)
		}
	}
	return nil
}

// clientOption builds the valkey-go options of the flags.
func (c *connFlags) clientOption() (valkey.ClientOption, error) {
	opt := valkey.ClientOption{
		InitAddress: []string{c.addr},
		Username:    c.user,
		Password:    c.password,
		// Reads must see the server's data as it is now.
		DisableCache: true,
		ClientName:   "trafikey-cli",
	}
	// A node of a cluster, given with --addr or --cluster, is used as a
	// seed of its cluster: the client finds the others.
	if len(c.cluster) > 0 {
		opt.InitAddress = c.cluster
	}
	if c.timeout > 0 {
		opt.Dialer.Timeout = c.timeout
		opt.ConnWriteTimeout = c.timeout
	}
	if c.tls || c.tlsCA != "" || c.tlsCert != "" || c.tlsInsecure {
		cfg, err := c.tlsConfig()
		if err != nil {
			return opt, err
		}
		opt.TLSConfig = cfg
	}
	return opt, nil
}

func (c *connFlags) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         c.tlsServer,
		InsecureSkipVerify: c.tlsInsecure, //nolint:gosec // asked for by --tls-insecure
	}
	if c.tlsCA != "" {
		pem, err := os.ReadFile(c.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca: %s holds no PEM certificate", c.tlsCA)
		}
		cfg.RootCAs = pool
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return nil, usageErrorf("--tls-cert and --tls-key go together")
	}
	if c.tlsCert != "" {
		pair, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// where names the server or cluster for messages.
func (c *connFlags) where() string {
	if len(c.cluster) > 0 {
		return "cluster " + strings.Join(c.cluster, ",")
	}
	return c.addr
}

// connect opens a client on the server or cluster of the flags.
func (c *connFlags) connect() (valkey.Client, error) {
	opt, err := c.clientOption()
	if err != nil {
		return nil, err
	}
	client, err := valkey.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", c.where(), err)
	}
	return client, nil
}
