package trafikey_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// reshardLoad is a queue under load in a cluster: producers adding to two
// queues, a worker of the moving queue alone and a worker of both, every
// job's handler runs counted by id.
type reshardLoad struct {
	mu       sync.Mutex
	acked    map[string]bool // queue/id of each job whose Add returned
	runs     map[string]int  // by queue/id
	outcomes map[trafikey.Outcome]int
	addErrs  []error
	done     atomic.Int64
}

func (l *reshardLoad) handler(_ context.Context, j *trafikey.Job) error {
	l.mu.Lock()
	l.runs[j.Queue().Name()+"/"+j.ID]++
	l.mu.Unlock()
	time.Sleep(time.Millisecond) // a job's work, far within the lease
	return nil
}

func (l *reshardLoad) onDone(_ *trafikey.Job, o trafikey.Outcome, _ error) {
	l.mu.Lock()
	l.outcomes[o]++
	l.mu.Unlock()
	l.done.Add(1)
}

// produce adds jobs to q one by one until stop is closed; every Add must
// return an id, as a refusal for a moving slot is retried by the client.
func (l *reshardLoad) produce(ctx context.Context, q *trafikey.Queue, stop <-chan struct{}, wg *sync.WaitGroup) {
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			id, err := q.Add(ctx, []byte("load"), nil)
			l.mu.Lock()
			if err != nil {
				l.addErrs = append(l.addErrs, err)
			} else {
				l.acked[q.Name()+"/"+id] = true
			}
			l.mu.Unlock()
			if err != nil {
				return
			}
		}
	})
}

// TestReshardUnderLoad moves the slot of a queue under load to another
// primary: producers add throughout, a worker of the queue and a worker of
// it and a queue on a third primary run throughout, with leases long
// enough that none legitimately expires. Nothing is lost, no job runs
// twice, every Add returns an id, every outcome is reported, and the
// workers go on on the new owner, idle ones blocked there and none left
// blocked on the old one. The classic move (SETSLOT MIGRATING/IMPORTING,
// MIGRATE, SETSLOT NODE) runs on every server version and both
// executors; the client meets TRYAGAIN while it lasts and retries it.
// Atomic slot migration (CLUSTER MIGRATESLOTS) runs on Valkey 9.0+.
func TestReshardUnderLoad(t *testing.T) {
	skipInShort(t, "slot migrations under load")
	t.Parallel()
	forEachMove(t, reshardUnderLoad)
}

// forEachMove runs move on both executors for each way of moving a slot:
// classic, and atomic (the module declares atomic slot migration support on
// 9.x; without it, Valkey 9 refuses CLUSTER MIGRATESLOTS on a node that
// loaded it).
func forEachMove(t *testing.T, move func(t *testing.T, exec trafikey.Executor, atomic bool)) {
	for _, atomic := range []bool{false, true} {
		way := "classic"
		if atomic {
			way = "atomic"
		}
		for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
			t.Run(way+"/"+string(exec), func(t *testing.T) {
				t.Parallel()
				move(t, exec, atomic)
			})
		}
	}
}

// startMoveCluster starts a move's cluster of three primaries; an atomic
// move skips on a server without one (before Valkey 9.0).
func startMoveCluster(t *testing.T, exec trafikey.Executor, atomicMove bool) (*valkeyserver.Cluster, valkey.Client) {
	cl, c := startClusterOf(t, exec, 0)
	if atomicMove {
		v, err := cl.Primaries()[0].Version(t.Context())
		require.NoError(t, err)
		if !v.AtLeast("valkey", 9, 0) {
			t.Skipf("%s has no atomic slot migration (CLUSTER MIGRATESLOTS, Valkey 9.0+); the classic move is tested on it", v)
		}
	}
	return cl, c
}

// moveSlot moves slot from one primary to another: atomically (CLUSTER
// MIGRATESLOTS), or the classic way, MIGRATE taking batch keys a call.
func moveSlot(ctx context.Context, t *testing.T, cl *valkeyserver.Cluster, slot int, from, to *valkeyserver.Server, atomicMove bool, batch int) {
	t.Helper()
	if atomicMove {
		require.NoError(t, cl.MigrateSlotAtomic(ctx, slot, from, to))
		return
	}
	m, err := cl.MigrateSlot(ctx, slot, from, to, batch)
	require.NoError(t, err)
	t.Logf("moved %d keys in %d MIGRATE calls; TRYAGAIN window %v", m.Keys, m.Batches, m.Window)
}

