package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// TestFloorWritesMatch checks that bench/floor/floor.c, the floor
// BenchmarkFloor sets the native verbs against, leaves the dataset the
// native verbs leave, with and without its checks and reads
// (FLOOR.CHECKED.*, FLOOR.READ.*): the same calls on four queues of one
// server (ADD of
// three jobs one at a time, the first ones into an empty queue, a CLAIM, a
// COMPLETE, a second CLAIM) give the same keys, types, encodings and
// contents, but for the add times and the lease deadline (the server's
// clock), and meta rowopts, which the module writes with a queue's first
// row.
func TestFloorWritesMatch(t *testing.T) {
	so := buildFloor(t)
	s := valkeytest.Start(t, valkeyserver.Options{Module: valkeytest.ModulePath(t)})
	valkeytest.Do(t, s, "MODULE", "LOAD", so)
	// prefix is the commands' in place of EMQ. ("" for the module's own)
	run := func(q, prefix string) []any {
		var replies []any
		do := func(v *protocol.Verb, args ...string) {
			l := verbArgs(v, q, args...)
			if prefix != "" && v != protocol.Install {
				l[0] = prefix + strings.TrimPrefix(v.Command, "EMQ.")
			}
			replies = append(replies, valkeytest.Do(t, s, l...))
		}
		do(protocol.Install)
		for _, p := range []string{"one", "two", "three"} {
			do(protocol.Add, addArgs(job(p))...)
		}
		do(protocol.Claim, "60000", "1")
		do(protocol.Complete, "1", "1", "")
		do(protocol.Claim, "60000", "1")
		return replies
	}
	replies := run("native", "")
	require.Equal(t, replies, run("floor", "FLOOR."), "the replies")
	require.Equal(t, replies, run("checked", "FLOOR.CHECKED."), "the replies")
	require.Equal(t, replies, run("read", "FLOOR.READ."), "the replies")
	native := dataset(t, s, "native")
	require.NotEmpty(t, native)
	require.Equal(t, native, dataset(t, s, "floor"))
	require.Equal(t, native, dataset(t, s, "checked"))
	require.Equal(t, native, dataset(t, s, "read"))
}

// dataset is queue q's keys, each as its name without the queue's base,
// its type, its encoding and its contents, sorted; the fields and scores
// that hold the server's clock are left out, and meta's rowopts.
func dataset(t *testing.T, s *valkeyserver.Server, q string) []string {
	base := protocol.KeysOf(q).Base
	var out []string
	for _, k := range valkeytest.Do(t, s, "KEYS", base+"*").([]any) {
		key := k.(string)
		typ := valkeytest.Do(t, s, "TYPE", key).(string)
		line := fmt.Sprintf("%s %s %v", strings.TrimPrefix(key, base), typ, valkeytest.Do(t, s, "OBJECT", "ENCODING", key))
		switch typ {
		case "hash":
			fields := valkeytest.Do(t, s, "HGETALL", key).([]any)
			for i := 0; i < len(fields); i += 2 {
				f := fields[i].(string)
				if f == protocol.FieldAdded || (strings.HasSuffix(key, protocol.SuffixMeta) && f == protocol.MetaRowOpts) {
					continue
				}
				line += fmt.Sprintf(" %s=%v", f, fields[i+1])
			}
		case "zset":
			withScores := !strings.HasSuffix(key, protocol.SuffixActive)
			args := []string{"ZRANGE", key, "0", "-1"}
			if withScores {
				args = append(args, "WITHSCORES")
			}
			line += fmt.Sprint(" ", valkeytest.Do(t, s, args...))
		case "list":
			line += fmt.Sprint(" ", valkeytest.Do(t, s, "LRANGE", key, "0", "-1"))
		default:
			line += fmt.Sprint(" ", valkeytest.Do(t, s, "GET", key))
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}
