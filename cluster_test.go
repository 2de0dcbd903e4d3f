package trafikey_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// TestClusterFailover runs queues spread over a three-primary cluster, each
// primary with a replica and the module on every node (native) or none
// (Lua). Every key of a queue carries its hash tag, so each verb runs on the
// queue's node. A manual failover of one primary loses no acknowledged job,
// and the client goes on through the new primary.
func TestClusterFailover(t *testing.T) {
	skipInShort(t, "a cluster failover")
	t.Parallel()
	for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
		t.Run(string(exec), func(t *testing.T) {
			t.Parallel()
			cl, c := startCluster(t, exec)
			ctx := t.Context()

			// Two queues per primary, found by asking the cluster for their slots.
			primaries := cl.Primaries()
			perPrimary := make([]int, len(primaries))
			var queues []*trafikey.Queue
			owner := map[string]int{}
			for i := 0; len(queues) < 2*len(primaries); i++ {
				name := fmt.Sprintf("cq%d", i)
				slot, err := primaries[0].Do(ctx, "CLUSTER", "KEYSLOT", "{"+name+"}")
				require.NoError(t, err)
				p := int(slot.(int64)) * len(primaries) / valkeyserver.NumSlots
				if perPrimary[p] == 2 {
					continue
				}
				perPrimary[p]++
				q, err := trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Executor: exec})
				require.NoError(t, err)
				queues = append(queues, q)
				owner[name] = p
			}

			const perQueue = 200
			for _, q := range queues {
				jobs := make([]trafikey.JobSpec, perQueue)
				for i := range jobs {
					jobs[i] = trafikey.JobSpec{Payload: []byte(q.Name())}
				}
				ids, err := q.AddBatch(ctx, jobs)
				require.NoError(t, err)
				require.Len(t, ids, perQueue)
				completeN(ctx, t, q, perQueue/2)
			}

			// Fail primary 0 over to its replica (the cluster's replicas follow
			// the primaries in order), and wait until the replica leads.
			replica := cl.Replicas()[0]
			_, err := replica.Do(ctx, "CLUSTER", "FAILOVER")
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				role, err := replica.Do(ctx, "ROLE")
				if err != nil {
					return false
				}
				r, _ := role.([]any)
				return len(r) > 0 && r[0] == "master"
			}, 20*time.Second, 50*time.Millisecond, "the replica takes over")

			for _, q := range queues {
				var s trafikey.Stats
				require.Eventually(t, func() bool {
					var err error
					s, err = q.Stats(ctx)
					return err == nil
				}, 20*time.Second, 50*time.Millisecond, "queue %s answers after the failover", q.Name())
				require.EqualValues(t, perQueue/2, s.Pending, "queue %s on primary %d", q.Name(), owner[q.Name()])
				require.EqualValues(t, perQueue/2, s.TotalCompleted, "queue %s", q.Name())
				completeN(ctx, t, q, perQueue/2)
				s, err := q.Stats(ctx)
				require.NoError(t, err)
				require.Zero(t, s.Pending+s.Active+s.Delayed+s.Dead)
				require.EqualValues(t, perQueue, s.TotalCompleted)
			}

			// Deleting one queue finds its keys on its node, whichever
			// that is, and leaves the others' alone.
			_, err = queues[0].Add(ctx, []byte("left"), &trafikey.JobOptions{Delay: time.Hour})
			require.NoError(t, err)
			n, err := queues[0].Admin().DeleteQueue(ctx)
			require.NoError(t, err)
			require.Greater(t, n, 3)
			for _, node := range cl.Primaries() {
				keys, err := node.Do(ctx, "KEYS", protocol.Base(queues[0].Name())+"*")
				require.NoError(t, err)
				require.Empty(t, keys)
			}
			for _, q := range queues[1:] {
				s, err := q.Stats(ctx)
				require.NoError(t, err)
				require.EqualValues(t, perQueue, s.TotalCompleted, "queue %s untouched", q.Name())
			}
		})
	}
}

// startCluster starts three primaries with a replica each, with the module
// on every node for the native executor, and a cluster client.
func startCluster(t *testing.T, exec trafikey.Executor) (*valkeyserver.Cluster, valkey.Client) {
	return startClusterOf(t, exec, 1)
}

