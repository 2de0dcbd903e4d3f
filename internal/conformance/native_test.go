package conformance

import (
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// nativeEnv is the native executor on a new server loading the trafikey
// module, which must register every job-core verb. A Redis server has no
// native executor (the module is Valkey's and needs its API): there the
// suite runs on the Lua executor alone, and the native tests say so.
func nativeEnv(t *testing.T) Env {
	if valkeytest.ServerIsRedis(t) {
		t.Skip("the server is Redis (INFO server): the native executor is a Valkey module, so only the Lua executor runs")
	}
	s := valkeytest.Start(t, valkeyserver.Options{Debug: true, Module: valkeytest.ModulePath(t)})
	c := valkeytest.Client(t, s)
	valkeytest.RequireVerbs(t, c)
	return Env{Server: s, Client: c, Exec: executor.NewNative(c), NewExec: func(c valkey.Client) executor.Executor { return executor.NewNative(c) }}
}

// TestNative runs the suite on the native executor. Each shard's server
// (see Run) has a replica without the module, which must hold the
// primary's dataset when every scenario has run: each verb's effects, as the module replicates
// them (RM_Call's, and the key-API writes' RM_Replicate, with the command
// validation it skips on 8.1 and later), rebuild what it wrote.
func TestNative(t *testing.T) {
	skipSuiteInShort(t)
	Run(t, func(t *testing.T) Env {
		env := nativeEnv(t)
		r := valkeytest.Start(t, valkeyserver.Options{Debug: true, ReplicaOf: env.Server.Addr()})
		require.NoError(t, r.WaitReplicaSync(t.Context()))
		t.Cleanup(func() { // after every scenario, before the servers stop
			valkeytest.WaitReplicated(t, env.Server, r)
			// A key whose TTL runs out between the two snapshots (a waited
			// job's done list) is on one side only; it is gone from both
			// when looked at again, while a replicated effect that differs
			// stays different. Errorf, not FailNow: a cleanup that ends
			// its goroutine loses the test's report.
			diff := replicaDiff(t, env.Server, r)
			for try := 0; len(diff) > 0 && try < 10; try++ {
				time.Sleep(100 * time.Millisecond)
				diff = replicaDiff(t, env.Server, r)
			}
			if len(diff) > 0 {
				t.Errorf("the replica differs from its primary: %v", diff)
			}
		})
		return env
	})
}

// TestNativeMaxmemory runs the maxmemory scenarios on a server of their own.
func TestNativeMaxmemory(t *testing.T) { RunMaxmemory(t, nativeEnv(t)) }

// TestNativeReadOnly runs the read-only user and pause scenarios on a server
// of their own.
func TestNativeReadOnly(t *testing.T) { RunReadOnly(t, nativeEnv(t)) }

// replicaDiff lists the keys whose data differs between primary p and its
// replica r. A key's DUMP is compared, but where it differs two things the
// replica rebuilds its own way are compared by content: a hash table's
// fields and values in any order (its iteration order, which DUMP follows,
// is the table's history: the primary's writes came one field at a time
// where the replica applies one HSET), and a string's bytes (the replica
// int-encodes a replicated SET of an integer that 9.1's Lua, and the native
// executor as it, leaves embedded on the primary), and a stream's entries
// and groups (its consumers' times are each server's own).
func replicaDiff(t *testing.T, p, r *valkeyserver.Server) []string {
	t.Helper()
	ps, rs := valkeytest.Snapshot(t, p, "*"), valkeytest.Snapshot(t, r, "*")
	if len(ps) == 0 {
		return []string{"the primary holds no key"}
	}
	var diff []string
	for k := range rs {
		if _, ok := ps[k]; !ok {
			diff = append(diff, fmt.Sprintf("%q only on the replica", k))
		}
	}
	for k, v := range ps {
		w, ok := rs[k]
		switch {
		case !ok:
			diff = append(diff, fmt.Sprintf("%q only on the primary", k))
			continue
		case v == w:
			continue
		}
		typ := valkeytest.Do(t, p, "TYPE", k)
		var a, b any
		switch {
		case typ != valkeytest.Do(t, r, "TYPE", k):
		case typ == "string":
			a, b = valkeytest.Do(t, p, "GET", k), valkeytest.Do(t, r, "GET", k)
		case typ == "stream":
			// A consumer's seen and active times are each server's clock
			// when it applied the read; entries and groups are compared.
			a = []any{valkeytest.Do(t, p, "XRANGE", k, "-", "+"), valkeytest.Do(t, p, "XINFO", "GROUPS", k)}
			b = []any{valkeytest.Do(t, r, "XRANGE", k, "-", "+"), valkeytest.Do(t, r, "XINFO", "GROUPS", k)}
		case typ == "hash" && valkeytest.Do(t, p, "OBJECT", "ENCODING", k) == "hashtable" &&
			valkeytest.Do(t, r, "OBJECT", "ENCODING", k) == "hashtable":
			a, b = fieldMap(valkeytest.Do(t, p, "HGETALL", k)), fieldMap(valkeytest.Do(t, r, "HGETALL", k))
		}
		if a == nil || !reflect.DeepEqual(a, b) {
			diff = append(diff, fmt.Sprintf("%q (%v) differs", k, typ))
		}
	}
	sort.Strings(diff)
	return diff
}

// fieldMap is an HGETALL reply as a map.
func fieldMap(v any) map[any]any {
	kv, _ := v.([]any)
	m := map[any]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
