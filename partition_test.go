package trafikey_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"

	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// partitionNodes maps each partition of s (Stats.Partitions) to the index
// of the primary serving its slot.
func partitionNodes(ctx context.Context, t *testing.T, cl *valkeyserver.Cluster, s trafikey.Stats) []int {
	t.Helper()
	primaries := cl.Primaries()
	out := make([]int, len(s.Partitions))
	for i, p := range s.Partitions {
		slot, err := primaries[0].Do(ctx, "CLUSTER", "KEYSLOT", "{"+p.Partition+"}")
		require.NoError(t, err)
		out[i] = int(slot.(int64)) * len(primaries) / valkeyserver.NumSlots
	}
	return out
}

// TestPartitionedQueue runs one queue of six partitions over a
// three-primary cluster, on both executors: the partitions sit on the
// primaries in turn, jobs are routed by unique key, lane and flow and
// spread otherwise, a worker runs them all, and the calls that span the
// queue (Stats, Jobs, Events, Pause, SetRate) see it as one.
func TestPartitionedQueue(t *testing.T) {
	skipInShort(t, "a partitioned queue on a cluster")
	t.Parallel()
	for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
		t.Run(string(exec), func(t *testing.T) {
			t.Parallel()
			cl, c := startClusterOf(t, exec, 0)
			ctx := t.Context()
			q, err := trafikey.Open(ctx, c, "parts", &trafikey.QueueOptions{Executor: exec, Partitions: 6})
			require.NoError(t, err)
			require.NoError(t, q.Admin().SetEvents(ctx, 10000))
			s, err := q.Stats(ctx)
			require.NoError(t, err)
			require.Len(t, s.Partitions, 6)
			require.Equal(t, "parts", s.Partitions[0].Partition, "partition 0 is the queue's own slot")
			nodes := partitionNodes(ctx, t, cl, s)
			perNode := make([]int, 3)
			for _, n := range nodes {
				perNode[n]++
			}
			require.Equal(t, []int{2, 2, 2}, perNode, "the partitions sit on the primaries in turn: %v", nodes)

			// Opened again without a count, the queue is as stored; a smaller
			// count is refused.
			again, err := trafikey.Open(ctx, c, "parts", &trafikey.QueueOptions{Executor: exec})
			require.NoError(t, err)
			s2, err := again.Stats(ctx)
			require.NoError(t, err)
			require.Len(t, s2.Partitions, 6)
			_, err = trafikey.Open(ctx, c, "parts", &trafikey.QueueOptions{Executor: exec, Partitions: 3})
			require.ErrorIs(t, err, trafikey.ErrInvalid)

			// Jobs without a key spread evenly: a batch goes to one partition,
			// single adds in turn.
			for range 6 {
				batch := make([]trafikey.JobSpec, 50)
				for i := range batch {
					batch[i].Payload = []byte("b")
				}
				ids, err := q.AddBatch(ctx, batch)
				require.NoError(t, err)
				require.Len(t, ids, 50)
			}
			var wg sync.WaitGroup
			for range 60 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := again.Add(ctx, []byte("a"), &trafikey.JobOptions{})
					require.NoError(t, err)
				}()
			}
			wg.Wait()
			s, err = q.Stats(ctx)
			require.NoError(t, err)
			require.Equal(t, 360, s.Pending)
			require.Equal(t, 360, s.TotalAdded)
			for _, p := range s.Partitions {
				require.NotZero(t, p.Pending, "partition %s got jobs", p.Partition)
			}

			// A unique key is one partition's: held once in the whole queue.
			first, err := q.Add(ctx, []byte("u"), &trafikey.JobOptions{UniqueKey: "order-7", UniqueTTL: time.Hour})
			require.NoError(t, err)
			_, err = again.Add(ctx, []byte("u"), &trafikey.JobOptions{UniqueKey: "order-7", UniqueTTL: time.Hour})
			require.ErrorIs(t, err, trafikey.ErrDuplicate)
			var te *trafikey.Error
			require.True(t, errors.As(err, &te))
			require.Equal(t, first, te.JobID, "the holder's id is the queue's")
			info, err := q.Inspect(ctx, first)
			require.NoError(t, err)
			require.Equal(t, first, info.ID)
			require.NoError(t, q.Admin().Remove(ctx, first))

			// A lane's jobs are in one partition, with its cap.
			var laneIDs []string
			for range 10 {
				id, err := q.Add(ctx, []byte("l"), &trafikey.JobOptions{Lane: "tenant-a"})
				require.NoError(t, err)
				laneIDs = append(laneIDs, id)
			}
			suffix := func(id string) string {
				if k := strings.LastIndexByte(id, '~'); k >= 0 {
					return id[k:]
				}
				return ""
			}
			for _, id := range laneIDs {
				require.Equal(t, suffix(laneIDs[0]), suffix(id), "lane jobs share a partition: %v", laneIDs)
			}
			require.NoError(t, q.Lane("tenant-a").SetCap(ctx, 2))
			li, err := q.Lane("tenant-a").Info(ctx)
			require.NoError(t, err)
			require.Equal(t, 10, li.Waiting)
			// A flow's child in the lane lives in its flow's partition: the
			// lane is still listed once, its counts summed, its cap its own.
			laneFlows := 0
			for {
				f, err := q.AddFlow(ctx, trafikey.JobSpec{Payload: []byte("fr"), Children: []trafikey.JobSpec{{Payload: []byte("fc"), Options: trafikey.JobOptions{Lane: "tenant-a"}}}})
				require.NoError(t, err)
				laneFlows++
				if suffix(f.ID) != suffix(laneIDs[0]) {
					break
				}
			}
			var lanes []trafikey.LaneInfo
			for l, err := range q.Lanes(ctx) {
				require.NoError(t, err)
				lanes = append(lanes, l)
			}
			require.Equal(t, []trafikey.LaneInfo{{Name: "tenant-a", Waiting: 10 + laneFlows, Cap: 2}}, lanes)

			// A flow is one partition's; its children's results reach the root.
			flow, err := q.AddFlow(ctx, trafikey.JobSpec{Payload: []byte("root"), Children: []trafikey.JobSpec{{Payload: []byte("c1")}, {Payload: []byte("c2")}}})
			require.NoError(t, err)
			for _, ch := range flow.Children {
				require.Equal(t, suffix(flow.ID), suffix(ch.ID))
			}

			// Every job listed once, in order, across pages.
			seen := map[string]bool{}
			after := ""
			var last int64 = -1
			for {
				page, err := q.Jobs(ctx, trafikey.StatePending, trafikey.JobsOptions{After: after, Limit: 37})
				require.NoError(t, err)
				require.Equal(t, 362, page.Total, "360 jobs and the flow's 2 children")
				for _, r := range page.Rows {
					require.False(t, seen[r.ID], "job %s listed twice", r.ID)
					seen[r.ID] = true
					require.GreaterOrEqual(t, r.Score, last)
					last = r.Score
				}
				if page.Next == "" {
					break
				}
				after = page.Next
			}
			require.Len(t, seen, 362)

			// Events of every partition, merged.
			evCtx, stopEvents := context.WithCancel(ctx)
			defer stopEvents()
			var completedEvents atomic.Int64
			eventsDone := make(chan struct{})
			go func() {
				defer close(eventsDone)
				for ev, err := range q.Events(evCtx, "") {
					if err != nil {
						return
					}
					if ev.Name == "completed" {
						completedEvents.Add(1)
					}
				}
			}()
			// Paused, no partition gives a job.
			require.NoError(t, q.Admin().Pause(ctx))
			s, err = q.Stats(ctx)
			require.NoError(t, err)
			require.True(t, s.Paused)
			jobs, err := q.Claim(ctx, time.Minute, 10)
			require.NoError(t, err)
			require.Empty(t, jobs)
			require.NoError(t, q.Admin().Resume(ctx))

			// The rate limit is the queue's, shared by the partitions.
			require.NoError(t, q.Admin().SetRate(ctx, 1000, time.Second))
			s, err = q.Stats(ctx)
			require.NoError(t, err)
			require.Equal(t, 1000, s.RateLimit)
			require.ErrorIs(t, q.Admin().SetRate(ctx, 5, time.Second), trafikey.ErrInvalid)
			require.NoError(t, q.Admin().SetRate(ctx, 0, 0))

			// Cancel reaches a job of any partition; the jobs added on the way
			// run with the others.
			extra := 0
			for {
				id, err := q.Add(ctx, []byte("c"), nil)
				require.NoError(t, err)
				if !strings.Contains(id, "~") {
					extra++
					continue
				}
				require.NoError(t, q.Cancel(ctx, id))
				info, err := q.Inspect(ctx, id)
				require.NoError(t, err)
				require.Equal(t, trafikey.StateDead, info.State)
				break
			}

			// A schedule fires each occurrence once, into partition 0.
			n, err := q.Schedules().Set(ctx, trafikey.Schedule{ID: "tick", Every: 100 * time.Millisecond, Limit: 3, Payload: []byte("s")})
			require.NoError(t, err)
			require.Positive(t, n)

			// A worker runs every job, of every partition.
			var ran atomic.Int64
			rootKids := make(chan []trafikey.ChildResult, 1)
			w, err := trafikey.NewWorker(q, func(ctx context.Context, j *trafikey.Job) error {
				require.Same(t, q, j.Queue())
				ran.Add(1)
				if j.ID == flow.ID {
					kids, err := j.Queue().Children(ctx, j.ID)
					require.NoError(t, err)
					rootKids <- kids
				}
				j.SetResult([]byte("r:" + string(j.Payload)))
				return nil
			}, trafikey.WorkerOptions{Concurrency: 20, PollInterval: 100 * time.Millisecond})
			require.NoError(t, err)
			wctx, stop := context.WithCancel(ctx)
			runDone := make(chan error, 1)
			go func() { runDone <- w.Run(wctx) }()
			got, err := q.AddAndWait(ctx, []byte("w"), nil)
			require.NoError(t, err)
			require.Equal(t, "r:w", string(got))
			// 360 + 10 lane jobs + 3 of the flow + the waited one + 3
			// scheduled, and the extra ones
			total := int64(377 + extra + 2*laneFlows)
			require.Eventually(t, func() bool { return ran.Load() == total }, 30*time.Second, 20*time.Millisecond)
			kids := <-rootKids
			require.Len(t, kids, 2)
			require.Equal(t, flow.Children[0].ID, kids[0].ID)
			require.Equal(t, "r:c1", string(kids[0].Result))
			require.Eventually(t, func() bool { return completedEvents.Load() == total }, 10*time.Second, 20*time.Millisecond)
			stop()
			require.NoError(t, <-runDone)
			stopEvents()
			<-eventsDone

			s, err = q.Stats(ctx)
			require.NoError(t, err)
			require.Zero(t, s.Pending+s.Active+s.Delayed+s.Waiting)
			require.Equal(t, int(total), s.TotalCompleted)
			require.Equal(t, 1, s.TotalCancelled)
			require.Equal(t, 360+3+10+1+1+3+extra+1+2*laneFlows, s.TotalAdded)
			for i, p := range s.Partitions {
				require.NotZero(t, p.TotalCompleted, "partition %d ran jobs", i)
				valkeytest.RequireConsistentQueue(t, cl.Primaries()[nodes[i]], p.Partition)
			}
		})
	}
}

