package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// traInC are the two settings of module argument tra-c: the TRA calls
// answered in C, and every call through its Go handler.
var traInC = []string{"yes", "no"}

// onEachTRAPath runs f in a parallel subtest for each setting of tra-c,
// with the module arguments that choose it.
func onEachTRAPath(t *testing.T, f func(t *testing.T, args []string)) {
	for _, inC := range traInC {
		t.Run("tra-c-"+inC, func(t *testing.T) {
			t.Parallel()
			f(t, []string{"tra-c", inC})
		})
	}
}

// TRA.SETBIT and TRA.GETBIT answer as SETBIT and GETBIT do, with the TRA
// family's own texts, and leave the same string, answered in C or by the
// Go handlers.
func TestTRABits(t *testing.T) {
	t.Parallel()
	onEachTRAPath(t, func(t *testing.T, args []string) {
		traBitsCases(t, startModule(t, valkeyserver.Options{ModuleArgs: args}))
	})
}

func traBitsCases(t *testing.T, s *valkeyserver.Server) {
	for _, c := range [][3]string{{"0", "1", "0"}, {"7", "1", "0"}, {"7", "1", "1"}, {"7", "0", "1"}, {"100", "1", "0"}, {"100", "0", "1"}, {"800000", "1", "0"}} {
		require.Equal(t, c[2] == "1", valkeytest.Do(t, s, "TRA.SETBIT", "tra", c[0], c[1]) == int64(1), "TRA.SETBIT %v", c)
		require.Equal(t, c[2] == "1", valkeytest.Do(t, s, "SETBIT", "raw", c[0], c[1]) == int64(1), "SETBIT %v", c)
		require.Equal(t, valkeytest.Do(t, s, "GETBIT", "raw", c[0]), valkeytest.Do(t, s, "TRA.GETBIT", "tra", c[0]))
	}
	require.Equal(t, valkeytest.Do(t, s, "GET", "raw"), valkeytest.Do(t, s, "GET", "tra"), "the same string")
	require.Equal(t, int64(0), valkeytest.Do(t, s, "TRA.GETBIT", "absent", "9"))

	valkeytest.Do(t, s, "RPUSH", "list", "x")
	before := valkeytest.Snapshot(t, s, "*")
	for _, c := range [][]string{
		{protocol.ErrTRAWrongType, "TRA.SETBIT", "list", "1", "1"},
		{protocol.ErrTRAWrongType, "TRA.GETBIT", "list", "1"},
		{protocol.ErrTRAOffset, "TRA.SETBIT", "k", "4294967296", "1"},
		{protocol.ErrTRAOffset, "TRA.SETBIT", "k", "-1", "1"},
		{protocol.ErrTRAOffset, "TRA.SETBIT", "k", "01", "1"},
		{protocol.ErrTRAOffset, "TRA.SETBIT", "k", "x", "1"},
		{protocol.ErrTRAOffset, "TRA.GETBIT", "k", "x"},
		{protocol.ErrTRAOffset, "TRA.SETBIT", "k", "x", "2"},
		{protocol.ErrTRABit, "TRA.SETBIT", "k", "1", "2"},
		{protocol.ErrTRABit, "TRA.SETBIT", "k", "1", "01"},
		{protocol.ErrTRABit, "TRA.SETBIT", "k", "1", ""},
	} {
		wantRefused(t, s, c[0], c[1:]...)
	}
	// the server enforces the arity: no numkeys, no EMQ shape texts
	for _, c := range [][]string{{"TRA.SETBIT", "k", "1"}, {"TRA.SETBIT", "k", "1", "1", "x"}, {"TRA.GETBIT", "k"}, {"TRA.GETBIT", "k", "1", "x"}} {
		require.True(t, strings.HasPrefix(strings.ToLower(refused(t, s, c...)), "err wrong number of arguments for 'tra."), "%q", c)
	}
	valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "*"))

	// keys as SETBIT declares them: argv[1], written; GETBIT's read
	require.Equal(t, []any{"k"}, valkeytest.Do(t, s, "COMMAND", "GETKEYS", "TRA.SETBIT", "k", "1", "1"))
	info := valkeytest.Do(t, s, "COMMAND", "INFO", "TRA.SETBIT", "TRA.GETBIT").([]any)
	set, get := info[0].([]any), info[1].([]any)
	require.Equal(t, int64(4), set[1])
	require.Contains(t, set[2], any("write"))
	require.Contains(t, set[2], any("denyoom"))
	require.Equal(t, []any{int64(1), int64(1), int64(1)}, set[3:6])
	require.Equal(t, int64(3), get[1])
	require.Contains(t, get[2], any("readonly"))
}

