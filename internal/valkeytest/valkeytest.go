// Package valkeytest wraps package valkeyserver for tests and benchmarks:
// servers stop at the end of the test, their logs are shown when it fails,
// and helpers compare datasets before and after an operation.
package valkeytest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/modbuild"
	"github.com/trafikey/trafikey/internal/repo"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// StartTimeout bounds the start of a server or a cluster.
const StartTimeout = 20 * time.Second

// logLines is how many lines of a server's log a failed test prints.
const logLines = 60

// Start starts a server for the test and stops it at cleanup. When the test
// has failed by then, the last lines of the server's log are logged first.
func Start(t testing.TB, o valkeyserver.Options) *valkeyserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	s, err := valkeyserver.Start(ctx, o)
	if err != nil {
		t.Fatalf("start valkey-server: %v", err)
	}
	t.Cleanup(func() { stop(t, s) })
	return s
}

func stop(t testing.TB, s *valkeyserver.Server) {
	if t.Failed() {
		t.Logf("valkey-server %s (pid %d) log, last %d lines:\n%s", s.Addr(), s.PID(), logLines, s.LogTail(logLines))
	}
	if err := s.Stop(); err != nil {
		t.Errorf("stop valkey-server %s: %v", s.Addr(), err)
	}
}

// ServerIsRedis reports whether the server build the harness starts (see
// valkeyserver.DefaultBin, TRAFIKEY_VALKEY_SERVER) is Redis rather than
// Valkey, as the binary's --version says. On Redis only the Lua executor
// exists: the module is Valkey's.
func ServerIsRedis(t testing.TB) bool {
	t.Helper()
	v, err := valkeyserver.BinVersion(valkeyserver.DefaultBin())
	if err != nil {
		t.Fatalf("which server build: %v", err)
	}
	return v.Product == "redis"
}

// StartCluster starts a cluster for the test and stops it at cleanup, logging
// the tail of every node's log when the test has failed.
func StartCluster(t testing.TB, o valkeyserver.ClusterOptions) *valkeyserver.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	c, err := valkeyserver.StartCluster(ctx, o)
	if err != nil {
		t.Fatalf("start valkey cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, s := range c.Nodes() {
				t.Logf("valkey-server %s (pid %d) log, last %d lines:\n%s", s.Addr(), s.PID(), logLines, s.LogTail(logLines))
			}
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop valkey cluster: %v", err)
		}
	})
	return c
}

// Client returns a valkey-go client (client-side caching off) connected to
// s as the default user, closed at cleanup. A node in cluster mode gets a
// cluster client.
func Client(t testing.TB, s *valkeyserver.Server) valkey.Client {
	t.Helper()
	return ClientWith(t, s, valkey.ClientOption{})
}

// ClientWith is Client with more options, e.g. Username and Password for an
// ACL user. InitAddress defaults to s and DisableCache is always set.
func ClientWith(t testing.TB, s *valkeyserver.Server, opt valkey.ClientOption) valkey.Client {
	t.Helper()
	if len(opt.InitAddress) == 0 {
		opt.InitAddress = []string{s.Addr()}
	}
	return newClient(t, opt)
}

// ClusterClient returns a valkey-go cluster client (client-side caching off)
// seeded with every node of c, closed at cleanup.
func ClusterClient(t testing.TB, c *valkeyserver.Cluster) valkey.Client {
	t.Helper()
	return newClient(t, valkey.ClientOption{InitAddress: c.Addrs()})
}

func newClient(t testing.TB, opt valkey.ClientOption) valkey.Client {
	t.Helper()
	opt.DisableCache = true
	client, err := valkey.NewClient(opt)
	if err != nil {
		t.Fatalf("valkey client for %v: %v", opt.InitAddress, err)
	}
	t.Cleanup(client.Close)
	return client
}

// Do runs one command on s (see valkeyserver.Server.Do) and fails the test on
// an error or an error reply.
func Do(t testing.TB, s *valkeyserver.Server, args ...string) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := s.Do(ctx, args...)
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return v
}

// Reply runs a command on s and returns its reply, or its error reply as a
// valkeyserver.ReplyError value; any other error fails the test now.
func Reply(t testing.TB, s *valkeyserver.Server, args ...string) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := s.Do(ctx, args...)
	var re valkeyserver.ReplyError
	if errors.As(err, &re) {
		return re
	}
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return v
}

// Digest returns DEBUG DIGEST of the whole dataset of s, which changes with
// any change of any key. The server must be started with Debug.
func Digest(t testing.TB, s *valkeyserver.Server) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := s.Do(ctx, "DEBUG", "DIGEST")
	if err != nil {
		t.Fatalf("DEBUG DIGEST on %s (start the server with Options.Debug): %v", s.Addr(), err)
	}
	d, _ := v.(string)
	return d
}

// scanCount is Snapshot's SCAN COUNT.
const scanCount = "1000000"