func reshardUnderLoad(t *testing.T, exec trafikey.Executor, atomicMove bool) {
	cl, c := startMoveCluster(t, exec, atomicMove)
	ctx := t.Context()
	primaries := cl.Primaries()
	from, to := primaries[0], primaries[1]
	movingName, slot := queueOn(t, cl, "moving", 0)
	stillName, _ := queueOn(t, cl, "still", 2)
	open := func(name string) *trafikey.Queue {
		q, err := trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Executor: exec})
		require.NoError(t, err)
		return q
	}
	moving, still := open(movingName), open(stillName)
	// Keys to move: a backlog of pending jobs, each a row of its own.
	addN(t, moving, 2000)

	l := &reshardLoad{acked: map[string]bool{}, runs: map[string]int{}, outcomes: map[trafikey.Outcome]int{}}
	opts := trafikey.WorkerOptions{Concurrency: 8, Lease: time.Minute, OnDone: l.onDone}
	alone, err := trafikey.NewWorker(moving, l.handler, opts)
	require.NoError(t, err)
	both, err := trafikey.NewWorkerForQueues([]trafikey.QueueWeight{{Queue: moving, Weight: 1}, {Queue: still, Weight: 1}}, l.handler, opts)
	require.NoError(t, err)
	stopAlone, stopBoth := runWorker(t, alone), runWorker(t, both)

	stop := make(chan struct{})
	var producers sync.WaitGroup
	for range 2 {
		l.produce(ctx, moving, stop, &producers)
	}
	l.produce(ctx, still, stop, &producers)
	require.Eventually(t, func() bool { return l.done.Load() >= 500 }, eventually, tick, "the load runs")

	toID, err := valkeyserver.NodeID(ctx, to)
	require.NoError(t, err)
	mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	moveSlot(mctx, t, cl, slot, from, to, atomicMove, 10)
	for _, s := range primaries {
		owner, err := valkeyserver.SlotOwner(ctx, s, slot)
		require.NoError(t, err)
		require.Equal(t, toID, owner)
	}
	require.Zero(t, valkeytest.Do(t, from, "CLUSTER", "COUNTKEYSINSLOT", fmt.Sprint(slot)), "no key left behind")

	// The load goes on after the move.
	after := l.done.Load()
	require.Eventually(t, func() bool { return l.done.Load() >= after+500 }, eventually, tick, "the load runs on the new owner")
	close(stop)
	producers.Wait()
	l.mu.Lock()
	require.Empty(t, l.addErrs, "every Add returned an id")
	want := len(l.acked)
	l.mu.Unlock()
	require.Eventually(t, func() bool {
		ms, err1 := moving.Stats(ctx)
		ss, err2 := still.Stats(ctx)
		return err1 == nil && err2 == nil && ms.TotalCompleted+ss.TotalCompleted == want+2000
	}, eventually, tick, "every job added completes")

	// Idle now: the workers wait on the moving queue's new owner, and no
	// claim is left blocked on the old one.
	require.Eventually(t, func() bool {
		return blockedOn(t, to, "blpop")+blockedOn(t, to, "emq.claim") >= 1 &&
			blockedOn(t, from, "blpop")+blockedOn(t, from, "emq.claim") == 0
	}, eventually, tick, "idle workers blocked on the new owner only")
	require.NoError(t, stopAlone())
	require.NoError(t, stopBoth())

	l.mu.Lock()
	defer l.mu.Unlock()
	require.Equal(t, want+2000, len(l.runs), "every job ran")
	var twice []string
	for id, n := range l.runs {
		if n > 1 {
			twice = append(twice, id)
		}
	}
	require.Empty(t, twice, "jobs run more than once (of %d)", len(l.runs))
	require.Equal(t, map[trafikey.Outcome]int{trafikey.OutcomeCompleted: want + 2000}, l.outcomes, "every outcome reported")
	for _, q := range []*trafikey.Queue{moving, still} {
		s, err := q.Stats(ctx)
		require.NoError(t, err)
		require.Zero(t, s.TotalRecovered+s.Pending+s.Active+s.Delayed+s.Dead, "queue %s: %+v", q.Name(), s)
		require.Equal(t, s.TotalAdded, s.TotalCompleted, "queue %s: no Add counted twice", q.Name())
	}
	valkeytest.RequireConsistentQueue(t, to, movingName)
	// The servers count the TRYAGAIN replies they sent; the clients
	// retried each, as every call above returned.
	tryAgain := errorCount(t, from, "TRYAGAIN") + errorCount(t, to, "TRYAGAIN")
	if !atomicMove {
		require.Positive(t, tryAgain, "the classic move refused calls with TRYAGAIN")
	}
	t.Logf("%s: %d jobs each run once; %d TRYAGAIN replies retried", movingName, want+2000, tryAgain)
}

