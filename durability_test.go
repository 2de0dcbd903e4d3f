package trafikey_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// TestKillNineLosesNoAcknowledgedJob kills the server with SIGKILL while
// producers add and a consumer claims and completes, with appendfsync
// always. Restarted from its AOF, the server holds a row for every job whose
// ADD was acknowledged and that was never completed, and no row for a job
// whose COMPLETE was acknowledged.
func TestKillNineLosesNoAcknowledgedJob(t *testing.T) {
	skipInShort(t, "kill -9 and an AOF restart")
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			s, c, exec := e.start(t, valkeyserver.Options{AOF: true})
			q, err := trafikey.Open(t.Context(), c, "durable", trafikey.WithRunner(exec, nil))
			require.NoError(t, err)

			var mu sync.Mutex
			added := map[string]bool{}
			completed := map[string]bool{}
			// A COMPLETE cut off by the kill may or may not have been applied:
			// such a job may be found either way.
			inFlight := map[string]bool{}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for ctx.Err() == nil {
						id, err := q.Add(ctx, []byte("durable job"), nil)
						if err != nil {
							continue // unacknowledged: the server may be gone
						}
						mu.Lock()
						added[id] = true
						mu.Unlock()
					}
				})
			}
			wg.Go(func() {
				for ctx.Err() == nil {
					jobs, err := q.Claim(ctx, time.Minute, 16)
					if err != nil {
						continue
					}
					for _, j := range jobs {
						mu.Lock()
						inFlight[j.ID] = true
						mu.Unlock()
						if j.Complete(ctx) == nil {
							mu.Lock()
							completed[j.ID] = true
							mu.Unlock()
						}
					}
				}
			})

			// Kill once enough work has been acknowledged on both sides.
			require.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(added) >= 500 && len(completed) >= 100
			}, crashWait, 5*time.Millisecond)
			require.NoError(t, s.Kill())
			cancel()
			wg.Wait()
			require.NoError(t, s.Restart(t.Context()))

			keys := protocol.KeysOf(q.Name())
			ids := make([]string, 0, len(added))
			for id := range added {
				ids = append(ids, id)
			}
			for id := range completed {
				require.True(t, added[id], "job %s completed but never acknowledged as added", id)
			}
			cmds := make(valkey.Commands, len(ids))
			for i, id := range ids {
				cmds[i] = c.B().Exists().Key(keys.Job(id)).Build()
			}
			var res []valkey.ValkeyResult
			require.Eventually(t, func() bool {
				res = c.DoMulti(t.Context(), cmds...)
				return !errors.Is(res[0].Error(), context.Canceled) && res[0].Error() == nil
			}, eventually, 50*time.Millisecond, "the client reconnects to the restarted server")
			lost, resurrected := 0, 0
			for i, r := range res {
				n, err := r.AsInt64()
				require.NoError(t, err)
				switch {
				case completed[ids[i]] && n != 0:
					resurrected++
				case !inFlight[ids[i]] && n != 1:
					lost++
				}
			}
			require.Zero(t, lost, "acknowledged jobs missing after kill -9 (of %d added, %d completed)", len(added), len(completed))
			require.Zero(t, resurrected, "acknowledged completions undone after kill -9")
			valkeytest.RequireConsistentQueue(t, s, q.Name())
			t.Logf("%s: %d acknowledged adds, %d acknowledged completes, all as acknowledged after kill -9", e.name, len(added), len(completed))
		})
	}
}

// durablePair is a primary (with the executor under test) and its replica,
// both with appendonly, and queue name opened on the primary with d; open
// opens another handle on the queue with another durability.
func durablePair(t *testing.T, e executorCase, name string, d trafikey.Durability) (primary, replica *valkeyserver.Server, q *trafikey.Queue, open func(trafikey.Durability) *trafikey.Queue) {
	s, c, exec := e.start(t, valkeyserver.Options{AOF: true})
	r := valkeytest.Start(t, valkeyserver.Options{ReplicaOf: s.Addr(), AOF: true})
	require.NoError(t, r.WaitReplicaSync(t.Context()))
	open = func(d trafikey.Durability) *trafikey.Queue {
		q, err := trafikey.Open(t.Context(), c, name, trafikey.WithRunner(exec, &trafikey.QueueOptions{Durability: d}))
		require.NoError(t, err)
		return q
	}
	return s, r, open(d), open
}

