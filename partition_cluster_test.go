package trafikey_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// partIndex is the index of the partition job id is in: its suffix
// "~<index>", none for partition 0 (docs/PARTITIONS.md, "Job ids").
func partIndex(id string) int {
	k := strings.LastIndexByte(id, '~')
	if k < 0 {
		return 0
	}
	n, err := strconv.Atoi(id[k+1:])
	if err != nil {
		return -1
	}
	return n
}

// keyedPart is the partition a unique key or a lane is routed to over keyed
// partitions: FNV-1a of it, modulo keyed (docs/PARTITIONS.md, "Where a job
// goes"). The tests check each use against the ids the queue gives.
func keyedPart(s string, keyed int) int {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32() % uint32(keyed))
}

// keyFor is the first of prefix0, prefix1, ... routed to partition part
// over keyed partitions.
func keyFor(prefix string, part, keyed int) string {
	for i := 0; ; i++ {
		k := prefix + strconv.Itoa(i)
		if keyedPart(k, keyed) == part {
			return k
		}
	}
}

// jobKind is what a producer adds: plain jobs, jobs with a unique key, or
// jobs in a lane.
type jobKind int

const (
	plainJobs jobKind = iota
	uniqueJobs
	laneJobs
)

// uniqueKeys is the fixed set unique keys are drawn from: far fewer than
// the attempts, so most attempts meet a held key.
const uniqueKeys = 120

// lanesUsed is how many lanes the lane producers spread over.
const lanesUsed = 5

// duplicate is an Add refused with ErrDuplicate: the key and the holder
// the error named.
type duplicate struct {
	key, holder string
	by          string // the producer's handle
}

// partLoad records a load on a partitioned queue: the adds acknowledged,
// the handler's runs and the completions by job id, which handle accepted
// each unique key, the duplicates refused, and the order in which jobs
// started and completed, by partition.
type partLoad struct {
	mu        sync.Mutex
	acked     map[string]string // job id → the handle that added it
	ackedDup  []string          // ids returned twice
	runs      map[string]int
	completed map[string]int // completions reported, confirmed durable or not
	confirmed map[string]int // completions reported without error
	// ranAfter holds the jobs that started again after a confirmed
	// completion.
	ranAfter []string
	// completedBy counts the completions of each worker by partition.
	completedBy map[string]map[int]int
	outcomes    map[trafikey.Outcome]int
	keys        map[string]string // unique key → id of the job that holds it
	keyBy       map[string]string // unique key → the handle that added it
	keyTwice    []string
	dups        []duplicate
	lanes       map[string]map[int]bool // lane → the partitions of its jobs
	addErrs     []error
	// log is every job start ("run") and completion ("done") in order,
	// with the job's partition.
	log []loadEvent
}

type loadEvent struct {
	what string
	part int
}

func newPartLoad() *partLoad {
	return &partLoad{
		acked: map[string]string{}, runs: map[string]int{}, completed: map[string]int{}, confirmed: map[string]int{},
		completedBy: map[string]map[int]int{}, outcomes: map[trafikey.Outcome]int{},
		keys: map[string]string{}, keyBy: map[string]string{}, lanes: map[string]map[int]bool{},
	}
}

func (l *partLoad) handler(_ context.Context, j *trafikey.Job) error {
	l.mu.Lock()
	l.runs[j.ID]++
	if l.confirmed[j.ID] > 0 {
		l.ranAfter = append(l.ranAfter, j.ID)
	}
	l.log = append(l.log, loadEvent{"run", partIndex(j.ID)})
	l.mu.Unlock()
	time.Sleep(time.Millisecond) // a job's work, far within the lease
	return nil
}

// onDone is the OnDone of the worker named by.
func (l *partLoad) onDone(by string) func(*trafikey.Job, trafikey.Outcome, error) {
	return func(j *trafikey.Job, o trafikey.Outcome, err error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.outcomes[o]++
		if o != trafikey.OutcomeCompleted {
			return
		}
		l.completed[j.ID]++
		if err == nil {
			l.confirmed[j.ID]++
		}
		if l.completedBy[by] == nil {
			l.completedBy[by] = map[int]int{}
		}
		l.completedBy[by][partIndex(j.ID)]++
		l.log = append(l.log, loadEvent{"done", partIndex(j.ID)})
	}
}

func (l *partLoad) ackedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

func (l *partLoad) completedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.completed)
}

// logLen is how many events the log holds so far.
func (l *partLoad) logLen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.log)
}