// errorCount is how many error replies of class s has sent (INFO
// errorstats).
func errorCount(t *testing.T, s *valkeyserver.Server, class string) int {
	t.Helper()
	info, err := s.Info(t.Context(), "errorstats")
	require.NoError(t, err)
	v := valkeyserver.InfoField(info, "errorstat_"+class)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimPrefix(v, "count="))
	require.NoError(t, err, v)
	return n
}

// TestReshardDurableCalls moves the slot of a queue whose calls wait for
// the AOF (QueueOptions.Durability): such a call runs on a dedicated connection of
// the node the client's slot map names, which valkey-go does not redirect.
// A producer adding durably throughout the move has every Add acknowledged,
// and after the move, with the client's slot map still naming the old
// owner, a durable Add and a durable Complete land on the new one: the
// MOVED, the ASK and the TRYAGAIN they meet are tried again.
func TestReshardDurableCalls(t *testing.T) {
	skipInShort(t, "slot migrations in a cluster")
	t.Parallel()
	for _, exec := range []trafikey.Executor{trafikey.ExecutorLua, trafikey.ExecutorNative} {
		t.Run(string(exec), func(t *testing.T) {
			t.Parallel()
			base := valkeyserver.Options{AOF: true}
			if exec == trafikey.ExecutorNative {
				base.Module = valkeytest.ModulePath(t)
			}
			cl := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 3, Base: base})
			c := valkeytest.ClusterClient(t, cl)
			ctx := t.Context()
			from, to := cl.Primaries()[0], cl.Primaries()[1]
			name, slot := queueOn(t, cl, "durable", 0)
			q, err := trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Executor: exec,
				Durability: trafikey.Durability{AOF: true}})
			require.NoError(t, err)
			addN(t, q, 500)
			held, err := q.Claim(ctx, time.Minute, 1)
			require.NoError(t, err)
			require.Len(t, held, 1)

			l := &reshardLoad{acked: map[string]bool{}}
			stop := make(chan struct{})
			var producers sync.WaitGroup
			l.produce(ctx, q, stop, &producers)
			require.Eventually(t, func() bool {
				l.mu.Lock()
				defer l.mu.Unlock()
				return len(l.acked) >= 50
			}, eventually, tick)
			_, err = cl.MigrateSlot(ctx, slot, from, to, 10)
			require.NoError(t, err)
			close(stop)
			producers.Wait()
			require.Empty(t, l.addErrs, "every durable Add during the move was acknowledged")

			_, err = q.Add(ctx, []byte("after the move"), nil)
			require.NoError(t, err)
			require.NoError(t, held[0].Complete(ctx))
			s, err := q.Stats(ctx)
			require.NoError(t, err)
			require.EqualValues(t, 500+len(l.acked)+1, s.TotalAdded)
			require.EqualValues(t, 1, s.TotalCompleted)
			valkeytest.RequireConsistentQueue(t, to, name)
			t.Logf("%d durable adds during the move; the old owner answered %d MOVED, %d ASK, %d TRYAGAIN",
				len(l.acked), errorCount(t, from, "MOVED"), errorCount(t, from, "ASK"), errorCount(t, from, "TRYAGAIN"))
		})
	}
}

// TestReshardReleasesBlockedClaims moves the slot of a queue whose idle
// workers are blocked on its old owner, with an hour's poll interval: a
// worker of the queue alone (in CLAIM with a block time on the native
// executor, in BLPOP on Lua) and a worker of it and a queue on a third
// primary (one BLPOP per slot). The old owner releases them when the slot
// leaves (MOVED), the client sends them again to the new owner, and a job
// added there is processed at once; nothing stays blocked on the old owner.
func TestReshardReleasesBlockedClaims(t *testing.T) {
	skipInShort(t, "slot migrations in a cluster")
	t.Parallel()
	forEachMove(t, reshardBlocked)
}

