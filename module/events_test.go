package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// eventsWorkload runs a job's transitions with events on: three jobs added,
// claimed, one completed, one dead then requeued, one with progress.
func eventsWorkload(t *testing.T, s *valkeyserver.Server, q string) {
	t.Helper()
	valkeytest.Do(t, s, verbArgs(protocol.Install, q)...)
	require.Equal(t, int64(1), valkeytest.Do(t, s, verbArgs(protocol.Events, q, "1000")...))
	valkeytest.Do(t, s, verbArgs(protocol.Add, q, addArgs(job("a"), job("b"), job("c"))...)...)
	claimed := valkeytest.Do(t, s, verbArgs(protocol.Claim, q, "30000", "3")...).([]any)
	require.Len(t, claimed, 3)
	token := func(i int) (string, string) {
		j := claimed[i].([]any)
		return j[0].(string), strconv.FormatInt(j[2].(int64), 10)
	}
	id, tok := token(0)
	require.Equal(t, int64(1), valkeytest.Do(t, s, verbArgs(protocol.Complete, q, id, tok, "")...))
	id, tok = token(1)
	valkeytest.Do(t, s, verbArgs(protocol.Fail, q, id, tok, "0", "boom")...)
	require.Equal(t, int64(1), valkeytest.Do(t, s, verbArgs(protocol.Requeue, q, id)...))
	id, tok = token(2)
	require.Equal(t, int64(1), valkeytest.Do(t, s, verbArgs(protocol.Progress, q, id, tok, "50")...))
	// an entry of 3 added, one of 3 claimed, then completed, dead,
	// requeued, progress: one entry per call
	require.Equal(t, int64(6), valkeytest.Do(t, s, "XLEN", protocol.KeysOf(q).Base+protocol.SuffixEvents))
}

// The job events reach the AOF and a replica without the module as their
// effects: XADD with the ids the primary generated, never EMQ.*, so the
// replica's stream holds the primary's entries.
func TestJobEventsEffects(t *testing.T) {
	t.Parallel()
	p := startModule(t, valkeyserver.Options{AOF: true})
	r := valkeytest.Start(t, valkeyserver.Options{ReplicaOf: p.Addr()})
	require.NoError(t, r.WaitReplicaSync(ctxT(t)))
	eventsWorkload(t, p, "ev")
	aof := readAOF(t, p)
	require.NotContains(t, strings.ToUpper(aof), "EMQ.", "the AOF holds an EMQ command")
	require.Contains(t, aof, "XADD")
	require.Contains(t, aof, protocol.MetaEventsMax)
	require.NotContains(t, aof, "$1\r\n*\r\n", "a job event's XADD travels with the id the primary generated")
	// a call's job events are its first writes: in each MULTI/EXEC that
	// holds an XADD of the events, the XADDs come first
	blocks := 0
	var block [][]string
	for _, cmd := range aofCommands(t, aof) {
		switch strings.ToUpper(cmd[0]) {
		case "MULTI":
			block = [][]string{}
		case "EXEC":
			xadds := 0
			for xadds < len(block) && strings.EqualFold(block[xadds][0], "XADD") {
				xadds++
			}
			for _, c := range block[xadds:] {
				require.NotEqual(t, "XADD", strings.ToUpper(c[0]), "an events XADD after another write: %q", block)
			}
			if xadds > 0 {
				blocks++
				require.Less(t, xadds, len(block), "the transition's own writes follow its events")
			}
			block = nil
		default:
			if block != nil {
				block = append(block, cmd)
			}
		}
	}
	require.Equal(t, 6, blocks, "one MULTI/EXEC per publishing call")
	// a call refused by XADD (a top at the last id) writes nothing: the
	// AOF does not grow
	valkeytest.Do(t, p, "XSETID", "emq:{ev}:events", "18446744073709551615-18446744073709551615")
	before := readAOF(t, p)
	wantRefused(t, p, protocol.ErrStreamExhausted, verbArgs(protocol.Add, "ev", addArgs(job("d"))...)...)
	require.Equal(t, before, readAOF(t, p), "a refused call reaches the AOF")
	want := valkeytest.Snapshot(t, p, "emq:*")
	valkeytest.WaitReplicated(t, p, r)
	valkeytest.RequireUnchanged(t, want, valkeytest.Snapshot(t, r, "emq:*"))
	// the replica's entries are the primary's, ids included
	require.Equal(t, valkeytest.Do(t, p, "XRANGE", "emq:{ev}:events", "-", "+"), valkeytest.Do(t, r, "XRANGE", "emq:{ev}:events", "-", "+"))
}

// aofCommands splits an AOF's text into its commands, each a RESP array of
// bulk strings.
func aofCommands(t *testing.T, aof string) [][]string {
	t.Helper()
	var out [][]string
	r := bufio.NewReader(strings.NewReader(aof))
	line := func() string {
		s, err := r.ReadString('\n')
		require.NoError(t, err)
		return strings.TrimSuffix(s, "\r\n")
	}
	for {
		if _, err := r.Peek(1); err == io.EOF {
			return out
		}
		head := line()
		require.True(t, strings.HasPrefix(head, "*"), "an AOF command starts with *: %q", head)
		n, err := strconv.Atoi(head[1:])
		require.NoError(t, err)
		cmd := make([]string, n)
		for i := range cmd {
			size := line()
			require.True(t, strings.HasPrefix(size, "$"), "a bulk: %q", size)
			k, err := strconv.Atoi(size[1:])
			require.NoError(t, err)
			b := make([]byte, k+2)
			_, err = io.ReadFull(r, b)
			require.NoError(t, err)
			cmd[i] = string(b[:k])
		}
		out = append(out, cmd)
	}
}

// A row's ev is read like a numeric row field: a canonical decimal
// 1..MaxEventsLen is on, anything else (or absent) off.
func TestEvOn(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"1", "2", "1000", "1000000"} {
		require.True(t, evOn(verdict.Field{Bytes: []byte(v), Set: true}), v)
	}
	for _, v := range []string{"", "0", "01", "-1", "+1", "1000001", " 1", "1.0", "x"} {
		require.False(t, evOn(verdict.Field{Bytes: []byte(v), Set: true}), v)
	}
	require.False(t, evOn(verdict.Field{}), "absent")
}