// produce adds jobs of kind to q, the handle named by, from one goroutine
// until stop is closed. An Add that fails is recorded; with keepGoing the
// producer goes on after it (a failover refuses some), else it stops.
func (l *partLoad) produce(ctx context.Context, by string, q *trafikey.Queue, kind jobKind, keepGoing bool, stop <-chan struct{}, wg *sync.WaitGroup) {
	wg.Go(func() {
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			var opts *trafikey.JobOptions
			key, lane := "", ""
			switch kind {
			case uniqueJobs:
				// Held an hour, the jobs delayed as long: no key is released
				// while the load runs, so each is accepted once at most.
				key = "key-" + strconv.Itoa(n*7919%uniqueKeys)
				opts = &trafikey.JobOptions{UniqueKey: key, UniqueTTL: time.Hour, Delay: time.Hour}
			case laneJobs:
				lane = "lane-" + strconv.Itoa(n%lanesUsed)
				opts = &trafikey.JobOptions{Lane: lane}
			}
			id, err := q.Add(ctx, []byte(by), opts)
			var te *trafikey.Error
			l.mu.Lock()
			switch {
			case err == nil:
				if _, ok := l.acked[id]; ok {
					l.ackedDup = append(l.ackedDup, id)
				}
				l.acked[id] = by
				if key != "" {
					if _, ok := l.keys[key]; ok {
						l.keyTwice = append(l.keyTwice, key)
					}
					l.keys[key], l.keyBy[key] = id, by
				}
				if lane != "" {
					if l.lanes[lane] == nil {
						l.lanes[lane] = map[int]bool{}
					}
					l.lanes[lane][partIndex(id)] = true
				}
			case key != "" && errors.Is(err, trafikey.ErrDuplicate) && errors.As(err, &te):
				l.dups = append(l.dups, duplicate{key: key, holder: te.JobID, by: by})
			default:
				l.addErrs = append(l.addErrs, err)
			}
			l.mu.Unlock()
			if err != nil && !errors.Is(err, trafikey.ErrDuplicate) {
				if !keepGoing || ctx.Err() != nil {
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	})
}

// requireRanOnce checks that every acknowledged add's job ran once and
// completed once, confirmed, and that no id was returned twice.
func (l *partLoad) requireRanOnce(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	require.Empty(t, l.ackedDup, "ids returned by two adds")
	var lost, twice []string
	for id := range l.acked {
		if l.confirmed[id] == 0 {
			lost = append(lost, id)
		}
		if l.runs[id] > 1 || l.completed[id] > 1 {
			twice = append(twice, id)
		}
	}
	require.Empty(t, lost, "acknowledged jobs never completed, of %d", len(l.acked))
	require.Empty(t, twice, "jobs run more than once, of %d", len(l.acked))
}

// requireConsistentParts runs the consistency checker on every partition
// of s, each on the node nodeOf gives for the index of the primary that
// served it at first (nodes, from partitionNodes).
func requireConsistentParts(t *testing.T, s trafikey.Stats, nodes []int, nodeOf func(int) *valkeyserver.Server) {
	t.Helper()
	for i, n := range nodes {
		valkeytest.RequireConsistentQueue(t, nodeOf(n), s.Partitions[i].Partition)
	}
}

// primaryOf maps a primary's index to the primary of cl.
func primaryOf(cl *valkeyserver.Cluster) func(int) *valkeyserver.Server {
	return func(n int) *valkeyserver.Server { return cl.Primaries()[n] }
}

// TestPartitionGrowthUnderLoad grows a queue of three partitions on a
// three-primary cluster to twelve while producers and a worker run, on
// both executors. Producers add plain jobs, jobs in lanes and jobs with a
// unique key drawn from a fixed set (held an hour, the jobs delayed as
// long, so no key is released during the load); a second client grows the
// queue, and handles opened after it with no count see twelve partitions
// and add and work beside the handles opened before, which keep their
// three. Every acknowledged job runs once, no unique key is accepted twice
// across all handles (a refusal names the holder that was accepted), a
// lane stays in one partition, the old partitions are drained by the new
// worker alone, the new partitions take jobs, and every partition is
// consistent on its node.
func TestPartitionGrowthUnderLoad(t *testing.T) {
	skipInShort(t, "growing a partitioned queue under load on a cluster")
	t.Parallel()
	forEachExecutorOf(t, partitionGrowth)
}

func partitionGrowth(t *testing.T, exec trafikey.Executor) {
	cl, c := startClusterOf(t, exec, 0)
	ctx := t.Context()
	open := func(c valkey.Client, partitions int) *trafikey.Queue {
		t.Helper()
		q, err := trafikey.Open(ctx, c, "grow", &trafikey.QueueOptions{Executor: exec, Partitions: partitions})
		require.NoError(t, err)
		return q
	}
	parts := func(q *trafikey.Queue) trafikey.Stats {
		t.Helper()
		s, err := q.Stats(ctx)
		require.NoError(t, err)
		return s
	}
	old := open(c, 3)
	require.Len(t, parts(old).Partitions, 3)

	l := newPartLoad()
	wopts := func(by string) trafikey.WorkerOptions {
		return trafikey.WorkerOptions{Concurrency: 8, Lease: time.Minute, OnDone: l.onDone(by)}
	}
	oldWorker, err := trafikey.NewWorker(old, l.handler, wopts("old"))
	require.NoError(t, err)
	stopOldWorker := runWorker(t, oldWorker)
	stopOld, stopNew := make(chan struct{}), make(chan struct{})
	var oldProducers, newProducers sync.WaitGroup
	for _, kind := range []jobKind{plainJobs, plainJobs, uniqueJobs, laneJobs} {
		l.produce(ctx, "old", old, kind, false, stopOld, &oldProducers)
	}
	require.Eventually(t, func() bool { return l.ackedCount() >= 400 }, eventually, tick, "the load runs")

	// Another client grows the queue while the load runs.
	grown := open(valkeytest.ClusterClient(t, cl), 12)
	s := parts(grown)
	require.Len(t, s.Partitions, 12)
	perNode := make([]int, 3)
	for _, n := range partitionNodes(ctx, t, cl, s) {
		perNode[n]++
	}
	require.Equal(t, []int{4, 4, 4}, perNode, "the new partitions sit on the primaries in turn")
	require.Len(t, parts(old).Partitions, 3, "a handle opened before the growth keeps its partitions")

	// Handles opened now, with no count, see twelve, and run beside the old.
	fresh := open(c, 0)
	require.Len(t, parts(fresh).Partitions, 12)
	newWorker, err := trafikey.NewWorker(fresh, l.handler, wopts("new"))
	require.NoError(t, err)
	stopNewWorker := runWorker(t, newWorker)
	for _, kind := range []jobKind{plainJobs, plainJobs, uniqueJobs, laneJobs} {
		l.produce(ctx, "new", fresh, kind, false, stopNew, &newProducers)
	}
	at := l.ackedCount()
	require.Eventually(t, func() bool { return l.ackedCount() >= at+800 }, 2*eventually, tick, "the load runs on both")

	// The old handles stop; the new go on alone, then stop too.
	close(stopOld)
	oldProducers.Wait()
	require.NoError(t, stopOldWorker())
	at = l.ackedCount()
	require.Eventually(t, func() bool { return l.ackedCount() >= at+400 }, eventually, tick, "the load runs on the new handles")
	close(stopNew)
	newProducers.Wait()

	l.mu.Lock()
	require.Empty(t, l.addErrs, "every add but a duplicate key's returned an id")
	acked := len(l.acked)
	l.mu.Unlock()
	// The jobs with unique keys were delayed: run them now.
	promoted, err := fresh.Admin().PromoteAll(ctx, nil)
	require.NoError(t, err)
	require.Positive(t, promoted)
	require.Eventually(t, func() bool { return l.completedCount() >= acked }, 4*eventually, tick, "every job added completes")
	require.NoError(t, stopNewWorker())

	l.requireRanOnce(t)
	l.mu.Lock()
	defer l.mu.Unlock()
	require.Len(t, l.completed, acked, "no job ran that no add acknowledged")
	require.Equal(t, map[trafikey.Outcome]int{trafikey.OutcomeCompleted: acked}, l.outcomes)

	// No unique key accepted twice; every refusal names its holder, and
	// handles on both sides of the growth refused keys the other side holds.
	require.Empty(t, l.keyTwice, "unique keys accepted twice")
	require.Equal(t, promoted, len(l.keys), "one job per key accepted")
	crossed := map[string]int{}
	for _, d := range l.dups {
		require.Equal(t, l.keys[d.key], d.holder, "the holder named for key %s refused to %s", d.key, d.by)
		require.Less(t, partIndex(d.holder), 3, "key %s is held in a partition the queue was created with", d.key)
		crossed[d.by+" refused, "+l.keyBy[d.key]+" holds"]++
	}
	require.Positive(t, crossed["new refused, old holds"], "the handles opened after the growth route keys as before: %v", crossed)
	for lane, in := range l.lanes {
		require.Len(t, in, 1, "lane %s is in one partition: %v", lane, in)
		for p := range in {
			require.Less(t, p, 3, "lane %s is in a partition the queue was created with", lane)
		}
	}

	s = parts(fresh)
	require.Equal(t, acked, s.TotalAdded, "no add counted twice")
	require.Equal(t, acked, s.TotalCompleted)
	for i, p := range s.Partitions {
		require.Zero(t, p.Pending+p.Active+p.Delayed+p.Waiting+p.Dead, "partition %d (%s) drained: %+v", i, p.Partition, p)
		if i >= 3 {
			require.Positive(t, p.TotalAdded, "new partition %d (%s) took jobs", i, p.Partition)
			require.Zero(t, l.completedBy["old"][i], "the old worker claims from its partitions only")
		}
	}
	for i := range 3 {
		require.Positive(t, l.completedBy["new"][i], "the new worker drained old partition %d", i)
	}
	requireConsistentParts(t, s, partitionNodes(ctx, t, cl, s), primaryOf(cl))
	t.Logf("%s: %d jobs each run once, %d unique keys held once against %d refusals (%v), %d promoted",
		exec, acked, len(l.keys), len(l.dups), crossed, promoted)
}

// TestPartitionFirstGrowthLiveHandles partitions a queue that was opened
// unpartitioned, on a three-primary cluster, while a producer and a worker
// opened before run on it, on both executors. Another client opens it with
// three partitions; the old handle then becomes the partitioned queue's
// without reopening: its Stats break down by partition, its plain adds
// reach the new partitions and its lane jobs stay in partition 0 (the
// queue held jobs, so keyed jobs keep to it), and its worker runs the jobs
// the new handle adds to every partition. Every acknowledged job runs
// once and every partition ends drained and consistent.
func TestPartitionFirstGrowthLiveHandles(t *testing.T) {
	skipInShort(t, "partitioning a queue under load on a cluster")
	t.Parallel()
	forEachExecutorOf(t, partitionFirstGrowth)
}

func partitionFirstGrowth(t *testing.T, exec trafikey.Executor) {
	cl, c := startClusterOf(t, exec, 0)
	ctx := t.Context()
	// the old handle reads the partitions hash every 100 ms, not 5 s
	old, err := trafikey.Open(ctx, c, "first", trafikey.WithPartitionRefresh(&trafikey.QueueOptions{Executor: exec}, 100*time.Millisecond))
	require.NoError(t, err)
	s, err := old.Stats(ctx)
	require.NoError(t, err)
	require.Empty(t, s.Partitions, "the queue starts unpartitioned")

	l := newPartLoad()
	w, err := trafikey.NewWorker(old, l.handler, trafikey.WorkerOptions{Concurrency: 8, Lease: time.Minute, OnDone: l.onDone("old")})
	require.NoError(t, err)
	stopWorker := runWorker(t, w)
	stopOld, stopNew := make(chan struct{}), make(chan struct{})
	var producers sync.WaitGroup
	for _, kind := range []jobKind{plainJobs, plainJobs, laneJobs} {
		l.produce(ctx, "old", old, kind, false, stopOld, &producers)
	}
	require.Eventually(t, func() bool { return l.ackedCount() >= 300 }, eventually, tick, "the load runs")

	// Another client partitions the queue while the load runs.
	grown, err := trafikey.Open(ctx, valkeytest.ClusterClient(t, cl), "first", &trafikey.QueueOptions{Executor: exec, Partitions: 3})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		s, err := old.Stats(ctx)
		return err == nil && len(s.Partitions) == 3
	}, eventually, tick, "the old handle sees the partitions")
	l.produce(ctx, "new", grown, plainJobs, false, stopNew, &producers)

	// The old producer spreads over the new partitions, and the old worker
	// runs jobs from every partition.
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		spread := map[int]int{}
		for id, by := range l.acked {
			if by == "old" {
				spread[partIndex(id)]++
			}
		}
		ran := l.completedBy["old"]
		return spread[1] >= 20 && spread[2] >= 20 && ran[1] >= 50 && ran[2] >= 50
	}, 2*eventually, tick, "the old handles use every partition")

	close(stopOld)
	close(stopNew)
	producers.Wait()
	l.mu.Lock()
	require.Empty(t, l.addErrs, "every add returned an id")
	acked := len(l.acked)
	l.mu.Unlock()
	require.Eventually(t, func() bool { return l.completedCount() >= acked }, 4*eventually, tick, "every job added completes")
	require.NoError(t, stopWorker())

	l.requireRanOnce(t)
	l.mu.Lock()
	defer l.mu.Unlock()
	require.Len(t, l.completed, acked, "no job ran that no add acknowledged")
	require.Equal(t, map[trafikey.Outcome]int{trafikey.OutcomeCompleted: acked}, l.outcomes)
	for lane, in := range l.lanes {
		require.Equal(t, map[int]bool{0: true}, in, "lane %s stays in partition 0", lane)
	}
	s, err = old.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, acked, s.TotalAdded, "no add counted twice")
	require.Equal(t, acked, s.TotalCompleted)
	for i, p := range s.Partitions {
		require.Zero(t, p.Pending+p.Active+p.Delayed+p.Waiting+p.Dead, "partition %d (%s) drained: %+v", i, p.Partition, p)
	}
	requireConsistentParts(t, s, partitionNodes(ctx, t, cl, s), primaryOf(cl))
	t.Logf("%s: %d jobs each run once; the old worker ran %v by partition", exec, acked, l.completedBy["old"])
}