// The server checks the caller's ACL on the TRA key from the key-spec,
// before C or the handler runs: the refusal is SETBIT's, and nothing is
// written.
func TestTRAACL(t *testing.T) {
	t.Parallel()
	onEachTRAPath(t, func(t *testing.T, args []string) {
		s := startModule(t, valkeyserver.Options{ModuleArgs: args, AOF: true,
			Users: []string{"carol on >pw ~mine +@all", "reader on >pw %R~* +@all"}})
		as := asUser(t, s)
		_, err := as("carol", "TRA.SETBIT", "mine", "1", "1")
		require.NoError(t, err)
		size := aofSize(t, s)
		for _, c := range [][]string{{"carol", "theirs", "1", "1"}, {"reader", "mine", "2", "1"}, {"reader", "mine", "1", "1"}} {
			_, tra := as(c[0], "TRA.SETBIT", c[1], c[2], c[3])
			_, raw := as(c[0], "SETBIT", c[1], c[2], c[3])
			require.ErrorContains(t, tra, "NOPERM", "%q", c)
			require.Equal(t, strings.Replace(raw.Error(), "'setbit'", "'tra.setbit'", 1), tra.Error(), "%q", c)
		}
		v, err := as("reader", "TRA.GETBIT", "mine", "1")
		require.NoError(t, err)
		require.Equal(t, int64(1), v)
		require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", "theirs"))
		require.Equal(t, "@", valkeytest.Do(t, s, "GET", "mine"))
		require.Equal(t, size, aofSize(t, s), "a refused call reached the AOF")
	})
}

// At maxmemory the server refuses TRA.SETBIT (deny-oom) before C or the
// handler runs, as it refuses SETBIT, also from a script, and TRA.GETBIT
// still answers; nothing is written.
func TestTRAOOM(t *testing.T) {
	t.Parallel()
	var replies [2][]any
	for i, inC := range traInC {
		s := startModule(t, valkeyserver.Options{AOF: true, ModuleArgs: []string{"tra-c", inC}})
		valkeytest.Do(t, s, "SET", "k", "abc")
		valkeytest.Do(t, s, "SET", "r", "abc")
		before := valkeytest.Snapshot(t, s, "*")
		size := aofSize(t, s)
		valkeytest.Do(t, s, "CONFIG", "SET", "maxmemory", "1")
		for _, c := range [][]string{{"n", "7", "1"}, {"k", "7", "1"}, {"k", "6", "1"}, {"k", "100", "0"}} {
			tra := valkeytest.Reply(t, s, append([]string{"TRA.SETBIT"}, c...)...)
			raw := valkeytest.Reply(t, s, append([]string{"SETBIT"}, c...)...)
			require.IsType(t, valkeyserver.ReplyError(""), tra, "%q", c)
			require.True(t, strings.HasPrefix(string(tra.(valkeyserver.ReplyError)), "OOM "), "%q: %v", c, tra)
			require.Equal(t, raw, tra, "%q", c)
			script := valkeytest.Reply(t, s, "EVAL", "return server.call('TRA.SETBIT', KEYS[1], ARGV[1], ARGV[2])", "1", c[0], c[1], c[2])
			require.IsType(t, valkeyserver.ReplyError(""), script, "%q", c)
			replies[i] = append(replies[i], tra, script)
		}
		require.Equal(t, int64(1), valkeytest.Do(t, s, "TRA.GETBIT", "k", "7"))
		valkeytest.Do(t, s, "CONFIG", "SET", "maxmemory", "0")
		valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "*"))
		require.Equal(t, size, aofSize(t, s), "a refused call reached the AOF")
	}
	require.Equal(t, replies[0], replies[1], "C and the Go handler")
}

