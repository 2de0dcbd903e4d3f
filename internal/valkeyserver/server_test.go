package valkeyserver_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// requireGone checks that no process with pid exists any more (not even a
// zombie: the PID has been reaped).
func requireGone(t *testing.T, pid int) {
	t.Helper()
	require.NotZero(t, pid)
	err := syscall.Kill(pid, 0)
	require.ErrorIs(t, err, syscall.ESRCH, "process %d still exists", pid)
}

func TestStartStop(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s, err := valkeyserver.Start(ctx, valkeyserver.Options{})
	require.NoError(t, err)
	pid, dir := s.PID(), s.Dir()
	require.True(t, s.Running())
	require.Equal(t, "127.0.0.1", strings.Split(s.Addr(), ":")[0])
	require.NotZero(t, s.Port())
	require.FileExists(t, s.LogPath())
	require.Contains(t, s.Log(), "Ready to accept connections")

	// The process on the port is the one started, whatever binary or
	// wrapper (TRAFIKEY_VALKEY_SERVER) it runs.
	info, err := s.Info(ctx, "server")
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(pid), valkeyserver.InfoField(info, "process_id"))
	require.Equal(t, strconv.Itoa(s.Port()), valkeyserver.InfoField(info, "tcp_port"))

	require.NoError(t, s.Stop())
	requireGone(t, pid)
	require.False(t, s.Running())
	require.NoDirExists(t, dir)
	require.NoError(t, s.Stop(), "Stop is idempotent")

	_, err = s.Do(ctx, "PING")
	require.Error(t, err)
}

// Discard ends the server and removes its directory, through SHUTDOWN, or
// through Stop's SIGTERM when the server refuses the command; a server
// whose data is kept is stopped as by Stop, its directory left.
func TestDiscard(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	for _, refuse := range []bool{false, true} {
		s, err := valkeyserver.Start(ctx, valkeyserver.Options{})
		require.NoError(t, err)
		pid, dir := s.PID(), s.Dir()
		if refuse {
			_, err := s.Do(ctx, "ACL", "SETUSER", "default", "-shutdown")
			require.NoError(t, err)
		}
		require.NoError(t, s.Discard(), "refused: %v", refuse)
		requireGone(t, pid)
		require.False(t, s.Running())
		require.NoDirExists(t, dir)
		require.NoError(t, s.Discard(), "Discard is idempotent")
	}
	given := filepath.Join(t.TempDir(), "data")
	s, err := valkeyserver.Start(ctx, valkeyserver.Options{Dir: given})
	require.NoError(t, err)
	pid := s.PID()
	require.NoError(t, s.Discard())
	requireGone(t, pid)
	require.DirExists(t, given)
}

func TestKeepAndGivenDir(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	given := filepath.Join(t.TempDir(), "data")
	s, err := valkeyserver.Start(ctx, valkeyserver.Options{Dir: given})
	require.NoError(t, err)
	require.Equal(t, given, s.Dir())
	require.NoError(t, s.Stop())
	require.DirExists(t, given)

	k, err := valkeyserver.Start(ctx, valkeyserver.Options{Keep: true})
	require.NoError(t, err)
	require.NoError(t, k.Stop())
	require.DirExists(t, k.Dir())
	require.NoError(t, os.RemoveAll(k.Dir()))
}

func TestDo(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := valkeytest.Start(t, valkeyserver.Options{Debug: true})

	v, err := s.Do(ctx, "PING")
	require.NoError(t, err)
	require.Equal(t, "PONG", v)

	v, err = s.Do(ctx, "SET", "k", "v\r\n\x00binary")
	require.NoError(t, err)
	require.Equal(t, "OK", v)
	v, err = s.Do(ctx, "GET", "k")
	require.NoError(t, err)
	require.Equal(t, "v\r\n\x00binary", v)

	v, err = s.Do(ctx, "GET", "missing")
	require.NoError(t, err)
	require.Nil(t, v)

	v, err = s.Do(ctx, "RPUSH", "l", "a", "b")
	require.NoError(t, err)
	require.Equal(t, int64(2), v)
	v, err = s.Do(ctx, "LRANGE", "l", "0", "-1")
	require.NoError(t, err)
	require.Equal(t, []any{"a", "b"}, v)

	_, err = s.Do(ctx, "LPUSH", "k", "x")
	var re valkeyserver.ReplyError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "WRONGTYPE Operation against a key holding the wrong kind of value", err.Error())
	require.Equal(t, "WRONGTYPE", re.Code())

	// Error replies inside a transaction stay values of the array.
	c, err := s.Dial(ctx)
	require.NoError(t, err)
	defer c.Close()
	replies, err := c.DoMulti(ctx, []string{"MULTI"}, []string{"INCR", "n"}, []string{"LPUSH", "k", "x"}, []string{"EXEC"})
	require.NoError(t, err)
	require.Equal(t, []any{"OK", "QUEUED", "QUEUED", []any{int64(1), re}}, replies)

	require.Len(t, valkeytest.Digest(t, s), 40)
	require.Contains(t, valkeytest.Do(t, s, "CONFIG", "GET", "enable-module-command"), "yes")
}