// failoverWay is how a test fails a primary over.
type failoverWay string

const (
	// crashFailover kills the primary (SIGKILL): a replica takes over once
	// the cluster finds it down, and the other follows it.
	crashFailover failoverWay = "crash"
	// manualFailover runs CLUSTER FAILOVER on a replica.
	manualFailover failoverWay = "manual"
	// heldFailover runs CLUSTER FAILOVER on a replica while the primary
	// holds its clients' writes (CLIENT PAUSE WRITE), as it does itself
	// while a manual failover waits for the replica to catch up, or as a
	// hung primary does, until the test lets them go: the calls on the
	// failed shard wait meanwhile, neither answered nor refused.
	heldFailover failoverWay = "held"
)

// TestPartitionFailoverUnderLoad fails one primary of three, each with two
// replicas, over to a replica while producers add durable jobs
// (Durability{Replicas: 1}) to a queue of six partitions, two on each
// primary, and a worker runs it, on both executors and in each
// failoverWay. While the failed shard switches, the worker goes on starting
// and completing jobs of the partitions on the other primaries (with the
// failed shard's calls held, it goes on with a backlog of theirs
// meanwhile). After it, every acknowledged add's job is completed on the
// servers (the queue keeps its completed jobs), no job starts again once
// its completion was confirmed, and every partition is consistent on the
// node that now serves it.
func TestPartitionFailoverUnderLoad(t *testing.T) {
	skipInShort(t, "a cluster failover under load on a partitioned queue")
	t.Parallel()
	for _, way := range []failoverWay{crashFailover, manualFailover, heldFailover} {
		for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
			t.Run(string(way)+"/"+string(exec), func(t *testing.T) {
				t.Parallel()
				partitionFailover(t, exec, way)
			})
		}
	}
}