// TestPartitionedQueueGrows grows a queue from 3 to 6 partitions under a
// worker and a producer that opened it at 3: the worker finds the new
// partitions and runs their jobs, the producer's adds reach them; keyed
// jobs keep their partitions.
func TestPartitionedQueueGrows(t *testing.T) {
	skipInShort(t, "a partitioned queue growing")
	t.Parallel()
	cl, c := startClusterOf(t, trafikey.ExecutorNative, 0)
	ctx := t.Context()
	old, err := trafikey.Open(ctx, c, "grows", trafikey.WithPartitionRefresh(&trafikey.QueueOptions{Partitions: 3}, 100*time.Millisecond))
	require.NoError(t, err)
	keyed, err := old.Add(ctx, []byte("k"), &trafikey.JobOptions{UniqueKey: "held", UniqueTTL: time.Hour, Delay: time.Hour})
	require.NoError(t, err)

	var ran sync.Map
	w, err := trafikey.NewWorker(old, func(ctx context.Context, j *trafikey.Job) error {
		if _, dup := ran.LoadOrStore(j.ID, true); dup {
			t.Errorf("job %s ran twice", j.ID)
		}
		return nil
	}, trafikey.WorkerOptions{PollInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	wctx, stop := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- w.Run(wctx) }()

	grown, err := trafikey.Open(ctx, c, "grows", &trafikey.QueueOptions{Partitions: 6})
	require.NoError(t, err)
	s, err := grown.Stats(ctx)
	require.NoError(t, err)
	require.Len(t, s.Partitions, 6)
	nodes := partitionNodes(ctx, t, cl, s)
	perNode := make([]int, 3)
	for _, n := range nodes {
		perNode[n]++
	}
	require.Equal(t, []int{2, 2, 2}, perNode, "the new partitions go on the primaries in turn: %v", nodes)
	// the key is held where it was: refused through either handle
	_, err = grown.Add(ctx, []byte("k"), &trafikey.JobOptions{UniqueKey: "held", UniqueTTL: time.Hour})
	var te *trafikey.Error
	require.True(t, errors.As(err, &te), "%v", err)
	require.ErrorIs(t, err, trafikey.ErrDuplicate)
	require.Equal(t, keyed, te.JobID)

	ids, err := grown.AddBatch(ctx, make([]trafikey.JobSpec, 0))
	require.NoError(t, err)
	require.Empty(t, ids)
	var all []string
	for range 60 {
		id, err := grown.Add(ctx, []byte("x"), &trafikey.JobOptions{})
		require.NoError(t, err)
		all = append(all, id)
	}
	newParts := 0
	for _, id := range all {
		if k := strings.LastIndexByte(id, '~'); k >= 0 && id[k+1:] >= "3" {
			newParts++
		}
	}
	require.NotZero(t, newParts, "jobs went to the new partitions: %v", all)
	// the handle opened at 3 reads the partitions again as it adds, and
	// spreads its jobs over all 6 from then on
	require.Eventually(t, func() bool {
		id, err := old.Add(ctx, []byte("x"), &trafikey.JobOptions{})
		require.NoError(t, err)
		all = append(all, id)
		k := strings.LastIndexByte(id, '~')
		return k >= 0 && id[k+1:] >= "3"
	}, 10*time.Second, 20*time.Millisecond, "the producer opened at 3 partitions adds to the new ones")
	require.Eventually(t, func() bool { return allRan(&ran, all) }, 30*time.Second, 50*time.Millisecond, "the worker opened at 3 partitions runs the jobs of all 6")
	stop()
	require.NoError(t, <-runDone)
	for i, p := range s.Partitions {
		valkeytest.RequireConsistentQueue(t, cl.Primaries()[nodes[i]], p.Partition)
	}
}

// TestPartitionedQueueShardDown stops one primary of three (no replica;
// the cluster keeps serving the slots it still covers) under a worker and
// producers of a partitioned queue: adds without a key move to the live
// partitions, the worker passes over the dead ones, and every job added
// through the outage runs.
func TestPartitionedQueueShardDown(t *testing.T) {
	skipInShort(t, "a partitioned queue losing a primary")
	t.Parallel()
	for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
		t.Run(string(exec), func(t *testing.T) {
			t.Parallel()
			base := valkeyserver.Options{Config: []string{"cluster-require-full-coverage", "no"}}
			if exec == trafikey.ExecutorNative {
				base.Module = valkeytest.ModulePath(t)
			}
			cl := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 3, Base: base})
			c := valkeytest.ClusterClient(t, cl)
			ctx := t.Context()
			q, err := trafikey.Open(ctx, c, "down", &trafikey.QueueOptions{Executor: exec, Partitions: 6})
			require.NoError(t, err)
			s, err := q.Stats(ctx)
			require.NoError(t, err)
			nodes := partitionNodes(ctx, t, cl, s)

			var ran sync.Map
			w, err := trafikey.NewWorker(q, func(ctx context.Context, j *trafikey.Job) error {
				ran.Store(j.ID, true)
				return nil
			}, trafikey.WorkerOptions{PollInterval: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			require.NoError(t, err)
			wctx, stop := context.WithCancel(ctx)
			runDone := make(chan error, 1)
			go func() { runDone <- w.Run(wctx) }()

			// The primary of partition 1 goes away.
			dead := nodes[1]
			require.NoError(t, cl.Primaries()[dead].Stop())
			suffixes := map[string]bool{}
			for i, n := range nodes {
				if n == dead {
					suffixes[partitionSuffix(i)] = true
				}
			}

			// Adds without a key: a call caught on the broken connection
			// fails; once the node refuses connections, its partitions
			// hand the adds on.
			var added []string
			failures := 0
			for len(added) < 120 {
				addCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
				id, err := q.Add(addCtx, []byte("x"), nil)
				cancel()
				if err != nil {
					failures++
					require.Less(t, failures, 20, "adds keep failing: %v", err)
					continue
				}
				require.False(t, suffixes[partitionSuffix(partitionOf(id))], "job %s went to a partition of the stopped primary", id)
				added = append(added, id)
			}
			require.Eventually(t, func() bool { return allRan(&ran, added) }, 30*time.Second, 50*time.Millisecond, "the live partitions' jobs all run")
			stop()
			<-runDone
		})
	}
}