// startClusterOf starts three primaries with replicas replicas each, as
// startCluster does.
func startClusterOf(t *testing.T, exec trafikey.Executor, replicas int) (*valkeyserver.Cluster, valkey.Client) {
	base := valkeyserver.Options{}
	if exec == trafikey.ExecutorNative {
		base.Module = valkeytest.ModulePath(t)
	}
	cl := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 3, ReplicasPerPrimary: replicas, Base: base})
	c := valkeytest.ClusterClient(t, cl)
	if exec == trafikey.ExecutorNative {
		valkeytest.RequireVerbs(t, c)
	}
	return cl, c
}

// completeN claims and completes n jobs of q, retrying a call that meets a
// cluster redirect during a failover.
func completeN(ctx context.Context, t *testing.T, q *trafikey.Queue, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for done := 0; done < n; {
		require.True(t, time.Now().Before(deadline), "completed %d of %d jobs of %s", done, n, q.Name())
		jobs, err := q.Claim(ctx, time.Minute, min(50, n-done))
		if err != nil {
			require.True(t, transient(err), "claim: %v", err)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		for _, j := range jobs {
			require.NoError(t, j.Complete(ctx))
			done++
		}
	}
}

// transient reports a cluster error a client retries during a failover.
func transient(err error) bool {
	for _, s := range []string{"MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "LOADING", "connection"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// TestClusterPrimaryCrashLosesNoDurableJob kills one primary of a
// three-primary cluster with SIGKILL while producers add durable jobs
// (Durability{Replicas: 1}) to a queue it owns; its replica takes over, and
// holds every job whose Add returned without error.
func TestClusterPrimaryCrashLosesNoDurableJob(t *testing.T) {
	skipInShort(t, "a cluster primary crash and failover")
	t.Parallel()
	for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
		t.Run(string(exec), func(t *testing.T) {
			t.Parallel()
			cl, c := startCluster(t, exec)
			ctx := t.Context()
			// a queue whose slot primary 0 owns
			primary, replica := cl.Primaries()[0], cl.Replicas()[0]
			var name string
			for i := 0; name == ""; i++ {
				n := fmt.Sprintf("crash%d", i)
				slot, err := primary.Do(ctx, "CLUSTER", "KEYSLOT", "{"+n+"}")
				require.NoError(t, err)
				if int(slot.(int64))*3/valkeyserver.NumSlots == 0 {
					name = n
				}
			}
			q, err := trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Executor: exec,
				Durability: trafikey.Durability{Replicas: 1, Timeout: 2 * time.Second}})
			require.NoError(t, err)

			count, stopProducers := durableProducers(ctx, q)
			require.Eventually(t, func() bool { return count() >= 1000 }, eventually, 5*time.Millisecond)
			require.NoError(t, primary.Kill())
			require.Eventually(t, func() bool {
				role, err := replica.Do(ctx, "ROLE")
				r, _ := role.([]any)
				return err == nil && len(r) > 0 && r[0] == "master"
			}, 30*time.Second, 50*time.Millisecond, "the replica takes over")
			acked := stopProducers()
			// An Add abandoned by its caller may still be on its way, and
			// land on the new primary; Close waits for every call in flight.
			c.Close()

			k := protocol.KeysOf(name)
			lost := 0
			for _, id := range acked {
				if valkeytest.Do(t, replica, "EXISTS", k.Job(id)) != int64(1) {
					lost++
				}
			}
			require.Zero(t, lost, "durable adds missing on the new primary, of %d", len(acked))
			valkeytest.RequireConsistentQueue(t, replica, name)
			t.Logf("%s: %d durable adds acknowledged, all on the new primary", exec, len(acked))
		})
	}
}

// queueOn returns a queue name with the given prefix whose slot primary p
// of cl owns, the slots being split evenly in order, and the slot.
func queueOn(t *testing.T, cl *valkeyserver.Cluster, prefix string, p int) (string, int) {
	t.Helper()
	n := len(cl.Primaries())
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		slot := int(valkeytest.Do(t, cl.Primaries()[0], "CLUSTER", "KEYSLOT", "{"+name+"}").(int64))
		if slot*n/valkeyserver.NumSlots == p {
			return name, slot
		}
	}
}

// blockedOn counts the clients of s blocked in command cmd (lower case).
func blockedOn(t *testing.T, s *valkeyserver.Server, cmd string) int {
	t.Helper()
	list, _ := valkeytest.Do(t, s, "CLIENT", "LIST").(string)
	return countBlocked(list, cmd)
}