// leader is the one of servers that reports the primary role, or nil.
func leader(ctx context.Context, servers ...*valkeyserver.Server) *valkeyserver.Server {
	for _, s := range servers {
		role, err := s.Do(ctx, "ROLE")
		if r, _ := role.([]any); err == nil && len(r) > 0 && r[0] == "master" {
			return s
		}
	}
	return nil
}

func partitionFailover(t *testing.T, exec trafikey.Executor, way failoverWay) {
	cl, c := startClusterOf(t, exec, 2)
	ctx := t.Context()
	if way == heldFailover {
		// A client that waits for a held call as long as the hold lasts,
		// rather than dropping its connection after 10 s without a reply
		// (valkey-go's default ConnWriteTimeout).
		var err error
		c, err = valkey.NewClient(valkey.ClientOption{InitAddress: cl.Addrs(), DisableCache: true, ConnWriteTimeout: 2 * time.Minute})
		require.NoError(t, err)
		t.Cleanup(c.Close)
	}
	q, err := trafikey.Open(ctx, c, "fo", &trafikey.QueueOptions{Executor: exec, Partitions: 6,
		Durability: trafikey.Durability{Replicas: 1, Timeout: 5 * time.Second}})
	require.NoError(t, err)
	require.NoError(t, q.Admin().SetRetention(ctx, trafikey.RetentionPolicy{KeepCompleted: time.Hour}))
	s, err := q.Stats(ctx)
	require.NoError(t, err)
	nodes := partitionNodes(ctx, t, cl, s)
	onFailed := map[int]bool{} // the partitions on primary 0
	for i, n := range nodes {
		if n == 0 {
			onFailed[i] = true
		}
	}
	require.Len(t, onFailed, 2, "two partitions on the primary that fails: %v", nodes)

	l := newPartLoad()
	var claimErrs claimLog
	w, err := trafikey.NewWorker(q, l.handler, trafikey.WorkerOptions{Concurrency: 16, Lease: 5 * time.Second,
		OnDone: l.onDone("worker"), Logger: claimErrs.logger()})
	require.NoError(t, err)
	stopWorker := runWorker(t, w)
	stop := make(chan struct{})
	var producers sync.WaitGroup
	for _, kind := range []jobKind{plainJobs, plainJobs, plainJobs, laneJobs} {
		l.produce(ctx, "producer", q, kind, true, stop, &producers)
	}
	require.Eventually(t, func() bool { return l.completedCount() >= 500 }, 2*eventually, tick, "the load runs")

	// Fail primary 0 over, wait until one of its replicas leads (the
	// replicas follow the primaries in order, two each) and the worker
	// completes a job of its partitions again.
	primary, replicas := cl.Primaries()[0], cl.Replicas()[:2]
	if way == heldFailover {
		// A backlog in every partition, a batch each, for the worker to go
		// on with while the failed shard's calls are held.
		for range 6 {
			jobs := make([]trafikey.JobSpec, 300)
			for i := range jobs {
				jobs[i].Payload = []byte("backlog")
			}
			ids, err := q.AddBatch(ctx, jobs)
			require.NoError(t, err)
			l.mu.Lock()
			for _, id := range ids {
				l.acked[id] = "backlog"
			}
			l.mu.Unlock()
		}
		valkeytest.Do(t, primary, "CLIENT", "PAUSE", "60000", "WRITE")
	}
	from := l.logLen()
	if way == crashFailover {
		require.NoError(t, primary.Kill())
	} else {
		valkeytest.Do(t, replicas[0], "CLUSTER", "FAILOVER")
	}
	var promoted *valkeyserver.Server
	require.Eventually(t, func() bool {
		promoted = leader(ctx, replicas...)
		return promoted != nil
	}, 30*time.Second, tick, "a replica takes over")
	leads := l.logLen()
	switched := leads // where the switch ends for the worker, in the log
	if way == heldFailover {
		// The old primary, a replica now, still holds the calls it had:
		// the worker goes on with the partitions of the other primaries.
		otherDone, otherAcked := func() int {
			l.mu.Lock()
			defer l.mu.Unlock()
			n := 0
			for _, e := range l.log {
				if e.what == "done" && !onFailed[e.part] {
					n++
				}
			}
			return n
		}, func() int {
			l.mu.Lock()
			defer l.mu.Unlock()
			n := 0
			for id := range l.acked {
				if !onFailed[partIndex(id)] {
					n++
				}
			}
			return n
		}
		done, added, heldAt := otherDone(), otherAcked(), time.Now()
		went := assert.Eventually(t, func() bool { return otherDone() >= done+300 }, 2*eventually, tick,
			"the worker goes on with the other primaries' partitions while the failed shard's calls are held")
		t.Logf("while the failed shard's calls were held (%v): %d jobs of the other primaries' partitions completed, %d adds to them acknowledged",
			time.Since(heldAt).Round(time.Millisecond), otherDone()-done, otherAcked()-added)
		if !went {
			var b strings.Builder
			pprof.Lookup("goroutine").WriteTo(&b, 1)
			t.Logf("goroutines:\n%s", b.String())
		}
		require.True(t, went)
		valkeytest.Do(t, primary, "CLIENT", "UNPAUSE")
		// The switch lasts until the held calls are let go: the old
		// primary may redirect a held CLAIM to the new one as it steps
		// down, so a job of the failed shard can complete before a
		// claim held 500 ms (claimHeld) gives way to the other partitions.
		switched = l.logLen()
	}
	back := -1
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for i := leads; i < len(l.log); i++ {
			if e := l.log[i]; e.what == "done" && onFailed[e.part] {
				back = i
				return true
			}
		}
		return false
	}, 30*time.Second, tick, "the worker completes jobs of the failed-over partitions again")
	// Meanwhile the partitions on the other primaries went on.
	l.mu.Lock()
	during := map[string]int{}
	for _, e := range l.log[from:max(back, switched)] {
		if !onFailed[e.part] {
			during[e.what]++
		}
	}
	l.mu.Unlock()
	require.Positive(t, during["run"], "jobs of the other primaries' partitions started while the shard switched")
	require.Positive(t, during["done"], "jobs of the other primaries' partitions completed while the shard switched")

	at := l.completedCount()
	require.Eventually(t, func() bool { return l.completedCount() >= at+500 }, 2*eventually, tick, "the load runs after the failover")
	close(stop)
	producers.Wait()
	// Every job added completes, those whose adds failed but were applied
	// too; a job whose completion was cut off runs again once its lease
	// expires.
	var final trafikey.Stats
	require.Eventually(t, func() bool {
		final, err = q.Stats(ctx)
		return err == nil && final.Pending+final.Active+final.Delayed+final.Waiting == 0
	}, time.Minute, tick, "the queue drains")
	require.NoError(t, stopWorker())

	l.mu.Lock()
	defer l.mu.Unlock()
	require.Empty(t, l.ackedDup, "ids returned by two adds")
	require.Empty(t, l.ranAfter, "jobs started again after their completion was confirmed")
	for id, n := range l.confirmed {
		require.Equal(t, 1, n, "job %s's completion confirmed more than once", id)
	}
	var lost []string
	for id := range l.acked {
		info, err := q.Inspect(ctx, id)
		if err != nil || info.State != trafikey.StateCompleted {
			lost = append(lost, fmt.Sprintf("%s (%v, %v)", id, info.State, err))
		}
	}
	require.Empty(t, lost, "acknowledged jobs not completed on the servers, of %d", len(l.acked))
	require.Zero(t, final.Dead)
	require.Equal(t, final.TotalAdded, final.TotalCompleted, "%+v", final)
	require.Equal(t, final.TotalCompleted, final.Retained, "each job completed once: %+v", final)
	requireConsistentParts(t, final, nodes, func(n int) *valkeyserver.Server {
		if n == 0 {
			return promoted
		}
		return cl.Primaries()[n]
	})
	up := cl.Nodes()
	if way == crashFailover {
		up = up[1:]
	}
	for _, n := range up {
		_, err := n.Do(ctx, "PING")
		require.NoError(t, err, "node %s is up", n.Addr())
	}
	reruns := 0
	for _, n := range l.runs {
		reruns += n - 1
	}
	t.Logf("%s, %s failover: %d adds acknowledged (%d refused: %v), outcomes %v, %d runs again; while the shard switched the other partitions started %d jobs and completed %d; the worker logged %d claim errors: %v",
		exec, way, len(l.acked), len(l.addErrs), firstErrs(l.addErrs, 3), l.outcomes, reruns, during["run"], during["done"], claimErrs.count(), claimErrs.first(3))
}

