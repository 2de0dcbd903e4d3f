package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// manyArgs is COMPLETEMANY's ARGV for id, token pairs, each with an empty
// result.
func manyArgs(pairs ...string) []string {
	out := []string{strconv.Itoa(len(pairs) / 2)}
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, pairs[i], pairs[i+1], "")
	}
	return out
}

// COMPLETEMANY checks each job's derived keys against the caller's ACL in the
// place of its first read: a denied row where the job's row is read, a denied
// unique key where it is read, denied logs after every other read, and only
// for a job that completes. A refused call writes nothing.
func TestCompleteManyACL(t *testing.T) {
	t.Parallel()
	a := protocol.KeysOf("a")
	s := startModule(t, valkeyserver.Options{Users: []string{
		// rows of one-digit ids only: no logs, no unique keys
		"carol on >pw " + declaredKeysACL("a") + " ~emq:{a}:job:? +@all",
		// rows and logs, no unique keys
		"erin on >pw " + declaredKeysACL("a") + " ~emq:{a}:job:* +@all",
	}})
	as := asUser(t, s)
	many := func(user string, pairs ...string) (any, error) {
		return as(user, verbArgs(protocol.CompleteMany, "a", manyArgs(pairs...)...)...)
	}
	valkeytest.Do(t, s, verbArgs(protocol.Install, "a")...)
	valkeytest.Do(t, s, verbArgs(protocol.Add, "a", addArgs(job("x"), job("y", "0", "0", "3", protocol.BackoffFixed, "0", "k", "600000"))...)...)
	require.Len(t, valkeytest.Do(t, s, verbArgs(protocol.Claim, "a", "600000", "2")...), 2)
	valkeytest.Do(t, s, "RPUSH", a.Logs("1"), "line")
	valkeytest.Do(t, s, "SET", a.Job("3"), "not a row")
	before := valkeytest.Snapshot(t, s, "emq:*")
	unchanged := func() {
		t.Helper()
		valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "emq:*"))
	}

	// logs denied: refused only when the job completes
	r, err := many("carol", "1", "9", "2", "9")
	require.NoError(t, err)
	require.Equal(t, []any{int64(-1), int64(-1)}, r)
	_, err = many("carol", "2", "9", "1", "1")
	require.EqualError(t, err, protocol.ErrNoPerm)
	unchanged()
	// a denied row is refused in its job's place: after a WRONGTYPE row
	// before it, before one after it
	_, err = many("carol", "3", "1", "10", "1")
	require.EqualError(t, err, protocol.ErrWrongType)
	_, err = many("carol", "10", "1", "3", "1")
	require.EqualError(t, err, protocol.ErrNoPerm)
	_, err = many("carol", "1", "9", "10", "1")
	require.EqualError(t, err, protocol.ErrNoPerm)
	unchanged()
	// a denied unique key is refused when its job's holder is read: job 2
	// completes, job 1 is not written either
	_, err = many("erin", "1", "1", "2", "1")
	require.EqualError(t, err, protocol.ErrNoPerm)
	unchanged()
	// the unique key of a job that does not complete is not read
	r, err = many("erin", "1", "1", "2", "9")
	require.NoError(t, err)
	require.Equal(t, []any{int64(1), int64(-1)}, r)
	require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", a.Job("1"), a.Logs("1")))
	require.Equal(t, "1", valkeytest.Do(t, s, "HGET", a.Stats, "completed"))
	// the fence comes before a denied row
	valkeytest.Do(t, s, "SET", a.Version, "1")
	_, err = many("carol", "10", "1")
	require.EqualError(t, err, protocol.ErrWireFound("1"))
}

// A COMPLETEMANY that completes a job meets the write guard where a module
// command calls it during CLIENT PAUSE WRITE, and writes nothing; one that
// completes none writes nothing and replies.
func TestCompleteManyGuard(t *testing.T) {
	t.Parallel()
	s := startDebug(t, valkeyserver.Options{})
	valkeytest.Do(t, s, verbArgs(protocol.Install, "g")...)
	valkeytest.Do(t, s, verbArgs(protocol.Add, "g", addArgs(job("x"))...)...)
	valkeytest.Do(t, s, verbArgs(protocol.Claim, "g", "600000", "1")...)
	before := valkeytest.Snapshot(t, s, "emq:*")
	valkeytest.Do(t, s, "CLIENT", "PAUSE", "20000", "WRITE")
	defer valkeytest.Do(t, s, "CLIENT", "UNPAUSE")
	call := func(pairs ...string) []string {
		return append([]string{"EMQ.DEBUG.NEST"}, verbArgs(protocol.CompleteMany, "g", manyArgs(pairs...)...)...)
	}
	wantRefused(t, s, protocol.ErrWritePaused, call("2", "1", "1", "1")...)
	require.Equal(t, []any{int64(0), int64(-1)}, valkeytest.Do(t, s, call("2", "1", "1", "9")...))
	valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "emq:*"))
}

// The largest call: COMPLETEMANY of 1000 jobs, each with a unique key of 512
// bytes, in reverse claim order; then a repeated id anywhere refuses.
func TestCompleteManyLargest(t *testing.T) {
	t.Parallel()
	s := startModule(t, valkeyserver.Options{})
	k := protocol.KeysOf("many")
	valkeytest.Do(t, s, verbArgs(protocol.Install, "many")...)
	var jobs [][]string
	for i := range protocol.MaxCount {
		key := strconv.Itoa(i) + strings.Repeat("k", protocol.MaxUniqueKey-len(strconv.Itoa(i)))
		jobs = append(jobs, job("d", "0", "0", "3", protocol.BackoffFixed, "0", key, "600000"))
	}
	valkeytest.Do(t, s, verbArgs(protocol.Add, "many", addArgs(jobs...)...)...)
	claimed := valkeytest.Do(t, s, verbArgs(protocol.Claim, "many", "600000", "1000")...).([]any)
	require.Len(t, claimed, protocol.MaxCount)
	var pairs []string
	for i := len(claimed) - 1; i >= 0; i-- {
		f := claimed[i].([]any)
		pairs = append(pairs, f[0].(string), strconv.FormatInt(f[2].(int64), 10))
	}
	again := append([]string(nil), pairs...)
	again[len(again)-2] = again[0]
	wantRefused(t, s, protocol.ErrCompleteManyRepeated, verbArgs(protocol.CompleteMany, "many", manyArgs(again...)...)...)
	wantRefused(t, s, protocol.ErrArity("completemany"), verbArgs(protocol.CompleteMany, "many", append(manyArgs(pairs...), "1", "1", "")...)...)
	r := valkeytest.Do(t, s, verbArgs(protocol.CompleteMany, "many", manyArgs(pairs...)...)...).([]any)
	require.Len(t, r, protocol.MaxCount)
	for _, o := range r {
		require.Equal(t, int64(1), o)
	}
	require.Equal(t, int64(4), valkeytest.Do(t, s, "DBSIZE"), "version, meta, stats and signal are all that is left")
	require.Equal(t, "1000", valkeytest.Do(t, s, "HGET", k.Stats, "completed"))
}