func reshardBlocked(t *testing.T, exec trafikey.Executor, atomicMove bool) {
	cl, c := startMoveCluster(t, exec, atomicMove)
	ctx := t.Context()
	primaries := cl.Primaries()
	from, to, other := primaries[0], primaries[1], primaries[2]
	movingName, slot := queueOn(t, cl, "blocked", 0)
	stillName, _ := queueOn(t, cl, "still", 2)
	moving, err := trafikey.Open(ctx, c, movingName, &trafikey.QueueOptions{Executor: exec})
	require.NoError(t, err)
	still, err := trafikey.Open(ctx, c, stillName, &trafikey.QueueOptions{Executor: exec})
	require.NoError(t, err)

	var d doneCounter
	opts := trafikey.WorkerOptions{Concurrency: 2, PollInterval: time.Hour, OnDone: d.onDone}
	h := func(context.Context, *trafikey.Job) error { return nil }
	alone, err := trafikey.NewWorker(moving, h, opts)
	require.NoError(t, err)
	both, err := trafikey.NewWorkerForQueues([]trafikey.QueueWeight{{Queue: moving, Weight: 1}, {Queue: still, Weight: 1}}, h, opts)
	require.NoError(t, err)
	stopAlone, stopBoth := runWorker(t, alone), runWorker(t, both)
	blocked := func(s *valkeyserver.Server) int { return blockedOn(t, s, "blpop") + blockedOn(t, s, "emq.claim") }
	require.Eventually(t, func() bool { return blocked(from) >= 2 && blocked(other) >= 1 }, eventually, tick,
		"both workers idle on the queue's owner")

	moveSlot(ctx, t, cl, slot, from, to, atomicMove, 100)
	require.Eventually(t, func() bool { return blocked(from) == 0 && blocked(to) >= 2 }, eventually, tick,
		"the blocked claims move to the new owner")
	for i, q := range []*trafikey.Queue{moving, still, moving} {
		_, err := q.Add(ctx, []byte("wake"), nil)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return d.total() == i+1 }, eventually, tick, "the job on %s is processed", q.Name())
	}
	require.NoError(t, stopAlone())
	require.NoError(t, stopBoth())
}

// TestReshardCancelNotice moves the slot of a queue while its worker runs
// a job, with a lease of an hour, so no heartbeat runs. The old owner ends
// the worker's subscription to the queue's cancels channel when the slot
// leaves it; the worker subscribes again on the new owner, and a cancel
// there reaches the handler's context by its notice. Stopped, the worker
// unsubscribes on the new owner.
func TestReshardCancelNotice(t *testing.T) {
	skipInShort(t, "slot migrations in a cluster")
	t.Parallel()
	forEachMove(t, reshardCancelNotice)
}

func reshardCancelNotice(t *testing.T, exec trafikey.Executor, atomicMove bool) {
	cl, c := startMoveCluster(t, exec, atomicMove)
	ctx := t.Context()
	primaries := cl.Primaries()
	from, to := primaries[0], primaries[1]
	name, slot := queueOn(t, cl, "cancelmove", 0)
	q, err := trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Executor: exec})
	require.NoError(t, err)
	channel := protocol.KeysOf(name).Cancels()
	subscribed := func(onFrom, onTo int) func() bool {
		return func() bool {
			return shardSubscribers(t, from, channel) == onFrom && shardSubscribers(t, to, channel) == onTo
		}
	}

	started := make(chan *trafikey.Job, 1)
	causes := make(chan error, 1)
	outcomes := make(chan trafikey.Outcome, 1)
	w, err := trafikey.NewWorker(q, func(ctx context.Context, j *trafikey.Job) error {
		started <- j
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}, trafikey.WorkerOptions{Concurrency: 1, Lease: time.Hour,
		OnDone: func(_ *trafikey.Job, o trafikey.Outcome, _ error) { outcomes <- o }})
	require.NoError(t, err)
	stop := runWorker(t, w)
	_, err = q.Add(ctx, []byte("long"), nil)
	require.NoError(t, err)
	var j *trafikey.Job
	select {
	case j = <-started:
	case <-time.After(eventually):
		t.Fatal("the job did not start")
	}
	require.True(t, subscribed(1, 0)(), "the worker is subscribed on the queue's owner")

	moveSlot(ctx, t, cl, slot, from, to, atomicMove, 10)
	require.Eventually(t, subscribed(0, 1), eventually, tick, "the worker subscribes again on the new owner")

	require.NoError(t, q.Cancel(ctx, j.ID))
	requireCancelled(t, causes, "the handler was not cancelled after the move")
	require.Equal(t, trafikey.OutcomeCancelled, <-outcomes)
	require.NoError(t, stop())
	require.Eventually(t, subscribed(0, 0), eventually, tick, "the stopped worker unsubscribes on the new owner")
	require.Equal(t, 1, w.Info().Cancelled)
	s, err := q.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, s.TotalCancelled)
}