// firstErrs is the text of up to n errors of errs.
func firstErrs(errs []error, n int) []string {
	var out []string
	for _, err := range errs[:min(n, len(errs))] {
		out = append(out, err.Error())
	}
	return out
}

// TestPartitionACLRefusalWritesNothing gives an ACL user the keys of a
// partitioned queue's partition 0 alone (~emq:{name}:*), on both executors:
// its adds routed to partition 0 are taken, those routed to any other
// partition (spread, by unique key, by lane) are refused with NOPERM and
// leave the dataset of every node as it was, and an AddBatch spanning
// partitions keeps the jobs of the calls before the refused one and
// nothing else.
func TestPartitionACLRefusalWritesNothing(t *testing.T) {
	skipInShort(t, "ACL refusals on a partitioned queue on a cluster")
	t.Parallel()
	forEachExecutorOf(t, partitionACL)
}

// snapshotAll is the dataset of every primary of cl.
func snapshotAll(t *testing.T, cl *valkeyserver.Cluster) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, s := range cl.Primaries() {
		out = append(out, valkeytest.Snapshot(t, s, "*"))
	}
	return out
}

func requireAllUnchanged(t *testing.T, cl *valkeyserver.Cluster, before []map[string]string) {
	t.Helper()
	for i, after := range snapshotAll(t, cl) {
		valkeytest.RequireUnchanged(t, before[i], after)
	}
}