// crashWait bounds how long a crash test waits for its first acknowledged
// writes before it kills the server: each durable write waits for the
// replica (and its AOF), which takes far longer on a loaded machine, and
// what the tests check does not depend on how many writes come first.
const crashWait = 2 * time.Minute

// durableProducers adds jobs to q from 4 goroutines until stop, and keeps
// the ids of the adds that returned without error; stop waits for them and
// returns those ids. acked says how many there are so far.
func durableProducers(ctx context.Context, q *trafikey.Queue) (acked func() int, stop func() []string) {
	var mu sync.Mutex
	var ids []string
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				if id, err := q.Add(ctx, []byte("job"), nil); err == nil {
					mu.Lock()
					ids = append(ids, id)
					mu.Unlock()
				}
			}
		})
	}
	acked = func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(ids)
	}
	stop = func() []string {
		cancel()
		wg.Wait()
		return ids
	}
	return acked, stop
}

// TestDurabilityConfirmed: with QueueOptions.Durability, an Add, a Complete and a
// Fail return only once the replica has the write: the replica is read
// right after each call, with no wait. With AOF, once both AOFs were
// fsynced too (WAITAOF; the replica reports its fsync about once a second,
// so such a call can take that long).
func TestDurabilityConfirmed(t *testing.T) {
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			s, r, q, open := durablePair(t, e, "d", trafikey.Durability{Replicas: 1, Timeout: 10 * time.Second})
			k := protocol.KeysOf("d")
			onReplica := func(args ...string) any { return valkeytest.Do(t, r, args...) }

			for i := range 20 { // coalesced adds, and the ones alone
				id, err := q.Add(t.Context(), []byte("p"+strconv.Itoa(i)), nil)
				require.NoError(t, err)
				require.Equal(t, int64(1), onReplica("EXISTS", k.Job(id)), "job %s on the replica when Add returns", id)
			}
			withAOF := open(trafikey.Durability{Replicas: 1, AOF: true, Timeout: 10 * time.Second})
			ids, err := withAOF.AddBatch(t.Context(), []trafikey.JobSpec{{Payload: []byte("x")}, {Payload: []byte("y")}})
			require.NoError(t, err)
			require.Equal(t, int64(2), onReplica("EXISTS", k.Job(ids[0]), k.Job(ids[1])))

			jobs, err := q.Claim(t.Context(), time.Minute, 2)
			require.NoError(t, err)
			require.NoError(t, jobs[0].Complete(t.Context()))
			require.Equal(t, int64(0), onReplica("EXISTS", k.Job(jobs[0].ID)), "the completion is on the replica")
			retrying, err := jobs[1].Fail(t.Context(), errors.New("boom"), true)
			require.NoError(t, err)
			require.True(t, retrying)
			require.Equal(t, "delayed", onReplica("HGET", k.Job(jobs[1].ID), "state"))

			// The worker's completions wait too.
			w := newWorker(t, q, func(context.Context, *trafikey.Job) error { return nil }, trafikey.WorkerOptions{})
			stop := runWorker(t, w)
			// 20 added, and the one that failed once
			require.Eventually(t, func() bool { return w.Info().Processed == 21 }, eventually, tick)
			require.NoError(t, stop())
			require.Equal(t, int64(0), onReplica("ZCARD", k.Pending))
			valkeytest.RequireConsistentQueue(t, s, "d")
			valkeytest.RequireConsistentQueue(t, r, "d")
			require.Equal(t, onReplica("HGET", k.Stats, "completed"), valkeytest.Do(t, s, "HGET", k.Stats, "completed"))

			// Each durable call waited on the primary: 20 adds (some
			// coalesced), a complete, a fail and the worker's completions.
			stats := valkeytest.Do(t, s, "INFO", "commandstats").(string)
			calls := func(cmd string) int {
				_, rest, ok := strings.Cut(stats, "cmdstat_"+cmd+":calls=")
				require.True(t, ok, "no %s in commandstats", cmd)
				n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
				require.NoError(t, err)
				return n
			}
			require.GreaterOrEqual(t, calls("wait"), 3)
			require.Equal(t, 1, calls("waitaof"))
		})
	}
}