// Snapshot returns the keys of s that match pattern, each mapped to its DUMP
// serialisation preceded by whether it has an expiry ("expiry=yes\n" or
// "expiry=no\n"), so that adding or removing a TTL counts as a change while
// the TTL counting down does not. DUMP bytes depend on the value's encoding
// too: a value rewritten to its old contents may still compare as changed.
func Snapshot(t testing.TB, s *valkeyserver.Server, pattern string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := s.Dial(ctx)
	if err != nil {
		t.Fatalf("snapshot of %s: %v", s.Addr(), err)
	}
	defer c.Close()
	snap := map[string]string{}
	cursor := "0"
	for {
		// A SCAN step visits COUNT slots of the whole keyspace whatever the
		// pattern: a suite whose scenarios share a server of tens of
		// thousands of keys paid tens of round trips per snapshot at 1000.
		// One step reads it all, as KEYS would; a keyspace larger than
		// scanCount takes more.
		v, err := c.Do(ctx, "SCAN", cursor, "MATCH", pattern, "COUNT", scanCount)
		if err != nil {
			t.Fatalf("snapshot of %s: SCAN: %v", s.Addr(), err)
		}
		reply, _ := v.([]any)
		if len(reply) != 2 {
			t.Fatalf("snapshot of %s: unexpected SCAN reply %#v", s.Addr(), v)
		}
		cursor, _ = reply[0].(string)
		keys, _ := reply[1].([]any)
		cmds := make([][]string, 0, 2*len(keys))
		for _, k := range keys {
			key, _ := k.(string)
			cmds = append(cmds, []string{"DUMP", key}, []string{"PTTL", key})
		}
		replies, err := c.DoMulti(ctx, cmds...)
		if err != nil {
			t.Fatalf("snapshot of %s: %v", s.Addr(), err)
		}
		for i := 0; i < len(replies); i += 2 {
			key := cmds[i][1]
			if re, ok := replies[i].(valkeyserver.ReplyError); ok {
				t.Fatalf("snapshot of %s: DUMP %q: %v", s.Addr(), key, re)
			}
			dump, ok := replies[i].(string)
			if !ok {
				continue // expired or deleted since SCAN saw it
			}
			pttl, _ := replies[i+1].(int64)
			flag := "expiry=no\n"
			if pttl > 0 {
				flag = "expiry=yes\n"
			}
			snap[key] = flag + dump
		}
		if cursor == "0" {
			return snap
		}
	}
}

// Diff describes how snapshot after differs from before, one line per key,
// sorted: "added K", "removed K", or "changed K (what)". It is empty when
// they are equal.
func Diff(before, after map[string]string) []string {
	var out []string
	keys := slices.Sorted(maps.Keys(before))
	for _, k := range keys {
		a, ok := after[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("removed %q", k))
		case a != before[k]:
			out = append(out, fmt.Sprintf("changed %q (%s)", k, describeChange(before[k], a)))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[k]; !ok {
			out = append(out, fmt.Sprintf("added %q", k))
		}
	}
	slices.SortStableFunc(out, func(x, y string) int {
		return strings.Compare(diffKey(x), diffKey(y))
	})
	return out
}

func diffKey(line string) string {
	_, rest, _ := strings.Cut(line, " ")
	return rest
}

func describeChange(before, after string) string {
	bFlag, bDump, _ := strings.Cut(before, "\n")
	aFlag, aDump, _ := strings.Cut(after, "\n")
	var what []string
	if bFlag != aFlag {
		what = append(what, bFlag+" → "+aFlag)
	}
	if bDump != aDump {
		what = append(what, "value: "+strconv.Itoa(len(bDump))+" → "+strconv.Itoa(len(aDump))+" dump bytes")
	}
	return strings.Join(what, ", ")
}

// WaitReplicated waits until replica r has applied everything primary p
// had written when it was called (valkeyserver.WaitCaughtUp), and fails the
// test now when it does not within StartTimeout.
func WaitReplicated(t testing.TB, p, r *valkeyserver.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	if err := r.WaitCaughtUp(ctx, p); err != nil {
		t.Fatal(err)
	}
}

// RequireUnchanged fails the test now, listing every key added, removed or
// changed, unless the two snapshots are equal.
func RequireUnchanged(t testing.TB, before, after map[string]string) {
	t.Helper()
	if d := Diff(before, after); len(d) > 0 {
		t.Fatalf("dataset changed, %d key(s):\n  %s", len(d), strings.Join(d, "\n  "))
	}
}

var (
	moduleOnce sync.Once
	modulePath string
	moduleErr  error
)

// ModulePath returns the path of the trafikey module to load: $TRAFIKEY_MODULE
// when set, otherwise ./module built with -buildmode=c-shared into the
// user's module cache (modbuild.Cached), which every test binary of a run
// shares: the first to miss builds it, the others wait and load it. A
// module that cannot be built fails the test: the native executor's tests
// never pass by not running.
func ModulePath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TRAFIKEY_MODULE"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("TRAFIKEY_MODULE: %v", err)
		}
		return p
	}
	moduleOnce.Do(buildModule)
	if moduleErr != nil {
		t.Fatalf("build the trafikey module: %v", moduleErr)
	}
	return modulePath
}

func buildModule() {
	root, err := repo.Root()
	if err != nil {
		moduleErr = err
		return
	}
	modulePath, moduleErr = modbuild.Cached(context.Background(), root)
}

// RequireVerbs fails the test unless the server behind c answers
// EMQ.VERSION with this wire and registers every job-core verb: a module
// that lost a verb's registration must turn the native tests red, not skip
// them.
func RequireVerbs(t testing.TB, c valkey.Client) {
	t.Helper()
	if why := executor.Missing(context.Background(), c); why != "" {
		t.Fatal(why)
	}
}