// partitionOf is the partition index a job id names.
func partitionOf(id string) int {
	k := strings.LastIndexByte(id, '~')
	if k < 0 {
		return 0
	}
	n := 0
	for _, c := range id[k+1:] {
		n = n*10 + int(c-'0')
	}
	return n
}

func partitionSuffix(i int) string {
	if i == 0 {
		return ""
	}
	return "~" + strconv.Itoa(i)
}

// TestPartitionedIdleWorker: an idle worker over twelve partitions blocks
// in no BLPOP (no client of any primary is blocked) and is woken by the
// partitions' signal channels, one subscriber each. With PollInterval a
// minute, a job added to any partition after the worker went idle runs
// long before its sweep (five minutes) could find it: only the
// announcement wakes it, and has that partition claimed rather than all.
func TestPartitionedIdleWorker(t *testing.T) {
	skipInShort(t, "a partitioned queue on a cluster")
	t.Parallel()
	forEachExecutorOf(t, func(t *testing.T, exec trafikey.Executor) {
		const parts = 12
		cl, c := startClusterOf(t, exec, 0)
		ctx := t.Context()
		var runner executor.Executor = executor.NewLua(c)
		if exec == trafikey.ExecutorNative {
			runner = executor.NewNative(c)
		}
		ce := &countingExecutor{Executor: runner, calls: map[string]int{}}
		q, err := trafikey.Open(ctx, c, "idle", trafikey.WithRunner(ce, &trafikey.QueueOptions{Partitions: parts}))
		require.NoError(t, err)
		s, err := q.Stats(ctx)
		require.NoError(t, err)
		nodes := partitionNodes(ctx, t, cl, s)
		primaries := cl.Primaries()

		ran, stop := runSlowPolling(t, []trafikey.QueueWeight{{Queue: q, Weight: 1}})

		require.Eventually(t, func() bool {
			for i, p := range s.Partitions {
				if shardSubscribers(t, primaries[nodes[i]], "emq:{"+p.Partition+"}:signal") != 1 {
					return false
				}
			}
			return true
		}, 30*time.Second, 20*time.Millisecond, "every partition's signal channel has the worker as subscriber")

		claims := ce.count(protocol.Claim)
		const rounds = 2 * parts
		for round := range rounds {
			// long enough for the claims of the last wake-up to end: the
			// job below then finds the worker in its idle wait
			time.Sleep(300 * time.Millisecond)
			for _, p := range primaries {
				info, _ := valkeytest.Do(t, p, "INFO", "clients").(string)
				require.Contains(t, info, "blocked_clients:0\r\n", "round %d: nobody waits in a BLPOP", round)
			}
			id, err := q.Add(ctx, []byte(strconv.Itoa(round)), nil)
			require.NoError(t, err)
			select {
			case got := <-ran:
				require.Equal(t, id, got)
			case <-time.After(30 * time.Second):
				t.Fatalf("round %d: job %s was not claimed: no announcement woke the worker", round, id)
			}
		}
		// an announcement has its own partition claimed, not every one:
		// about two claims a round (the job, then the partition found
		// empty) and a sweep of all in one wait of five, where a wake-up
		// that tried every partition would take twelve or more a round
		claims = ce.count(protocol.Claim) - claims
		require.Less(t, claims, rounds*parts*2/3, "claims in %d rounds over %d partitions", rounds, parts)
		t.Logf("%d claims in %d rounds", claims, rounds)
		s, err = q.Stats(ctx)
		require.NoError(t, err)
		parted := map[string]bool{}
		for _, p := range s.Partitions {
			if p.TotalCompleted > 0 {
				parted[p.Partition] = true
			}
		}
		require.Len(t, parted, parts, "the adds went to every partition")
		stop()
	})
}