// TestDurabilityNotConfirmed: a durability the servers cannot give is
// ErrNotDurable with the counts, and the write is not undone; a handle
// without a durability on the same queue does not wait.
func TestDurabilityNotConfirmed(t *testing.T) {
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			_, c, exec := e.start(t, valkeyserver.Options{})
			open := func(d trafikey.Durability) *trafikey.Queue {
				q, err := trafikey.Open(t.Context(), c, "nd", trafikey.WithRunner(exec, &trafikey.QueueOptions{Durability: d}))
				require.NoError(t, err)
				return q
			}
			q := open(trafikey.Durability{Replicas: 1, Timeout: 50 * time.Millisecond})

			id, err := q.Add(t.Context(), []byte("a"), nil)
			require.ErrorIs(t, err, trafikey.ErrNotDurable)
			require.Contains(t, err.Error(), "add: durability not confirmed within 50ms: 0 of 1 replicas")
			require.NotEmpty(t, id, "the job was added: its id comes with the error")
			_, err = q.Inspect(t.Context(), id)
			require.NoError(t, err)

			ids, err := q.AddBatch(t.Context(), []trafikey.JobSpec{{Payload: []byte("b")}})
			require.ErrorIs(t, err, trafikey.ErrNotDurable)
			require.Len(t, ids, 1)

			// appendonly is off: WAITAOF is refused, and that is the error
			_, err = open(trafikey.Durability{AOF: true}).Add(t.Context(), []byte("c"), nil)
			require.ErrorIs(t, err, trafikey.ErrNotDurable)
			var ve *valkey.ValkeyError
			require.ErrorAs(t, err, &ve, "the refusal of WAITAOF is the cause")

			off := open(trafikey.Durability{})
			_, err = off.Add(t.Context(), []byte("d"), nil)
			require.NoError(t, err)
			plain, err := off.Claim(t.Context(), time.Minute, 1)
			require.NoError(t, err)
			require.NoError(t, plain[0].Complete(t.Context()), "a job claimed through a handle without durability")
			jobs, err := q.Claim(t.Context(), time.Minute, 3)
			require.NoError(t, err)
			require.Len(t, jobs, 3)
			require.ErrorIs(t, jobs[0].Complete(t.Context()), trafikey.ErrNotDurable)
			_, err = q.Inspect(t.Context(), jobs[0].ID)
			require.ErrorIs(t, err, trafikey.ErrNotFound, "completed all the same")
			retrying, err := jobs[1].Fail(t.Context(), errors.New("x"), true)
			require.ErrorIs(t, err, trafikey.ErrNotDurable)
			require.True(t, retrying)
			errs, err := q.CompleteMany(t.Context(), []*trafikey.Job{jobs[2]})
			require.NoError(t, err)
			require.ErrorIs(t, errs[0], trafikey.ErrNotDurable)

			_, err = trafikey.Open(t.Context(), c, "nd", &trafikey.QueueOptions{Durability: trafikey.Durability{Replicas: -1}})
			require.ErrorIs(t, err, trafikey.ErrInvalid)
			_, err = trafikey.Open(t.Context(), c, "nd", &trafikey.QueueOptions{Durability: trafikey.Durability{AOF: true, Timeout: -time.Second}})
			require.ErrorIs(t, err, trafikey.ErrInvalid)
		})
	}
}

// TestPrimaryCrashLosesNoDurableJob kills the primary with SIGKILL while
// producers add with Durability{Replicas: 1} and promotes its replica:
// every job whose Add returned without error is on the new primary.
func TestPrimaryCrashLosesNoDurableJob(t *testing.T) {
	skipInShort(t, "a primary crash and a replica promoted")
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			s, r, q, _ := durablePair(t, e, "crash", trafikey.Durability{Replicas: 1, Timeout: 5 * time.Second})
			count, stop := durableProducers(t.Context(), q)
			require.Eventually(t, func() bool { return count() >= 500 }, crashWait, 5*time.Millisecond)
			require.NoError(t, s.Kill())
			acked := stop()
			valkeytest.Do(t, r, "REPLICAOF", "NO", "ONE")

			k := protocol.KeysOf("crash")
			lost := 0
			for _, id := range acked {
				if valkeytest.Do(t, r, "EXISTS", k.Job(id)) != int64(1) {
					lost++
				}
			}
			require.Zero(t, lost, "durable adds missing on the promoted replica, of %d", len(acked))
			valkeytest.RequireConsistentQueue(t, r, "crash")
			t.Logf("%s: %d durable adds acknowledged, all on the promoted replica", e.name, len(acked))
		})
	}
}