func TestDataMemory(t *testing.T) {
	t.Parallel()
	n, err := valkeyserver.DataMemory("# Memory\r\nused_memory:1000\r\nmem_clients_normal:30\r\nused_memory_scripts:200\r\n")
	require.NoError(t, err)
	require.Equal(t, int64(770), n)
	_, err = valkeyserver.DataMemory("# Memory\r\nused_memory:1000\r\nmem_clients_normal:30\r\n")
	require.ErrorContains(t, err, "used_memory_scripts")

	// a server's dataset grows by what it is given, and its clients'
	// buffers do not count
	s := valkeytest.Start(t, valkeyserver.Options{})
	before, err := valkeyserver.DataMemory(valkeytest.Do(t, s, "INFO", "memory").(string))
	require.NoError(t, err)
	valkeytest.Do(t, s, "SET", "k", strings.Repeat("x", 100000))
	after, err := valkeyserver.DataMemory(valkeytest.Do(t, s, "INFO", "memory").(string))
	require.NoError(t, err)
	require.GreaterOrEqual(t, after-before, int64(100000))
}

func TestConfigAndStdout(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	var out strings.Builder
	s := valkeytest.Start(t, valkeyserver.Options{Config: []string{"maxmemory", "64mb", "--hz", "42"}, Stdout: &out})
	v, err := s.Do(ctx, "CONFIG", "GET", "hz")
	require.NoError(t, err)
	require.Equal(t, []any{"hz", "42"}, v)
	v, err = s.Do(ctx, "CONFIG", "GET", "save")
	require.NoError(t, err)
	require.Equal(t, []any{"save", ""}, v)

	_, err = valkeyserver.Start(ctx, valkeyserver.Options{Config: []string{"hz"}})
	require.Error(t, err)
}

func TestStartFailureShowsLog(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	_, err := valkeyserver.Start(ctx, valkeyserver.Options{Config: []string{"no-such-option", "1"}})
	require.Error(t, err)
	require.Contains(t, err.Error(), "no-such-option")

	_, err = valkeyserver.Start(ctx, valkeyserver.Options{Module: filepath.Join(t.TempDir(), "missing.so")})
	require.Error(t, err)
	require.Contains(t, err.Error(), "missing.so")
}

func TestKillRestartAOF(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := valkeytest.Start(t, valkeyserver.Options{AOF: true, Users: []string{"bob on >pw ~* +@all"}})
	port := s.Port()
	_, err := s.Do(ctx, "SET", "acked", "1")
	require.NoError(t, err)

	pid := s.PID()
	require.NoError(t, s.Kill())
	requireGone(t, pid)
	require.False(t, s.Running())
	require.DirExists(t, s.Dir())

	require.NoError(t, s.Restart(ctx))
	require.NotEqual(t, pid, s.PID())
	require.Equal(t, port, s.Port())
	v, err := s.Do(ctx, "GET", "acked")
	require.NoError(t, err)
	require.Equal(t, "1", v)

	// The ACL users come back too.
	c, err := s.Dial(ctx)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Do(ctx, "AUTH", "bob", "pw")
	require.NoError(t, err)

	// Restart of a running server stops it gracefully first.
	pid = s.PID()
	require.NoError(t, s.Restart(ctx))
	requireGone(t, pid)
	v, err = s.Do(ctx, "GET", "acked")
	require.NoError(t, err)
	require.Equal(t, "1", v)
}

func TestReplica(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	primary := valkeytest.Start(t, valkeyserver.Options{})
	replica := valkeytest.Start(t, valkeyserver.Options{ReplicaOf: primary.Addr()})
	require.NoError(t, replica.WaitReplicaSync(ctx))

	_, err := primary.Do(ctx, "SET", "k", "from-primary")
	require.NoError(t, err)
	n, err := primary.Do(ctx, "WAIT", "1", "5000")
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	// Right after the sync, WAIT has been seen to answer a moment before a
	// read on the replica shows the write: the write must show, soon.
	require.Eventually(t, func() bool {
		v, err := replica.Do(ctx, "GET", "k")
		return err == nil && v == "from-primary"
	}, 5*time.Second, 10*time.Millisecond)

	_, err = replica.Do(ctx, "SET", "k", "x")
	var re valkeyserver.ReplyError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "READONLY", re.Code())
}