// TestClusterMultiQueueWorker runs one worker over three queues, one on
// each primary of a cluster. Idle, it waits on the three signal lists at
// once, one BLPOP per slot on each queue's node, so a job added to any of
// them wakes it at once: the poll interval is an hour, and a queue it did
// not wait on would not be seen in time.
func TestClusterMultiQueueWorker(t *testing.T) {
	skipInShort(t, "a cluster of three primaries")
	t.Parallel()
	for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
		t.Run(string(exec), func(t *testing.T) {
			t.Parallel()
			cl, c := startClusterOf(t, exec, 0)
			ctx := t.Context()
			var qws []trafikey.QueueWeight
			for p := range cl.Primaries() {
				name, slot := queueOn(t, cl, "mq", p)
				q, err := trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Executor: exec})
				require.NoError(t, err)
				require.EqualValues(t, slot, trafikey.HashSlot(protocol.KeysOf(name).Signal), "the worker's slot of %s", name)
				qws = append(qws, trafikey.QueueWeight{Queue: q, Weight: 1})
			}
			var d doneCounter
			w, err := trafikey.NewWorkerForQueues(qws, func(context.Context, *trafikey.Job) error { return nil },
				trafikey.WorkerOptions{Concurrency: 4, PollInterval: time.Hour, OnDone: d.onDone})
			require.NoError(t, err)
			stop := runWorker(t, w)

			for round := range 2 {
				for i, qw := range qws {
					// Idle: blocked on every primary.
					require.Eventually(t, func() bool {
						for _, s := range cl.Primaries() {
							if blockedOn(t, s, "blpop") == 0 {
								return false
							}
						}
						return true
					}, eventually, tick, "the worker waits on every primary")
					_, err := qw.Queue.Add(ctx, []byte("wake"), nil)
					require.NoError(t, err)
					want := round*len(qws) + i + 1
					require.Eventually(t, func() bool { return d.total() == want }, eventually, tick,
						"the job on %s is processed", qw.Queue.Name())
				}
			}
			require.NoError(t, stop())
			d.mu.Lock()
			defer d.mu.Unlock()
			for _, qw := range qws {
				require.Equal(t, 2, d.by[qw.Queue.Name()], qw.Queue.Name())
			}
		})
	}
}

// TestClusterCancelNotice runs one worker over three queues, one on each
// primary of a cluster, with a lease of an hour, so no heartbeat runs: a
// job cancelled on any of them has its handler's context cancelled by the
// notice CANCEL publishes on the queue's sharded channel, which the worker
// subscribed to on the queue's node.
func TestClusterCancelNotice(t *testing.T) {
	skipInShort(t, "a cluster of three primaries")
	t.Parallel()
	for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
		t.Run(string(exec), func(t *testing.T) {
			t.Parallel()
			cl, c := startClusterOf(t, exec, 0)
			ctx := t.Context()
			var qws []trafikey.QueueWeight
			for p := range cl.Primaries() {
				name, _ := queueOn(t, cl, "cn", p)
				q, err := trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Executor: exec})
				require.NoError(t, err)
				qws = append(qws, trafikey.QueueWeight{Queue: q, Weight: 1})
			}
			started := make(chan *trafikey.Job, len(qws))
			causes := make(chan error, len(qws))
			outcomes := make(chan trafikey.Outcome, len(qws))
			w, err := trafikey.NewWorkerForQueues(qws, func(ctx context.Context, j *trafikey.Job) error {
				started <- j
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return ctx.Err()
			}, trafikey.WorkerOptions{Concurrency: len(qws), Lease: time.Hour,
				OnDone: func(_ *trafikey.Job, o trafikey.Outcome, _ error) { outcomes <- o }})
			require.NoError(t, err)
			stop := runWorker(t, w)
			for _, qw := range qws {
				_, err := qw.Queue.Add(ctx, []byte("long"), nil)
				require.NoError(t, err)
				j := <-started
				require.Equal(t, qw.Queue.Name(), j.Queue().Name())
				require.NoError(t, qw.Queue.Cancel(ctx, j.ID))
				requireCancelled(t, causes, "the handler of the job on %s was not cancelled", qw.Queue.Name())
				require.Equal(t, trafikey.OutcomeCancelled, <-outcomes)
			}
			require.NoError(t, stop())
			require.Equal(t, len(qws), w.Info().Cancelled)
		})
	}
}