// withoutTag is snap without the keys of the partition whose hash tag is
// tag.
func withoutTag(snap map[string]string, tag string) map[string]string {
	out := map[string]string{}
	for k, v := range snap {
		if !strings.HasPrefix(k, "emq:{"+tag+"}:") {
			out[k] = v
		}
	}
	return out
}

// refusedWith checks err is a server refusal of class word class.
func refusedWith(t *testing.T, err error, class string) {
	t.Helper()
	var te *trafikey.Error
	require.True(t, errors.As(err, &te), "a server refusal: %v", err)
	require.True(t, strings.HasPrefix(te.Text, class+" "), "refused with %s: %q", class, te.Text)
}

// spanningBatch is a batch of jobs with unique keys and lanes routed, in
// order of first use, to partitions first, then refused, then after (and
// first again), over keyed partitions, with where each job should land.
func spanningBatch(prefix string, first, refused, after, keyed int) ([]trafikey.JobSpec, []int) {
	var jobs []trafikey.JobSpec
	var want []int
	add := func(part int, o trafikey.JobOptions) {
		jobs = append(jobs, trafikey.JobSpec{Payload: []byte("batch"), Options: o})
		want = append(want, part)
	}
	add(first, trafikey.JobOptions{UniqueKey: keyFor(prefix+"a", first, keyed), UniqueTTL: time.Hour})
	add(first, trafikey.JobOptions{Lane: keyFor(prefix+"lane", first, keyed)})
	add(refused, trafikey.JobOptions{UniqueKey: keyFor(prefix+"b", refused, keyed), UniqueTTL: time.Hour})
	add(after, trafikey.JobOptions{UniqueKey: keyFor(prefix+"c", after, keyed), UniqueTTL: time.Hour})
	add(first, trafikey.JobOptions{UniqueKey: keyFor(prefix+"d", first, keyed), UniqueTTL: time.Hour})
	add(refused, trafikey.JobOptions{Lane: keyFor(prefix+"lane", refused, keyed)})
	return jobs, want
}