func TestACLUser(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := valkeytest.Start(t, valkeyserver.Options{Users: []string{"alice on >pw ~a:* +@all"}})
	c, err := s.Dial(ctx)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Do(ctx, "AUTH", "alice", "pw")
	require.NoError(t, err)
	_, err = c.Do(ctx, "SET", "a:1", "x")
	require.NoError(t, err)
	_, err = c.Do(ctx, "GET", "b")
	var re valkeyserver.ReplyError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "NOPERM", re.Code(), err.Error())

	// The same through valkey-go.
	client := valkeytest.ClientWith(t, s, valkey.ClientOption{Username: "alice", Password: "pw"})
	err = client.Do(ctx, client.B().Get().Key("b").Build()).Error()
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "NOPERM"), err.Error())
}

func TestSnapshotDetectsChanges(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := valkeytest.Start(t, valkeyserver.Options{})
	client := valkeytest.Client(t, s)
	for _, cmd := range [][]string{
		{"SET", "q:a", "1"},
		{"SET", "q:b", "2"},
		{"HSET", "q:h", "f", "v"},
		{"SET", "other", "x"},
	} {
		require.NoError(t, client.Do(ctx, client.B().Arbitrary(cmd...).Build()).Error())
	}
	before := valkeytest.Snapshot(t, s, "q:*")
	require.Len(t, before, 3)
	valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "q:*"))

	// Changes outside the pattern are not seen.
	_, err := s.Do(ctx, "SET", "other", "y")
	require.NoError(t, err)
	valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "q:*"))

	for _, cmd := range [][]string{
		{"SET", "q:a", "changed"},
		{"PEXPIRE", "q:b", "600000"},
		{"DEL", "q:h"},
		{"SET", "q:new", "1"},
	} {
		_, err := s.Do(ctx, cmd...)
		require.NoError(t, err)
	}
	after := valkeytest.Snapshot(t, s, "q:*")
	diff := valkeytest.Diff(before, after)
	require.Len(t, diff, 4, diff)
	require.Regexp(t, `^changed "q:a" \(value: \d+ → \d+ dump bytes\)$`, diff[0])
	require.Equal(t, []string{
		`changed "q:b" (expiry=no → expiry=yes)`,
		`removed "q:h"`,
		`added "q:new"`,
	}, diff[1:])

	rec := &recorder{TB: t}
	valkeytest.RequireUnchanged(rec, before, after)
	require.True(t, rec.failed)
	for _, k := range []string{`"q:a"`, `"q:b"`, `"q:h"`, `"q:new"`} {
		require.Contains(t, rec.msg, k)
	}
	require.NotContains(t, rec.msg, "other")
}

// recorder captures a fatal failure instead of failing the real test.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = true
	r.msg = fmt.Sprintf(format, args...)
}

func TestCluster(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	start := time.Now()
	c := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 3})
	t.Logf("3-primary cluster ready in %v", time.Since(start).Round(time.Millisecond))
	require.Len(t, c.Nodes(), 3)
	require.Len(t, c.Addrs(), 3)
	for _, s := range c.Nodes() {
		info, err := s.Do(ctx, "CLUSTER", "INFO")
		require.NoError(t, err)
		text, _ := info.(string)
		require.Equal(t, "ok", valkeyserver.InfoField(text, "cluster_state"))
		require.Equal(t, "16384", valkeyserver.InfoField(text, "cluster_slots_assigned"))
	}

	client := valkeytest.ClusterClient(t, c)
	for _, k := range []string{"a", "b", "c", "{x}1", "{x}2"} {
		require.NoError(t, client.Do(ctx, client.B().Set().Key(k).Value("v").Build()).Error())
	}
	// Each key lives on the node that owns its slot.
	total := int64(0)
	for _, s := range c.Nodes() {
		n, err := s.Do(ctx, "DBSIZE")
		require.NoError(t, err)
		total += n.(int64)
	}
	require.Equal(t, int64(5), total)

	pids := make([]int, 0, 3)
	for _, s := range c.Nodes() {
		pids = append(pids, s.PID())
	}
	require.NoError(t, c.Stop())
	for _, pid := range pids {
		requireGone(t, pid)
	}
}

