package main

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// TestReplicaAsyncLoading: a replica with the module and repl-diskless-load
// swapdb does a full sync from its primary (with the module too) in
// async-loading mode, serving the old dataset meanwhile, while producers
// keep adding jobs on the primary. The module declares it can
// (HANDLE_REPL_ASYNC_LOAD); without that the server flushes the replica and
// loads from disk, serving nothing during the sync. STATS and INSPECT answer
// on the replica during the load, a write verb is refused as the replica
// refuses writes, and the replica ends with the primary's dataset.
func TestReplicaAsyncLoading(t *testing.T) {
	skipInShort(t, "a replica loading a full sync slowed to seconds")
	t.Parallel()
	p := startModule(t, valkeyserver.Options{Debug: true, Config: []string{
		"repl-diskless-sync", "yes", "repl-diskless-sync-delay", "0", "rdbcompression", "no",
	}})
	valkeytest.Do(t, p, verbArgs(protocol.Install, "a")...)
	valkeytest.Do(t, p, verbArgs(protocol.Add, "a", addArgs(job("first"), job("second"))...)...)
	// enough keys for a slowed RDB to take a while
	valkeytest.Do(t, p, "DEBUG", "POPULATE", "1000", "filler", "100")

	r := startModule(t, valkeyserver.Options{Debug: true, ReplicaOf: p.Addr(), Config: []string{
		// the replica serves clients between every KiB it loads
		"repl-diskless-load", "swapdb", "loading-process-events-interval-bytes", "1024",
	}})
	if err := r.WaitReplicaSync(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	oldStats := flat(valkeytest.Do(t, r, verbArgs(protocol.Stats, "a")...))

	// A full sync the replica can take while it keeps the old data: the
	// same replication id, a backlog too small to continue from, and an
	// RDB slowed down (3 ms a key) so the load lasts.
	valkeytest.Do(t, p, "CONFIG", "SET", "rdb-key-save-delay", "3000")
	c, err := p.Dial(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	big := strings.Repeat("A", 16384)
	cmds := [][]string{{"MULTI"}, {"CLIENT", "KILL", "TYPE", "replica"}, {"CONFIG", "SET", "repl-backlog-size", "16384"}}
	for i := range 10 {
		cmds = append(cmds, []string{"SET", "backlog" + strconv.Itoa(i), big})
	}
	cmds = append(cmds, []string{"EXEC"})
	if _, err := c.DoMulti(ctxT(t), cmds...); err != nil {
		t.Fatal(err)
	}
	// Producers on the primary during the sync, started once the link is
	// cut: the replica's old dataset is what it had then.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	var added atomic.Int64
	for range 2 {
		wg.Go(func() {
			c, err := p.Dial(ctx)
			if err != nil {
				return
			}
			defer c.Close()
			for ctx.Err() == nil {
				if _, err := c.Do(ctx, verbArgs(protocol.Add, "a", addArgs(job("during"))...)...); err == nil {
					added.Add(1)
				}
			}
		})
	}

	waitInfo(t, r, "persistence", "async_loading", "1")
	if got := infoField(t, r, "persistence", "loading"); got != "0" {
		t.Fatalf("loading:%s during async loading", got)
	}

	// The old dataset answers while the new one loads.
	if got := flat(valkeytest.Do(t, r, verbArgs(protocol.Stats, "a")...)); got != oldStats {
		t.Fatalf("STATS during async loading: %s, want the old %s", got, oldStats)
	}
	if got := flat(valkeytest.Do(t, r, verbArgs(protocol.Inspect, "a", "1")...)); !strings.Contains(got, "first") {
		t.Fatalf("INSPECT during async loading: %s", got)
	}
	_, err = r.Do(ctxT(t), verbArgs(protocol.Add, "a", addArgs(job("on the replica"))...)...)
	if err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("ADD on the replica during async loading: %v, want the server's READONLY", err)
	}
	if got := infoField(t, r, "persistence", "async_loading"); got != "1" {
		t.Fatalf("async loading ended before the reads were checked (async_loading:%s): make the RDB slower", got)
	}

	stop()
	wg.Wait()
	valkeytest.Do(t, p, "CONFIG", "SET", "rdb-key-save-delay", "0")
	waitInfo(t, r, "persistence", "async_loading", "0")
	if strings.Contains(r.Log(), "not aware of async replication") {
		t.Fatalf("the replica skipped diskless loading for the module:\n%s", r.LogTail(20))
	}
	// Once the replica has caught up with every write, the datasets match.
	deadline := time.Now().Add(20 * time.Second)
	for valkeytest.Digest(t, p) != valkeytest.Digest(t, r) {
		if time.Now().After(deadline) {
			t.Fatalf("the replica's dataset differs from the primary's after the sync (%d adds during it)", added.Load())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d adds on the primary during the sync; the replica served the old dataset meanwhile", added.Load())
}

// TestLoadingRefusesEveryVerb: while a server loads its dataset (here DEBUG
// RELOAD, slowed down), it refuses the EMQ.* commands as it refuses every
// command not flagged allow-loading, with its own LOADING text: no verb
// reads or writes a dataset being loaded.
func TestLoadingRefusesEveryVerb(t *testing.T) {
	t.Parallel()
	s := startModule(t, valkeyserver.Options{Debug: true, Config: []string{"loading-process-events-interval-bytes", "1024"}})
	valkeytest.Do(t, s, verbArgs(protocol.Install, "l")...)
	valkeytest.Do(t, s, verbArgs(protocol.Add, "l", addArgs(job("a"))...)...)
	valkeytest.Do(t, s, "DEBUG", "POPULATE", "2000", "filler", "100")
	valkeytest.Do(t, s, "CONFIG", "SET", "key-load-delay", "1000") // µs a key
	reloaded := make(chan error, 1)
	go func() {
		c, err := s.Dial(context.Background())
		if err == nil {
			defer c.Close()
			_, err = c.Do(context.Background(), "DEBUG", "RELOAD")
		}
		reloaded <- err
	}()
	waitInfo(t, s, "persistence", "loading", "1")
	for _, args := range [][]string{
		verbArgs(protocol.Stats, "l"),
		verbArgs(protocol.Inspect, "l", "1"),
		verbArgs(protocol.Add, "l", addArgs(job("b"))...),
		verbArgs(protocol.Claim, "l", "1000", "1"),
	} {
		_, err := s.Do(ctxT(t), args...)
		if err == nil || !strings.HasPrefix(err.Error(), "LOADING") {
			t.Errorf("%s while loading: %v, want the server's LOADING", args[0], err)
		}
	}
	if got := infoField(t, s, "persistence", "loading"); got != "1" {
		t.Fatalf("loading ended before the verbs were tried (loading:%s): make it slower", got)
	}
	valkeytest.Do(t, s, "CONFIG", "SET", "key-load-delay", "0")
	if err := <-reloaded; err != nil {
		t.Fatal(err)
	}
	if got := flat(valkeytest.Do(t, s, verbArgs(protocol.Inspect, "l", "1")...)); !strings.Contains(got, "a") {
		t.Fatalf("INSPECT after the reload: %s", got)
	}
}