// requireBatchPrefix checks the result of a refused AddBatch made with
// spanningBatch: the jobs routed to partition first have ids there and are
// pending, the others none; the dataset of every node is unchanged but for
// partition first's keys (its tag firstTag), which gained those jobs and
// nothing else: its counters count them, and it is consistent.
func requireBatchPrefix(t *testing.T, cl *valkeyserver.Cluster, admin *trafikey.Queue, before []map[string]string, beforeFirst trafikey.Stats,
	ids []string, want []int, first int, firstTag string) {
	t.Helper()
	ctx := t.Context()
	require.Len(t, ids, len(want))
	added := 0
	for i, id := range ids {
		if want[i] != first {
			require.Empty(t, id, "job %d, routed to partition %d, after the refused call", i, want[i])
			continue
		}
		require.NotEmpty(t, id, "job %d, in the call before the refused one", i)
		require.Equal(t, first, partIndex(id), "job %d's partition", i)
		info, err := admin.Inspect(ctx, id)
		require.NoError(t, err)
		require.Equal(t, trafikey.StatePending, info.State)
		added++
	}
	for i, after := range snapshotAll(t, cl) {
		valkeytest.RequireUnchanged(t, withoutTag(before[i], firstTag), withoutTag(after, firstTag))
	}
	s, err := admin.Stats(ctx)
	require.NoError(t, err)
	got := s.Partitions[first]
	require.Equal(t, beforeFirst.TotalAdded+added, got.TotalAdded, "partition %d counts the jobs of its call alone", first)
	require.Equal(t, beforeFirst.Pending+added, got.Pending, "partition %d holds the jobs of its call alone", first)
	requireConsistentParts(t, s, partitionNodes(ctx, t, cl, s), primaryOf(cl))
}

// startClusterWith starts three primaries with base's options on each (and
// the module for the native executor), and a cluster client of the default
// user.
func startClusterWith(t *testing.T, exec trafikey.Executor, base valkeyserver.Options) (*valkeyserver.Cluster, valkey.Client) {
	if exec == trafikey.ExecutorNative {
		base.Module = valkeytest.ModulePath(t)
	}
	cl := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 3, Base: base})
	c := valkeytest.ClusterClient(t, cl)
	if exec == trafikey.ExecutorNative {
		valkeytest.RequireVerbs(t, c)
	}
	return cl, c
}