func TestReplyErrorIs(t *testing.T) {
	t.Parallel()
	err := error(valkeyserver.ReplyError("ERR boom"))
	var re valkeyserver.ReplyError
	require.True(t, errors.As(err, &re))
	require.Equal(t, "ERR", re.Code())
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	for info, want := range map[string]valkeyserver.Version{
		"# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.1.2\r\n": {Product: "valkey", Major: 9, Minor: 1, Patch: 2},
		"# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n":                   {Product: "redis", Major: 7, Minor: 0, Patch: 15},
	} {
		got, err := valkeyserver.ParseVersion(info)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err := valkeyserver.ParseVersion("# Server\r\nredis_version:seven\r\n")
	require.Error(t, err)
	_, err = valkeyserver.ParseVersion("")
	require.Error(t, err)

	v := valkeyserver.Version{Product: "valkey", Major: 8, Minor: 1, Patch: 1}
	require.Equal(t, "valkey 8.1.1", v.String())
	require.True(t, v.AtLeast("valkey", 8, 1))
	require.True(t, v.AtLeast("valkey", 7, 9))
	require.False(t, v.AtLeast("valkey", 9, 0))
	require.False(t, v.AtLeast("redis", 7, 0))
}

// TestVersion reads the running server's version: the build the harness
// runs, the default one or the one TRAFIKEY_VALKEY_SERVER names.
func TestVersion(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	v, err := s.Version(ctxT(t))
	require.NoError(t, err)
	bin, err := valkeyserver.BinVersion(valkeyserver.DefaultBin())
	require.NoError(t, err)
	require.Equal(t, v, bin, "the binary's --version and the server's INFO")
}

// TestTool finds a tool of the server's own build: beside the server
// binary the harness runs, which is where scripts/fetch-server.sh puts
// its wrappers, else on PATH.
func TestTool(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"valkey-server", "valkey-cli"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755))
	}
	t.Setenv(valkeyserver.EnvServer, filepath.Join(dir, "valkey-server"))
	got, err := valkeyserver.Tool("valkey-cli")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "valkey-cli"), got)

	t.Setenv("PATH", dir)
	_, err = valkeyserver.Tool("valkey-benchmark")
	require.Error(t, err, "neither beside the server nor on PATH")
	t.Setenv(valkeyserver.EnvServer, "")
	got, err = valkeyserver.Tool("valkey-cli")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "valkey-cli"), got, "from PATH")
}

// TestMigrateSlot moves a slot with its keys from one primary to another,
// the classic way and, on Valkey 9.0+, with atomic slot migration; a
// cluster client finds the keys on the new owner.
func TestMigrateSlot(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	c := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 2})
	client := valkeytest.ClusterClient(t, c)
	slot := int(valkeytest.Do(t, c.Primaries()[0], "CLUSTER", "KEYSLOT", "{m}").(int64))
	// a owns the slot, the slots being split evenly in order.
	a, b := c.Primaries()[slot*2/valkeyserver.NumSlots], c.Primaries()[1-slot*2/valkeyserver.NumSlots]
	for i := range 25 {
		require.NoError(t, client.Do(ctx, client.B().Set().Key(fmt.Sprintf("{m}%d", i)).Value("v").Build()).Error())
	}
	idA, err := valkeyserver.NodeID(ctx, a)
	require.NoError(t, err)
	idB, err := valkeyserver.NodeID(ctx, b)
	require.NoError(t, err)

	m, err := c.MigrateSlot(ctx, slot, a, b, 10)
	require.NoError(t, err)
	require.Equal(t, 25, m.Keys)
	require.Equal(t, 3, m.Batches)
	require.Positive(t, m.Window)
	for _, s := range c.Nodes() {
		owner, err := valkeyserver.SlotOwner(ctx, s, slot)
		require.NoError(t, err)
		require.Equal(t, idB, owner, s.Addr())
	}
	require.Equal(t, int64(25), valkeytest.Do(t, b, "CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(slot)))
	v, err := client.Do(ctx, client.B().Get().Key("{m}7").Build()).ToString()
	require.NoError(t, err)
	require.Equal(t, "v", v)

	version, err := a.Version(ctx)
	require.NoError(t, err)
	if !version.AtLeast("valkey", 9, 0) {
		t.Logf("%s has no atomic slot migration (Valkey 9.0+): only the classic move is tested", version)
		return
	}
	require.NoError(t, c.MigrateSlotAtomic(ctx, slot, b, a))
	for _, s := range c.Nodes() {
		owner, err := valkeyserver.SlotOwner(ctx, s, slot)
		require.NoError(t, err)
		require.Equal(t, idA, owner, s.Addr())
	}
	require.Equal(t, int64(25), valkeytest.Do(t, a, "CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(slot)))
	v, err = client.Do(ctx, client.B().Get().Key("{m}7").Build()).ToString()
	require.NoError(t, err)
	require.Equal(t, "v", v)
}
