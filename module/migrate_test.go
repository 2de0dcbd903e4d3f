package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// An atomic slot migration (CLUSTER MIGRATESLOTS, Valkey 9.0 on) moves a
// queue's slot, with the module on both nodes, while the queue is in use:
// every verb called on the source during it either runs there or is
// redirected, a CLAIM blocked on the queue is answered with the redirect
// when the slot leaves, the fence (the queue's version key) moves with the
// data, and afterwards the queue runs on the target with every
// acknowledged job (and bit of TRA.SETBIT) there and nothing left on the
// source.
func TestAtomicSlotMigration(t *testing.T) {
	c := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{
		Primaries: 2,
		Base:      valkeyserver.Options{Module: valkeytest.ModulePath(t)},
	})
	src, dst := c.Primaries()[0], c.Primaries()[1]
	if major, _ := serverVersion(t, src); major < 9 {
		t.Skip("CLUSTER MIGRATESLOTS does not exist before Valkey 9.0")
	}
	ctx := ctxT(t)
	// {b} hashes to slot 3300, the first primary's (see TestClusterRouting).
	const queue, slot = "b", "3300"
	q := newVerbQueue(t, src, queue)
	k := protocol.KeysOf(queue)
	q.do(protocol.Install)
	// delayed jobs, so that a CLAIM finds nothing and blocks; enough keys
	// that the snapshot, slowed per key, outlasts several calls
	const before = 300
	payload := strings.Repeat("p", 512)
	for i := 0; i < before; i += 50 {
		var jobs [][]string
		for j := i; j < i+50; j++ {
			jobs = append(jobs, job(payload+strconv.Itoa(j), "0", "3600000"))
		}
		q.do(protocol.Add, addArgs(jobs...)...)
	}
	valkeytest.Do(t, src, "CONFIG", "SET", "rdb-key-save-delay", "5000") // µs per key
	blocked := q.startBlocked(src, 60000)

	// The writer: ADD (a delayed job each) and STATS on the source until
	// the slot has left it; each ADD acknowledged is recorded.
	var (
		mu       sync.Mutex
		acked    []string // data of the acknowledged ADDs
		redirect string   // the first refusal, which must be the slot's redirect
		wrong    []string // any other refusal
		setBits  []int    // the offsets of the acknowledged TRA.SETBIT calls
	)
	// a bitmap of the queue's slot, written by TRA.SETBIT (which replicates
	// itself verbatim, not through RM_Call's effects)
	bits := k.Base + "seen"
	redirected := func(err error) bool {
		var re valkeyserver.ReplyError
		return errors.As(err, &re) && (strings.HasPrefix(string(re), "MOVED "+slot+" ") || strings.HasPrefix(string(re), "TRYAGAIN"))
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			data := "w" + strconv.Itoa(i)
			// a call the server holds longer than the pause of the
			// handoff fails the test
			call := func(args ...string) error {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_, err := src.Do(ctx, args...)
				return err
			}
			err := call(q.args(protocol.Add, addArgs(job(data, "0", "3600000"))...)...)
			serr := call(q.args(protocol.Stats)...)
			berr := call("TRA.SETBIT", bits, strconv.Itoa(i), "1")
			mu.Lock()
			switch {
			case err == nil:
				if redirect != "" {
					wrong = append(wrong, "ADD ran after "+redirect)
				}
				acked = append(acked, data)
			case redirected(err):
				if redirect == "" && strings.HasPrefix(err.Error(), "MOVED") {
					redirect = err.Error()
				}
			default:
				wrong = append(wrong, fmt.Sprintf("ADD: %v", err))
			}
			if serr != nil && !redirected(serr) {
				wrong = append(wrong, fmt.Sprintf("STATS: %v", serr))
			}
			if berr == nil {
				setBits = append(setBits, i)
			} else if !redirected(berr) {
				wrong = append(wrong, fmt.Sprintf("TRA.SETBIT: %v", berr))
			}
			mu.Unlock()
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-done
	}()

	dstID := valkeytest.Do(t, dst, "CLUSTER", "MYID").(string)
	valkeytest.Do(t, src, "CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", slot, slot, "NODE", dstID)
	states := map[string]int{} // the export's states seen, and the ADDs acknowledged by then
	first := -1                // the ADDs acknowledged when the snapshot was first seen
	for state := ""; state != "success"; {
		v := valkeytest.Do(t, src, "CLUSTER", "GETSLOTMIGRATIONS")
		state = migrationField(t, v, "state")
		mu.Lock()
		states[state] = len(acked)
		if state == "snapshotting" && first < 0 {
			first = len(acked)
		}
		mu.Unlock()
		if state == "failed" || state == "cancelled" {
			t.Fatalf("the migration %s: %s", state, migrationField(t, v, "message"))
		}
		if ctx.Err() != nil {
			t.Fatalf("the migration did not end: %v", states)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// the writer goes on until the source redirects it
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return redirect != "" || len(wrong) > 0 }, 10*time.Second, 10*time.Millisecond)
	close(stop)
	<-done
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, wrong)
	require.True(t, first >= 0 && states["snapshotting"] > first, "no ADD ran while the slot was being sent: %v", states)
	t.Logf("export states (ADDs acknowledged by then): %v; %d ADDs and %d TRA.SETBIT acknowledged; then %s", states, len(acked), len(setBits), redirect)

	// the blocked CLAIM: redirected, having claimed nothing
	r := blocked.wait(t)
	var re valkeyserver.ReplyError
	require.True(t, errors.As(r.err, &re) && strings.HasPrefix(string(re), "MOVED "+slot+" "), "the blocked CLAIM: %#v, %v", r.v, r.err)

	// the fence and the data moved; the source keeps nothing of the slot
	require.Equal(t, strconv.Itoa(protocol.Wire), valkeytest.Do(t, dst, "GET", k.Version))
	_, err := src.Do(ctx, "GET", k.Version)
	require.True(t, errors.As(err, &re) && strings.HasPrefix(string(re), "MOVED "+slot+" "), "GET the version on the source: %v", err)
	require.Eventually(t, func() bool {
		return valkeytest.Do(t, src, "CLUSTER", "COUNTKEYSINSLOT", slot) == int64(0)
	}, 10*time.Second, 20*time.Millisecond, "the source keeps keys of the slot")
	on := newVerbQueue(t, dst, queue)
	require.Equal(t, int64(before+len(acked)), valkeytest.Do(t, dst, "ZCARD", k.Delayed))
	valkeytest.RequireConsistentQueue(t, dst, queue)
	datas := map[string]bool{}
	for _, id := range valkeytest.Do(t, dst, "ZRANGE", k.Delayed, "0", "-1").([]any) {
		datas[valkeytest.Do(t, dst, "HGET", k.Job(id.(string)), "data").(string)] = true
	}
	for _, d := range acked {
		require.True(t, datas[d], "acknowledged job %s is missing on the target", d)
	}
	require.Equal(t, int64(len(setBits)), valkeytest.Do(t, dst, "BITCOUNT", bits))
	for _, o := range setBits {
		require.Equal(t, int64(1), valkeytest.Do(t, dst, "GETBIT", bits, strconv.Itoa(o)), "acknowledged bit %d", o)
	}

	// the queue runs on the target: a blocked CLAIM answered by an ADD,
	// then COMPLETE
	b := on.startBlocked(dst, 60000)
	ids := on.do(protocol.Add, addArgs(job("after"))...).([]any)
	wantClaimed(t, b.wait(t), ids[0].(string))
	require.Equal(t, int64(1), on.do(protocol.Complete, ids[0].(string), "1", ""))
	valkeytest.RequireConsistentQueue(t, dst, queue)
}

// migrationField is a field of the one migration CLUSTER GETSLOTMIGRATIONS
// lists.
func migrationField(t *testing.T, v any, field string) string {
	t.Helper()
	jobs, ok := v.([]any)
	if !ok || len(jobs) != 1 {
		t.Fatalf("CLUSTER GETSLOTMIGRATIONS: %#v", v)
	}
	kv, _ := jobs[0].([]any)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == field {
			return fmt.Sprint(kv[i+1])
		}
	}
	t.Fatalf("CLUSTER GETSLOTMIGRATIONS has no %s: %#v", field, v)
	return ""
}