// TestMixedIdleWorker: a worker of an unpartitioned queue and a
// partitioned one, idle, wakes for either: a BLPOP on the first's signal
// list and the second's partitions' announcements, in one wait. With
// PollInterval a minute, only these wake it in time.
func TestMixedIdleWorker(t *testing.T) {
	skipInShort(t, "a partitioned queue on a cluster")
	t.Parallel()
	forEachExecutorOf(t, func(t *testing.T, exec trafikey.Executor) {
		_, c := startClusterOf(t, exec, 0)
		ctx := t.Context()
		plain, err := trafikey.Open(ctx, c, "plain", &trafikey.QueueOptions{Executor: exec})
		require.NoError(t, err)
		parted, err := trafikey.Open(ctx, c, "parted", &trafikey.QueueOptions{Executor: exec, Partitions: 6})
		require.NoError(t, err)
		ran, stop := runSlowPolling(t, []trafikey.QueueWeight{{Queue: plain, Weight: 1}, {Queue: parted, Weight: 1}})
		for round := range 8 {
			// long enough for the worker to be in its idle wait
			time.Sleep(300 * time.Millisecond)
			q := plain
			if round%2 == 1 {
				q = parted
			}
			id, err := q.Add(ctx, []byte("x"), nil)
			require.NoError(t, err)
			select {
			case got := <-ran:
				require.Equal(t, id, got)
			case <-time.After(30 * time.Second):
				t.Fatalf("round %d: job %s of %s was not claimed: nothing woke the worker", round, id, q.Name())
			}
		}
		stop()
	})
}