func partitionACL(t *testing.T, exec trafikey.Executor) {
	const name, parts = "acl", 6
	cl, c := startClusterWith(t, exec, valkeyserver.Options{Users: []string{
		"p0 on >pw ~emq:{" + name + "}:* +@all",
	}})
	ctx := t.Context()
	admin, err := trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Executor: exec, Partitions: parts})
	require.NoError(t, err)
	for range 3 * parts {
		_, err := admin.Add(ctx, []byte("before"), nil)
		require.NoError(t, err)
	}
	uc, err := valkey.NewClient(valkey.ClientOption{InitAddress: cl.Addrs(), Username: "p0", Password: "pw", DisableCache: true})
	require.NoError(t, err)
	t.Cleanup(uc.Close)
	// The user may read the partitions hash, not install the partitions:
	// opened so, the queue is refused at partition 1, with nothing written.
	before := snapshotAll(t, cl)
	_, err = trafikey.Open(ctx, uc, name, &trafikey.QueueOptions{Executor: exec})
	refusedWith(t, err, "NOPERM")
	requireAllUnchanged(t, cl, before)
	q, err := trafikey.Open(ctx, uc, name, &trafikey.QueueOptions{Executor: exec, NoInstall: true})
	require.NoError(t, err)

	// Adds one at a time go to the partitions in turn: partition 0's are
	// taken, the others refused with nothing written anywhere.
	taken, refused := 0, 0
	for range 2 * parts {
		before := snapshotAll(t, cl)
		id, err := q.Add(ctx, []byte("spread"), nil)
		if err != nil {
			refusedWith(t, err, "NOPERM")
			requireAllUnchanged(t, cl, before)
			refused++
			continue
		}
		require.Equal(t, 0, partIndex(id), "job %s taken", id)
		taken++
	}
	require.Equal(t, 2, taken, "partition 0's turns")
	require.Equal(t, 2*(parts-1), refused, "the other partitions' turns")

	// A unique key or a lane routed to another partition is refused, with
	// nothing written; routed to partition 0 it is taken.
	for p := range parts {
		key := keyFor("user-key", p, parts)
		lane := keyFor("user-lane", p, parts)
		for _, o := range []*trafikey.JobOptions{{UniqueKey: key, UniqueTTL: time.Hour}, {Lane: lane}} {
			before := snapshotAll(t, cl)
			id, err := q.Add(ctx, []byte("routed"), o)
			if p == 0 {
				require.NoError(t, err)
				require.Equal(t, 0, partIndex(id))
				continue
			}
			refusedWith(t, err, "NOPERM")
			requireAllUnchanged(t, cl, before)
		}
	}

	// A batch over partitions 0, 4 and 2: the call to partition 0 is made
	// and kept, the call to partition 4 refused, and none to partition 2.
	s, err := admin.Stats(ctx)
	require.NoError(t, err)
	before = snapshotAll(t, cl)
	jobs, want := spanningBatch("acl-batch", 0, 4, 2, parts)
	ids, err := q.AddBatch(ctx, jobs)
	refusedWith(t, err, "NOPERM")
	requireBatchPrefix(t, cl, admin, before, s.Partitions[0], ids, want, 0, name)
}

// TestPartitionOOMRefusalWritesNothing runs a partitioned queue on a
// three-primary cluster, one primary at maxmemory, on both executors: an
// AddBatch whose jobs span partitions on the three primaries keeps the jobs
// of its calls before the one refused with OOM, makes no call after it,
// and writes nothing else.
func TestPartitionOOMRefusalWritesNothing(t *testing.T) {
	skipInShort(t, "maxmemory refusals on a partitioned queue on a cluster")
	t.Parallel()
	forEachExecutorOf(t, partitionOOM)
}

func partitionOOM(t *testing.T, exec trafikey.Executor) {
	const name, parts = "oom", 6
	cl, c := startClusterOf(t, exec, 0)
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Executor: exec, Partitions: parts})
	require.NoError(t, err)
	for range 3 * parts {
		_, err := q.Add(ctx, []byte("before"), nil)
		require.NoError(t, err)
	}
	s, err := q.Stats(ctx)
	require.NoError(t, err)
	nodes := partitionNodes(ctx, t, cl, s)
	// one partition on each primary, the refused one's primary at maxmemory
	byNode := map[int]int{}
	for i := parts - 1; i >= 0; i-- {
		byNode[nodes[i]] = i
	}
	require.Len(t, byNode, 3, "partitions on every primary: %v", nodes)
	first, refused, after := byNode[nodes[0]], -1, -1
	for n, p := range byNode {
		switch {
		case n == nodes[first]:
		case refused < 0:
			refused = p
		default:
			after = p
		}
	}
	full := cl.Primaries()[nodes[refused]]
	jobs, want := spanningBatch("oom-batch", first, refused, after, parts)

	before := snapshotAll(t, cl)
	valkeytest.Do(t, full, "CONFIG", "SET", "maxmemory", "1")
	ids, err := q.AddBatch(ctx, jobs)
	valkeytest.Do(t, full, "CONFIG", "SET", "maxmemory", "0")
	refusedWith(t, err, "OOM")
	requireBatchPrefix(t, cl, q, before, s.Partitions[first], ids, want, first, s.Partitions[first].Partition)

	// With memory again, the same batch is taken whole, each job where it
	// was routed (the keys the first call holds refuse it: they are
	// released first).
	for i, id := range ids {
		if id != "" {
			require.NoError(t, q.Admin().Remove(ctx, id), "job %d", i)
		}
	}
	ids, err = q.AddBatch(ctx, jobs)
	require.NoError(t, err)
	for i, id := range ids {
		require.Equal(t, want[i], partIndex(id), "job %d's partition", i)
	}
	s, err = q.Stats(ctx)
	require.NoError(t, err)
	requireConsistentParts(t, s, partitionNodes(ctx, t, cl, s), primaryOf(cl))
}

// claimLog counts the errors a worker logs about its claims.
type claimLog struct {
	mu   sync.Mutex
	errs []string
}

func (c *claimLog) logger() *slog.Logger {
	return slog.New(&claimLogHandler{c})
}

func (c *claimLog) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.errs)
}

func (c *claimLog) first(n int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errs[:min(n, len(c.errs))]...)
}

// claimLogHandler keeps the records of failed claims; it drops the others.
type claimLogHandler struct{ c *claimLog }

func (h *claimLogHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *claimLogHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "trafikey: claim" {
		return nil
	}
	text := r.Message
	r.Attrs(func(a slog.Attr) bool {
		text += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	})
	h.c.mu.Lock()
	h.c.errs = append(h.c.errs, text)
	h.c.mu.Unlock()
	return nil
}

func (h *claimLogHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *claimLogHandler) WithGroup(string) slog.Handler      { return h }