// CLIENT PAUSE WRITE holds TRA.SETBIT (flagged write) in C and in Go; a
// call the pause does not hold (from a module command) meets the write
// guard: a call that would write is refused with nothing written, one
// that would not replies the bit.
func TestTRAPause(t *testing.T) {
	t.Parallel()
	var replies [2][]any
	for i, inC := range traInC {
		s := startDebug(t, valkeyserver.Options{AOF: true, ModuleArgs: []string{"tra-c", inC}})
		valkeytest.Do(t, s, "SET", "short", "abc")
		valkeytest.Do(t, s, "SET", "long", strings.Repeat("a", 64))
		valkeytest.Do(t, s, "RPUSH", "list", "x")
		before := valkeytest.Snapshot(t, s, "*")
		size := aofSize(t, s)
		valkeytest.Do(t, s, "CLIENT", "PAUSE", "20000", "WRITE")
		done := heldByPause(t, s, "TRA.SETBIT", "held", "3", "1")
		for _, c := range [][]string{
			{"new", "7", "1"}, {"new", "7", "0"}, {"short", "1", "1"}, {"short", "1", "0"}, {"short", "0", "0"},
			{"short", "100", "0"}, {"long", "1", "1"}, {"long", "0", "1"}, {"long", "500", "0"}, {"list", "1", "1"},
			{"short", "x", "1"}, {"short", "1", "2"}, {"short", "8388608", "0"},
		} {
			got := valkeytest.Reply(t, s, append([]string{"EMQ.DEBUG.NEST", "TRA.SETBIT"}, c...)...)
			replies[i] = append(replies[i], got)
		}
		valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "*"))
		require.Equal(t, size, aofSize(t, s), "a paused call reached the AOF")
		valkeytest.Do(t, s, "CLIENT", "UNPAUSE")
		select {
		case v := <-done:
			require.Equal(t, int64(0), v, "after the pause")
		case <-time.After(10 * time.Second):
			t.Fatal("TRA.SETBIT still held after CLIENT UNPAUSE")
		}
	}
	require.Equal(t, replies[0], replies[1], "C and the Go handler")
	paused := valkeyserver.ReplyError(protocol.ErrWritePaused)
	require.Equal(t, []any{paused, paused, int64(1), paused, int64(0), paused, int64(1), paused, int64(0),
		valkeyserver.ReplyError(protocol.ErrTRAWrongType), valkeyserver.ReplyError(protocol.ErrTRAOffset),
		valkeyserver.ReplyError(protocol.ErrTRABit), paused}, replies[0])
}

// TRA.SETBIT reaches the AOF and a replica verbatim, as the client sent it,
// and not at all when the bit already held its value and the string did not
// grow: the AOF's size and the replication offset stay where they were.
func TestTRAReplicatedVerbatim(t *testing.T) {
	t.Parallel()
	p := startModule(t, valkeyserver.Options{AOF: true})
	r := startModule(t, valkeyserver.Options{ReplicaOf: p.Addr()})
	require.NoError(t, r.WaitReplicaSync(ctxT(t)))
	require.Equal(t, int64(0), valkeytest.Do(t, p, "TRA.SETBIT", "seen", "10", "1"))
	require.Equal(t, int64(0), valkeytest.Do(t, p, "TRA.SETBIT", "seen", "3", "0"), "an equal bit inside the string")
	require.Equal(t, int64(0), valkeytest.Do(t, p, "TRA.SETBIT", "seen", "100", "0"), "an equal bit that grows the string")
	valkeytest.WaitReplicated(t, p, r)
	require.Equal(t, valkeytest.Do(t, p, "GET", "seen"), valkeytest.Do(t, r, "GET", "seen"))
	aof := readAOF(t, p)
	require.Contains(t, aof, "$10\r\nTRA.SETBIT\r\n$4\r\nseen\r\n$2\r\n10\r\n$1\r\n1\r\n")
	require.Contains(t, aof, "$10\r\nTRA.SETBIT\r\n$4\r\nseen\r\n$3\r\n100\r\n$1\r\n0\r\n")
	require.NotContains(t, aof, "$1\r\n3\r\n", "the call that changed nothing")
	require.NotContains(t, aof, "SETBIT\r\n$4\r\nseen\r\n$2\r\n10\r\n$1\r\n1\r\n$", "no effect beside it")
	require.Equal(t, 2, strings.Count(aof, "TRA.SETBIT"))
	require.NotContains(t, aof, "MULTI")

	size := aofSize(t, p)
	offset := infoField(t, p, "replication", "master_repl_offset")
	for _, c := range [][2]string{{"10", "1"}, {"3", "0"}, {"100", "0"}, {"0", "0"}} {
		valkeytest.Do(t, p, "TRA.SETBIT", "seen", c[0], c[1])
	}
	require.Equal(t, size, aofSize(t, p), "the AOF grew for calls that changed nothing")
	require.Equal(t, offset, infoField(t, p, "replication", "master_repl_offset"), "the replication offset moved")
}

// aofSize is the size of s's incremental AOF files.
func aofSize(t *testing.T, s *valkeyserver.Server) int64 {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.Dir(), "appendonlydir", "*.incr.aof"))
	var n int64
	for _, f := range files {
		st, err := os.Stat(f)
		require.NoError(t, err)
		n += st.Size()
	}
	return n
}