// runSlowPolling runs a worker over queues with PollInterval a minute, so
// that only a signal ends its idle wait in a test's time; it returns the
// ids of the jobs it ran, and stop, which ends Run and checks its error.
func runSlowPolling(t *testing.T, queues []trafikey.QueueWeight) (<-chan string, func()) {
	t.Helper()
	ran := make(chan string, 64)
	w, err := trafikey.NewWorkerForQueues(queues, func(_ context.Context, j *trafikey.Job) error {
		ran <- j.ID
		return nil
	}, trafikey.WorkerOptions{PollInterval: time.Minute})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return ran, func() {
		cancel()
		require.NoError(t, <-done)
	}
}

// TestStrictPriorityBehindItsHandle: under StrictPriority, a worker whose
// set has not read a growth yet while its handle has (a producer's add
// read the partitions again) claims only from the partitions of its set,
// whose completers it has, until its own read.
func TestStrictPriorityBehindItsHandle(t *testing.T) {
	skipInShort(t, "a partitioned queue growing under a strict-priority worker")
	t.Parallel()
	_, c := startClusterOf(t, trafikey.ExecutorNative, 0)
	ctx := t.Context()
	old, err := trafikey.Open(ctx, c, "strict", trafikey.WithPartitionRefresh(&trafikey.QueueOptions{Partitions: 2}, 50*time.Millisecond))
	require.NoError(t, err)
	var ran sync.Map
	w, err := trafikey.NewWorker(old, func(_ context.Context, j *trafikey.Job) error {
		ran.Store(j.ID, true)
		return nil
	}, trafikey.WithWorkerRefresh(trafikey.WorkerOptions{StrictPriority: true, PollInterval: 20 * time.Millisecond}, time.Hour))
	require.NoError(t, err)
	stop := runWorker(t, w)

	grown, err := trafikey.Open(ctx, c, "strict", &trafikey.QueueOptions{Partitions: 4})
	require.NoError(t, err)
	// the handle reads the partitions again as it adds: its list has 4
	require.Eventually(t, func() bool {
		id, err := old.Add(ctx, []byte("x"), nil)
		require.NoError(t, err)
		return partIndex(id) >= 2
	}, 10*time.Second, 20*time.Millisecond, "the handle adds to the new partitions")
	var olds, news []string
	for range 40 {
		id, err := grown.Add(ctx, []byte("y"), nil)
		require.NoError(t, err)
		if partIndex(id) >= 2 {
			news = append(news, id)
		} else {
			olds = append(olds, id)
		}
	}
	require.NotEmpty(t, olds)
	require.NotEmpty(t, news)
	require.Eventually(t, func() bool { return allRan(&ran, olds) }, 10*time.Second, 20*time.Millisecond, "the worker runs its set's partitions' jobs")
	for _, id := range news {
		_, ok := ran.Load(id)
		require.False(t, ok, "job %s of a partition the worker's set does not have yet ran", id)
	}
	require.NoError(t, stop())
}

// allRan reports whether the handler stored every one of ids in ran.
func allRan(ran *sync.Map, ids []string) bool {
	for _, id := range ids {
		if _, ok := ran.Load(id); !ok {
			return false
		}
	}
	return true
}
