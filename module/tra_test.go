package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
	"github.com/trafikey/trafikey/protocol"
)

// TRA.SETBIT and TRA.GETBIT answer as SETBIT and GETBIT do, with the TRA
// family's own texts, and leave the same string.
func TestTRABits(t *testing.T) {
	t.Parallel()
	s := startModule(t, valkeyserver.Options{})
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

// The server checks the caller's ACL on the TRA key from the key-spec.
func TestTRAACL(t *testing.T) {
	t.Parallel()
	s := startModule(t, valkeyserver.Options{Users: []string{"carol on >pw ~mine +@all", "reader on >pw %R~* +@all"}})
	as := asUser(t, s)
	_, err := as("carol", "TRA.SETBIT", "mine", "1", "1")
	require.NoError(t, err)
	_, err = as("carol", "TRA.SETBIT", "theirs", "1", "1")
	require.ErrorContains(t, err, "NOPERM")
	_, err = as("reader", "TRA.SETBIT", "mine", "2", "1")
	require.ErrorContains(t, err, "NOPERM")
	v, err := as("reader", "TRA.GETBIT", "mine", "1")
	require.NoError(t, err)
	require.Equal(t, int64(1), v)
	require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", "theirs"))
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
	waitOffset(t, p, r)
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

// waitOffset waits until replica r has processed everything primary p sent.
func waitOffset(t *testing.T, p, r *valkeyserver.Server) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		want := infoField(t, p, "replication", "master_repl_offset")
		if infoField(t, r, "replication", "master_repl_offset") == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica stays behind the primary's offset %s", want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
