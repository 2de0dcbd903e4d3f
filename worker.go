package trafikey

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Worker defaults, used for zero WorkerOptions fields.
const (
	// defaultConcurrency is the number of handlers run at once.
	defaultConcurrency = 10
	// minWorkerLease is the shortest lease a Worker takes: its heartbeat,
	// a call every lease/3, renews a shorter one too late under any load.
	minWorkerLease = 100 * time.Millisecond
	// defaultLease is how long a claim holds a job without a heartbeat.
	defaultLease = 30 * time.Second
	// defaultShutdownTimeout is how long Run waits for running handlers.
	defaultShutdownTimeout = 10 * time.Second
	// defaultPollInterval is the longest idle sleep without a signal.
	defaultPollInterval = time.Second
	// defaultPromoteEvery is the period of moving due delayed jobs to
	// pending.
	defaultPromoteEvery = 500 * time.Millisecond
	// defaultRecoverEvery is the period of taking back expired leases.
	defaultRecoverEvery = 5 * time.Second
	// defaultScheduleEvery is the period of the schedule step.
	defaultScheduleEvery = 500 * time.Millisecond
	// defaultClaimLoops is the number of claim loops a worker runs (fewer
	// when its concurrency is lower).
	defaultClaimLoops = 2
	// defaultReportTimeout is how long a finished job's outcome is retried
	// through an outage.
	defaultReportTimeout = 2 * time.Minute
)

// callTimeout bounds one CLAIM, which runs to its end even when Run's
// context ends (a claim abandoned in flight could have been executed).
const callTimeout = 30 * time.Second

// maxBlock is the longest block time a CLAIM takes (protocol.MaxBlockMS):
// a longer poll interval is waited in claims of this length.
const maxBlock = protocol.MaxBlockMS * time.Millisecond

// reportRetryMax is the longest wait between two tries of a report: short,
// so a report reaches a server that is back before another worker's
// RECOVER could take the job.
const reportRetryMax = 500 * time.Millisecond

// WorkerOptions configure a Worker. Zero fields take the defaults.
type WorkerOptions struct {
	// Concurrency is how many handlers run at once (default 10).
	Concurrency int
	// Lease is how long the server holds a claimed job for this worker
	// before another may take it (default 30 s, at least 100 ms). Heartbeats renew it while
	// the handler runs.
	Lease time.Duration
	// HeartbeatEvery is the period of the lease heartbeat (default Lease/3,
	// at most Lease/2).
	HeartbeatEvery time.Duration
	// ShutdownTimeout is how long Run waits for running handlers after its
	// context ends (default 10 s). Handlers still running then have their
	// context cancelled and their jobs are left to lease recovery. A
	// negative value does not wait at all.
	ShutdownTimeout time.Duration
	// PollInterval is the longest an idle worker sleeps before it tries to
	// claim again without being signalled (default 1 s). Idle workers are
	// woken by the queue's signal as soon as a job is pending, so this only
	// bounds the wait after a missed signal. On the native executor a
	// worker of one queue waits in CLAIM itself, with this as its block
	// time (at most a day a call).
	PollInterval time.Duration
	// PromoteEvery is the period of moving due delayed jobs and retries to
	// pending (default 500 ms). It bounds how late a delayed job starts. A
	// negative value leaves promotion to another process.
	PromoteEvery time.Duration
	// RecoverEvery is the period of taking back jobs whose lease expired,
	// and of trimming the finished jobs the retention policy no longer
	// keeps (default 5 s). A negative value leaves both to another process.
	RecoverEvery time.Duration
	// ScheduleEvery is the period of the schedule step, which enqueues the
	// due occurrences of the queues' schedules (default 500 ms). It bounds
	// how late an occurrence's job is added. Every worker runs it; each
	// occurrence is enqueued once however many do. A negative value leaves
	// the schedules to other workers (or to Admin.Maintain).
	ScheduleEvery time.Duration
	// Timeout bounds each handler run (0: no bound); a job added with its
	// own Timeout takes that one instead. At the deadline the
	// handler's context ends (context.Cause is ErrTimeout) and the attempt
	// is failed with an error matching ErrTimeout, retried like any other
	// failure, without waiting for the handler: one that ignores its
	// context goes on in the background, its result unused, and a
	// Complete it makes is refused (the job is no longer active).
	Timeout time.Duration
	// Middleware wraps the handler, the first outermost (LogJobs, or your
	// own). A panic of the handler reaches them as its failure, a
	// *PanicError; the Worker recovers a middleware's own panic too.
	Middleware []Middleware
	// StrictPriority makes a worker over several queues (NewWorkerForQueues)
	// claim from the first queue in its list that has jobs, instead of by
	// weight: a later queue runs only while the earlier ones are empty.
	StrictPriority bool
	// ReportTimeout is how long the outcome of a job whose handler returned
	// is retried while the server cannot be reached or pauses writes,
	// counted from the handler's return (default 2 min). The job stays
	// among the running ones meanwhile, so the heartbeat keeps its lease
	// as soon as the server answers, and a job whose handler returned is
	// not run again after a short outage. Past it the job is left to lease
	// recovery (OutcomeUnreported).
	ReportTimeout time.Duration
	// Logger receives the worker's errors (default slog.Default()). A
	// failure that repeats (an outage) is logged at most once a second per
	// kind, with the count of those left out.
	Logger *slog.Logger
	// OnDone, when set, is called after each job's outcome is known, from
	// the goroutine that ran it; err is the handler's error, or the error
	// that kept the outcome from being reported. It must be safe for
	// concurrent use and quick. For jobs abandoned at shutdown it may be
	// called after Run has returned.
	OnDone func(job *Job, outcome Outcome, err error)

	// claimLoops is how many loops claim jobs for the handler slots
	// (default 2, or 1 at concurrency 1; at most Concurrency). Each asks
	// for as many jobs as there are free slots when it claims, so together
	// they never hold more than Concurrency jobs; the next loop gathers the
	// slots freed while a CLAIM is on the wire (docs/BENCHMARKS.md, "The
	// worker at concurrency 100"). Tests and benchmarks set it.
	claimLoops int
	// registerEvery is the period of the worker's registration (0: the
	// default, registerEvery); tests shorten it to see a record renewed.
	registerEvery time.Duration
	// refreshEvery, set by tests, replaces the period of the worker's reads
	// of its queues' partitions (Worker.refreshEvery).
	refreshEvery time.Duration
}

// Outcome is what became of a job a worker ran, named as the metrics and
// logs name it.
type Outcome string

// Outcomes.
const (
	// OutcomeCompleted: the handler returned nil and the server completed
	// the job.
	OutcomeCompleted Outcome = "completed"
	// OutcomeRetrying: the handler failed and the job will run again.
	OutcomeRetrying Outcome = "retrying"
	// OutcomeDead: the handler failed and the job was dead-lettered.
	OutcomeDead Outcome = "dead"
	// OutcomeLeaseLost: the server no longer held the claim (ErrLeaseLost,
	// or the job is gone), so the outcome was not recorded.
	OutcomeLeaseLost Outcome = "lost"
	// OutcomeAbandoned: the handler was still running, or failed because
	// it was cancelled, when the shutdown timeout passed; the job is left
	// to lease recovery.
	OutcomeAbandoned Outcome = "abandoned"
	// OutcomeUnreported: the server could not be told (a transport error);
	// the job is left to lease recovery.
	OutcomeUnreported Outcome = "unreported"
	// OutcomeCancelled: Queue.Cancel ended the job while its handler ran;
	// the handler's context was cancelled with cause ErrCancelled and its
	// outcome was not recorded (the job is dead, err "cancelled").
	OutcomeCancelled Outcome = "cancelled"
)

// Worker runs a Handler over the jobs of one queue: claim loops
// (two by default) claim jobs in batches as handler slots free up, goroutines
// that live for the run each run job after job, their completions share
// COMPLETEMANY calls, a heartbeat extends the leases of running jobs, a
// subscription per queue to the queue's cancel notices stops the handler of
// a job Queue.Cancel ended at once, and timers promote delayed jobs and
// recover expired leases.
type Worker struct {
	// given is the queues as NewWorkerForQueues was given them; set what
	// the worker claims from, partitioned queues' partitions in their
	// place, replaced when such a queue grows.
	given   []QueueWeight
	set     atomic.Pointer[queueSet]
	handler Handler
	opts    WorkerOptions
	log     *throttledLog

	running atomic.Bool
	// host is the worker's host name; id names the worker in its queues'
	// registries; started is when Run started, nil before.
	host    string
	id      string
	started atomic.Pointer[time.Time]
	// stopRun ends the running Run with its cause.
	stopRun context.CancelCauseFunc
	// changed wakes the registration when the jobs in hand change.
	changed chan struct{}

	processed, failed, retried, dead, lost, abandoned, cancelled atomic.Int64

	mu   sync.Mutex
	jobs map[*runningJob]struct{}
	// waited counts the jobs started whose wait is known, per logical
	// queue, by WorkerInfo.Waited's buckets.
	waited map[*Queue]*[waitBuckets]int

	// parts is what the claims know of the partitions of the worker's
	// partitioned queues.
	parts partitionMarks
	// waits are the idle waits on several signal lists (signalWaits).
	waits signalWaits
}

// runningJob is a job whose handler is running.
type runningJob struct {
	job    *Job
	cancel context.CancelCauseFunc
	// completion is the job's place in its completer's queue, and done
	// the channel that answers it (its goroutine's, reused job after job).
	completion completion
	done       chan error
	release    func() // frees the job's handler slot
	// renewed is when the lease was last granted (the send time of the
	// CLAIM or EXTEND that granted it), by this process's clock.
	renewed atomic.Int64
	lost    atomic.Bool
	// cancelled is set when the job's cancel notice or a heartbeat found
	// the job cancelled (Queue.Cancel; jobCancelled); lost is set with it,
	// as the claim is gone too.
	cancelled atomic.Bool
}

// NewWorker returns a worker that runs handler over q's jobs. It checks the
// options; Run starts it.
func NewWorker(q *Queue, handler Handler, opts WorkerOptions) (*Worker, error) {
	if q == nil {
		return nil, invalid("new worker", "queue and handler are required")
	}
	return NewWorkerForQueues([]QueueWeight{{Queue: q, Weight: 1}}, handler, opts)
}

// QueueWeight is one queue of a worker over several, with its share of the
// worker's claims.
type QueueWeight struct {
	Queue *Queue
	// Weight is the queue's share of the claims (1..1000): with weights 3
	// and 1, three claims in four go to the first queue while both have
	// jobs. With WorkerOptions.StrictPriority it is ignored.
	Weight int
}

// NewWorkerForQueues returns a worker that runs handler over the jobs of
// several queues, sharing its concurrency. Each claim goes to a queue drawn
// by weight (or, with StrictPriority, to the first queue in the list that
// has jobs); when the drawn queue is empty the others are tried in turn, so
// no slot idles while any queue has work. Every queue's delayed jobs and
// expired leases are looked after as NewWorker's are. Idle, it waits on
// every queue's signal at once, with one BLPOP (and one connection) per
// client among the queues, and on a cluster client per hash slot, on the
// slot's node; a partitioned queue's signals come on channels it
// subscribes to (docs/PARTITIONS.md), with no BLPOP.
func NewWorkerForQueues(queues []QueueWeight, handler Handler, opts WorkerOptions) (*Worker, error) {
	if len(queues) == 0 || handler == nil {
		return nil, invalid("new worker", "queue and handler are required")
	}
	seen := map[*Queue]bool{}
	for i, qw := range queues {
		switch {
		case qw.Queue == nil:
			return nil, invalid("new worker", "queue %d is nil", i)
		case seen[qw.Queue]:
			return nil, invalid("new worker", "queue %s is listed twice", echo(qw.Queue.name))
		case !opts.StrictPriority && (qw.Weight < 1 || qw.Weight > 1000):
			return nil, invalid("new worker", "weight %d of queue %s outside 1..1000", qw.Weight, echo(qw.Queue.name))
		}
		seen[qw.Queue] = true
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = defaultConcurrency
	}
	if opts.Lease == 0 {
		opts.Lease = defaultLease
	}
	if opts.HeartbeatEvery == 0 {
		opts.HeartbeatEvery = opts.Lease / 3
	}
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = defaultShutdownTimeout
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = defaultPollInterval
	}
	if opts.PromoteEvery == 0 {
		opts.PromoteEvery = defaultPromoteEvery
	}
	if opts.RecoverEvery == 0 {
		opts.RecoverEvery = defaultRecoverEvery
	}
	if opts.ScheduleEvery == 0 {
		opts.ScheduleEvery = defaultScheduleEvery
	}
	if opts.ReportTimeout == 0 {
		opts.ReportTimeout = defaultReportTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.claimLoops == 0 {
		opts.claimLoops = min(defaultClaimLoops, max(opts.Concurrency, 1))
	}
	switch {
	case opts.Concurrency < 0:
		return nil, invalid("new worker", "concurrency %d is negative", opts.Concurrency)
	case opts.Lease < minWorkerLease || ceilMS(opts.Lease) > protocol.MaxLeaseMS:
		// a heartbeat could not renew a shorter lease in time
		return nil, invalid("new worker", "lease %v outside %v..24h", opts.Lease, minWorkerLease)
	case opts.HeartbeatEvery < 0 || opts.HeartbeatEvery > opts.Lease/2:
		// A heartbeat slower than half the lease leaves no room for one
		// late or failed EXTEND before the lease runs out.
		return nil, invalid("new worker", "heartbeat %v must be positive and at most half the lease %v", opts.HeartbeatEvery, opts.Lease)
	case opts.HeartbeatEvery == 0:
		return nil, invalid("new worker", "lease %v too short for a heartbeat", opts.Lease)
	case opts.claimLoops < 1 || opts.claimLoops > opts.Concurrency:
		return nil, invalid("new worker", "claim loops %d outside 1..concurrency %d", opts.claimLoops, opts.Concurrency)
	case opts.PollInterval < time.Millisecond:
		return nil, invalid("new worker", "poll interval %v below 1ms", opts.PollInterval)
	case opts.ReportTimeout < 0:
		return nil, invalid("new worker", "report timeout %v is negative", opts.ReportTimeout)
	case opts.Timeout < 0:
		return nil, invalid("new worker", "timeout %v is negative", opts.Timeout)
	}
	host, _ := os.Hostname()
	w := &Worker{
		given:   queues,
		handler: chain(recovered(handler), opts.Middleware),
		opts:    opts,
		jobs:    map[*runningJob]struct{}{},
		waited:  map[*Queue]*[waitBuckets]int{},
		host:    host,
		id:      newWorkerID(host),
		changed: make(chan struct{}, 1),
	}
	w.set.Store(w.newQueueSet(nil))
	names := make([]string, len(queues))
	for i, qw := range queues {
		names[i] = qw.Queue.name
	}
	logger := opts.Logger.With("queue", names[0])
	if len(names) > 1 {
		logger = opts.Logger.With("queues", names)
	}
	w.log = &throttledLog{l: logger}
	return w, nil
}

// inHand returns how many handlers run now.
func (w *Worker) inHand() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.jobs)
}

// Run claims and runs jobs until ctx ends, then shuts down: it stops
// claiming, waits up to ShutdownTimeout for running handlers to return and
// report, and returns. Jobs whose handlers are still running then are not
// failed; their leases expire and another worker recovers them, and Run
// returns ErrShutdownTimeout. Run returns nil after a complete shutdown. A
// worker runs once at a time. When its client is closed under it, Run
// shuts down at once and returns an error matching valkey.ErrClosing.
func (w *Worker) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("trafikey: worker is already running")
	}
	defer w.running.Store(false)
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	w.stopRun = stop

	// Handlers and their reports outlive ctx: shutdown lets them finish.
	// jobsCtx is cancelled only when the shutdown timeout passes.
	jobsCtx, abandon := context.WithCancelCause(context.WithoutCancel(ctx))
	defer abandon(nil)
	var abandoned atomic.Bool

	// Heartbeats go on during shutdown, or finishing jobs would lose their
	// leases; they stop when Run returns.
	beatCtx, stopBeats := context.WithCancel(context.WithoutCancel(ctx))
	var background sync.WaitGroup
	now := time.Now()
	w.started.Store(&now)
	// The cancel notices, like the heartbeats, reach handlers until Run
	// returns; the first jobs are claimed once the subscriptions are made
	// (or failed), so no notice of theirs goes unheard.
	subscribed := w.watchCancels(beatCtx, &background)
	background.Go(func() { w.heartbeat(beatCtx) })
	background.Go(func() { w.register(beatCtx) })
	// A partition added while the worker runs gets its subscription too;
	// maintain, which adds it, is itself in background.
	subscribe := func(q *Queue) { background.Go(func() { w.watchQueueCancels(beatCtx, q, func() {}) }) }
	background.Go(func() { w.maintain(ctx, subscribe) })
	select {
	case <-subscribed:
	case <-ctx.Done():
	}

	cs := newClaimState(w.opts.Concurrency)
	pool := &handlerPool{
		w: w, jobsCtx: jobsCtx, abandoned: &abandoned, release: cs.release,
		work: make(chan *Job), max: int64(w.opts.Concurrency),
	}
	var claimers sync.WaitGroup
	for range w.opts.claimLoops {
		claimers.Go(func() { w.claimLoop(ctx, cs, pool.start) })
	}
	claimers.Wait()
	cs.held.Wait()
	// No loop claims any more: idle handler goroutines leave, busy ones
	// after their job.
	close(pool.work)
	handlers := &pool.running

	done := make(chan struct{})
	go func() {
		handlers.Wait()
		close(done)
	}()
	var err error
	if w.opts.ShutdownTimeout < 0 {
		select {
		case <-done:
		default:
			err = ErrShutdownTimeout
		}
	} else {
		timer := time.NewTimer(w.opts.ShutdownTimeout)
		select {
		case <-done:
		case <-timer.C:
			err = ErrShutdownTimeout
		}
		timer.Stop()
	}
	if err != nil {
		abandoned.Store(true)
		abandon(ErrShutdownTimeout)
		w.log.l.Warn("trafikey: shutdown timeout passed; running jobs are left to lease recovery", "running", w.inHand())
	} else {
		// Every handler has reported, so the completers' senders are on
		// their way out; none is left behind.
		for _, c := range w.set.Load().completers {
			c.Wait()
		}
	}
	stopBeats()
	background.Wait()
	if cause := context.Cause(ctx); isClosed(cause) {
		return errors.Join(cause, err)
	}
	return err
}

// claimState is what a worker's claim loops share: the handler slots,
// and the wait for jobs when none are pending.
type claimState struct {
	// slots holds a token per handler slot taken, by a claim being made
	// or a job claimed and not yet reported.
	slots chan struct{}
	limit int // the most jobs one CLAIM asks for
	// gather is held by the loop that waits for free slots.
	gather chan struct{}

	mu sync.Mutex
	// waiting is set while a loop waits for the queues' signal; the loops
	// that find no jobs meanwhile (parked of them) wait for wake instead.
	waiting bool
	parked  int
	wake    chan struct{}

	// held counts the claims on a partition that a loop stopped waiting
	// for (claimHeld); each starts its jobs and frees its slots when it
	// answers.
	held sync.WaitGroup
}

func newClaimState(concurrency int) *claimState {
	return &claimState{
		slots:  make(chan struct{}, concurrency),
		limit:  min(concurrency, protocol.MaxCount),
		gather: make(chan struct{}, 1),
		wake:   make(chan struct{}),
	}
}

// release frees one handler slot.
func (cs *claimState) release() { <-cs.slots }

// wakeParked lets the parked loops claim again.
func (cs *claimState) wakeParked() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.parked > 0 {
		close(cs.wake)
		cs.wake = make(chan struct{})
		cs.parked = 0
	}
}

// claimLoop is the only caller of CLAIM in a worker, claimLoops of them
// sharing the handler slots. Each claims as many jobs as there are free
// slots, in one call, so a busy worker claims in batches and never holds
// more jobs than its concurrency; while one loop's CLAIM is on the wire,
// another's jobs start. When nothing is pending it waits (idle).
func (w *Worker) claimLoop(ctx context.Context, cs *claimState, start func(j *Job)) {
	var retryWait time.Duration
	// A worker that starts, or wakes, to a backlog passes the signal on
	// after a full batch, so idle peers join in.
	woke := true
	// blocking: the last claim drained pending and this loop took the
	// waiting role, so the next claim carries a block time in place of an
	// idle wait
	blocking := false
	for {
		// One loop at a time gathers slots: it waits for one free slot,
		// then takes every other free one, and leaves the gathering to
		// the next loop while its CLAIM is on the wire. Loops that all
		// waited for the same freed slots would split them into claims
		// sent together, and wait together again.
		select {
		case cs.gather <- struct{}{}:
		case <-ctx.Done():
			return
		}
		select {
		case cs.slots <- struct{}{}:
		case <-ctx.Done():
			<-cs.gather
			return
		}
		n := 1
	take:
		for n < cs.limit {
			select {
			case cs.slots <- struct{}{}:
				n++
			default:
				break take
			}
		}
		<-cs.gather
		if ctx.Err() != nil {
			for range n {
				cs.release()
			}
			return
		}
		var q *Queue
		var jobs []*Job
		var err error
		waited := blocking
		blocking = false
		if waited {
			// Idle on the native executor: the claim itself waits for a
			// job, up to PollInterval (see idleClaims). When ctx ends
			// the server releases it (CLIENT UNBLOCK), which writes
			// nothing; a job claimed in that very moment is lost to this
			// worker, and lease recovery returns it to pending.
			q = w.set.Load().queues[0].Queue
			callCtx, cancel := context.WithTimeout(ctx, min(w.opts.PollInterval, maxBlock)+callTimeout)
			jobs, err = q.claim(callCtx, w.opts.Lease, n, min(w.opts.PollInterval, maxBlock))
			cancel()
			if err == nil && len(jobs) > 0 && len(jobs) < n {
				// a partial batch drained pending: the parked loops would
				// only find nothing, so they stay parked (a full batch
				// wakes them below), and this loop waits again
				cs.giveUpWaiting()
			} else {
				cs.doneWaiting()
			}
		} else {
			// The claim runs to its end even when ctx ends meanwhile: a
			// claim abandoned in flight could have been executed, and its
			// jobs would then wait for lease recovery.
			callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
			q, jobs, err = w.claim(callCtx, n, cs, start)
			cancel()
		}
		if err == errClaimHeld {
			// a partition's claim goes on in the background; it gave its
			// slots back
			continue
		}
		for range n - len(jobs) {
			cs.release()
		}
		if err != nil && ctx.Err() != nil {
			return
		}
		if wait, ok := rateLimited(err); ok {
			// The server says when the window ends: wait exactly that,
			// claiming nothing meanwhile.
			q.observer.claimRateLimited(q.name, wait)
			if !sleep(ctx, wait) {
				return
			}
			continue
		}
		if isClosed(err) {
			// nothing will answer a closed client: Run ends with it
			w.stopRun(fmt.Errorf("trafikey: worker: the client is closed: %w", err))
			return
		}
		if err != nil {
			retryWait = w.claimFailed(err, retryWait)
			if !sleep(ctx, retryWait) {
				return
			}
			continue
		}
		retryWait = 0
		if waited && len(jobs) > 0 {
			// a job woke the claim: as after the signal's wake-up
			woke = true
		}
		for _, j := range jobs {
			start(j)
		}
		if len(jobs) == n {
			// A full batch: more may be pending, for the parked loops
			// and, after a wake-up, for idle peers.
			cs.wakeParked()
			if woke {
				if err := q.pokeSignal(ctx); err != nil && ctx.Err() == nil {
					w.log.warn("trafikey: signal idle workers", "err", err)
				}
			}
		}
		woke = false
		switch {
		case len(jobs) < n && w.idleClaims():
			// Pending is drained: the next claim waits, in one loop at a
			// time. A job there by then answers it at once, so this saves
			// the claim that would only find nothing.
			blocking = cs.await(ctx)
		case len(jobs) == 0:
			woke = w.idle(ctx, cs)
		}
	}
}

// idleClaims reports whether an idle claim loop waits with a blocking claim
// (CLAIM's block time, native executor) in place of the signal list: the
// verb that makes a job claimable answers it, one round trip less than a
// wake-up followed by a claim. Only a worker of one queue does: one CLAIM
// waits on one queue's key, and a worker of several queues waits on all
// their signal lists at once (one BLPOP per node and slot, in a cluster;
// a partitioned queue's partitions on their signal channels).
// As with the signal list, one loop of a worker waits at a time, on a
// connection of its own per BLPOP, holding the slots it gathered; the other
// idle loops park until it returns.
func (w *Worker) idleClaims() bool {
	qs := w.set.Load().queues
	return len(qs) == 1 && qs[0].Queue.claimBlocks()
}

// idle waits for jobs after a claim found none, and reports whether it
// waited for the queues' signal itself. One loop at a time waits for the
// signal, so a worker blocks one connection however many loops it has; the
// others park until that loop returns, or another loop claims a full
// batch.
func (w *Worker) idle(ctx context.Context, cs *claimState) bool {
	if !cs.await(ctx) {
		return false
	}
	err := w.waitSignal(ctx)
	if err != nil && ctx.Err() == nil {
		w.log.warn("trafikey: wait for signal", "err", err)
		sleep(ctx, w.opts.PollInterval)
	}
	w.parts.woken(w.opts.PollInterval)
	cs.doneWaiting()
	return true
}

// await takes the waiting role for an idle loop, or parks it until the
// loop that has the role is done; it reports whether the loop took it.
func (cs *claimState) await(ctx context.Context) bool {
	cs.mu.Lock()
	if cs.waiting {
		cs.parked++
		wake := cs.wake
		cs.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
		}
		return false
	}
	cs.waiting = true
	cs.mu.Unlock()
	return true
}

// doneWaiting gives the waiting role up and lets the parked loops claim.
func (cs *claimState) doneWaiting() {
	cs.giveUpWaiting()
	cs.wakeParked()
}

// giveUpWaiting gives the waiting role up, leaving the parked loops parked.
func (cs *claimState) giveUpWaiting() {
	cs.mu.Lock()
	cs.waiting = false
	cs.mu.Unlock()
}

// handlerPool runs claimed jobs on goroutines that live for the whole Run,
// each running job after job: one is started when a job finds none idle,
// up to the concurrency. A goroutine per job would start every job on a
// small stack that its report path grows again.
type handlerPool struct {
	w         *Worker
	jobsCtx   context.Context
	abandoned *atomic.Bool
	release   func() // frees the job's handler slot once it is reported
	// work hands a job to an idle goroutine; unbuffered, so a send that
	// does not block finds one waiting.
	work    chan *Job
	max     int64
	spawned atomic.Int64
	// running counts the jobs started and not yet reported; the
	// goroutines themselves leave on their own once work is closed.
	running sync.WaitGroup
}

// start runs j on an idle goroutine, or a new one while there are fewer
// than the concurrency, or else on the first to finish its job (one just
// freeing the slot j took).
func (p *handlerPool) start(j *Job) {
	p.running.Add(1)
	select {
	case p.work <- j:
		return
	default:
	}
	if p.spawned.Add(1) <= p.max {
		go p.run(j)
		return
	}
	p.spawned.Add(-1)
	p.work <- j
}

// run runs j, then the jobs handed over, until work is closed.
func (p *handlerPool) run(j *Job) {
	// The channel a completion is answered on, reused job after job: each
	// report takes its one answer before the next job starts (but for a
	// report left to finish in the background, which keeps its channel).
	done := make(chan error, 1)
	for {
		if p.w.runJob(p.jobsCtx, j, p.abandoned, done, p.release, &p.running) {
			done = make(chan error, 1)
		}
		var ok bool
		if j, ok = <-p.work; !ok {
			return
		}
	}
}

// claim claims up to n jobs from the queue the weights draw, or, when it
// has none, from the next queue that has some, in list order. It returns
// the queue the jobs came from (the drawn one when none had any). A queue
// over its rate limit is passed over; when no queue had jobs and one was
// limited, the error is the limit of the one whose window ends first.
func (w *Worker) claim(ctx context.Context, n int, cs *claimState, start func(*Job)) (*Queue, []*Job, error) {
	set := w.set.Load()
	queues := set.queues
	var limited, failed error
	var limitedWait time.Duration
	var limitedQ, failedQ *Queue
	first := 0
	switch {
	case w.opts.StrictPriority || len(queues) == 1:
	case len(w.given) == 1:
		// one partitioned queue: the partition it claimed fewest jobs of
		// first, so each gets as many as the others while all have work (a
		// random draw, or one in turn with batches of every size, leaves
		// them tens of percent apart over a backlog)
		first = w.parts.fewest(queues)
	default:
		r := rand.IntN(set.totalWeight)
		for first = 0; r >= queues[first].Weight; first++ {
			r -= queues[first].Weight
		}
	}
	// under strict priority, a partitioned queue's partitions are tried
	// in turn from one drawn at random, so that none comes first always
	spin := rand.Uint32()
	for k := range queues {
		q := queues[(first+k)%len(queues)].Queue
		if w.opts.StrictPriority {
			q = queues[k].Queue
			if q.of != nil {
				// only a partition of the set: a producer's refresh of
				// the same handle may list one the set has no completer
				// for until the worker's own refresh
				list := q.of.parts.Load().list()
				if p := list[(int(spin)+k)%len(list)]; set.completers[p] != nil {
					q = p
				}
			}
		}
		if q.of != nil && w.parts.skip(q) {
			continue
		}
		var jobs []*Job
		var err error
		if q.of != nil {
			if jobs, err = w.claimPartition(q, n, cs, start); err == errClaimHeld {
				return q, nil, err
			}
		} else {
			// a queue partitioned since the set was made is claimed
			// through its own keys, its partition 0, until the set
			// has its partitions (refreshParts): the jobs' completer
			// is its own
			jobs, err = q.claim(ctx, w.opts.Lease, n, 0)
		}
		if wait, ok := rateLimited(err); ok {
			if limited == nil || wait < limitedWait {
				limited, limitedWait, limitedQ = err, wait, q
			}
			continue
		}
		if err != nil && q.of != nil && !isClosed(err) {
			// One partition failing (its primary failing over) holds
			// up none of the others: it is passed over for a while.
			w.parts.failed(q)
			if failed == nil {
				failed, failedQ = err, q
			}
			continue
		}
		if err != nil || len(jobs) > 0 {
			if err == nil && q.of != nil {
				w.parts.served(q)
				w.parts.claimed(q, len(jobs))
			}
			return q, jobs, err
		}
		if q.of != nil {
			w.parts.empty(q)
		}
	}
	if limited != nil {
		return limitedQ, nil, limited
	}
	if failed != nil {
		return failedQ, nil, failed
	}
	return queues[first].Queue, nil, nil
}

// waitSignal sleeps until a verb signals one of the worker's queues, or
// PollInterval passes. It waits on all their signal lists at once: in one
// BLPOP when they share a client and, in a cluster, a slot, else one BLPOP
// per client and slot, concurrently (signalWaits), so no queue waits for
// PollInterval to be seen; and for partitions, on the announcements of
// their signal channels, which need no BLPOP.
func (w *Worker) waitSignal(ctx context.Context) error {
	set := w.set.Load()
	if len(set.signals) == 1 && len(set.signals[0].keys) == len(set.queues) {
		_, err := set.signals[0].wait(ctx, w.opts.PollInterval, true)
		return err
	}
	return w.waits.wait(ctx, set.signals, w.opts.PollInterval)
}

// claimFailed logs a failed claim and returns how long to wait before the
// next: a backoff from 50 ms doubling to 5 s so a server outage is not
// hammered.
func (w *Worker) claimFailed(err error, last time.Duration) time.Duration {
	w.log.error("trafikey: claim", "err", err)
	return min(max(2*last, 50*time.Millisecond), 5*time.Second)
}

// sleep waits d or until ctx ends, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// runJob runs the handler on one claimed job, reports the outcome and
// frees the job's handler slot with release: when the server has answered
// for it, or when the report failed.
//
// It marks the job done in finished once it is reported, and reports
// whether it left the report to finish in the background
// (reportInBackground), done with it.
func (w *Worker) runJob(jobsCtx context.Context, j *Job, abandoned *atomic.Bool, done chan error, release func(), finished *sync.WaitGroup) (background bool) {
	ctx, cancel := context.WithCancelCause(jobsCtx)
	defer cancel(nil)
	if j.q.of != nil {
		release = (&slotOnce{release: release}).free
	}
	r := &runningJob{job: j, cancel: cancel, done: done, release: release}
	began := time.Now()
	// The lease was granted when the CLAIM ran, after it was sent: counting
	// from the send makes the heartbeat renew early rather than late, however
	// long the job waited for its handler. A job claimed otherwise counts
	// from claimSlack before now.
	granted := j.claimSent
	if granted.IsZero() {
		granted = began.Add(-claimSlack)
	}
	r.renewed.Store(granted.UnixNano())
	w.mu.Lock()
	w.jobs[r] = struct{}{}
	if j.waitKnown {
		w.countWait(j.q.logical(), j.waited)
	}
	w.mu.Unlock()
	w.registryChanged()

	j.q.observer.jobStarted(j)
	err := w.invokeBounded(ctx, j)
	if j.q.of != nil {
		return w.reportInBackground(j, r, err, abandoned, began, finished)
	}
	outcome, reportErr := w.report(j, r, err, abandoned)
	w.reportedJob(j, r, began, err, outcome, reportErr)
	finished.Done()
	return false
}

// reportedJob is what runJob does once a job is reported: the slot freed
// (unless its completion freed it), the job no longer in hand, counted,
// observed and told to OnDone.
func (w *Worker) reportedJob(j *Job, r *runningJob, began time.Time, err error, outcome Outcome, reportErr error) {
	if !r.completion.released {
		r.release()
	}
	w.mu.Lock()
	delete(w.jobs, r)
	w.mu.Unlock()
	w.registryChanged()
	j.q.observer.jobFinished(j, outcome, time.Since(began))
	w.count(outcome)
	if reportErr != nil {
		err = reportErr
	}
	if w.opts.OnDone != nil {
		w.opts.OnDone(j, outcome, err)
	}
}

// invokeBounded runs the handler on j, within the job's Timeout or else the
// worker's, when there is one: at the deadline it returns the timeout's
// failure without waiting for the handler, which goes on in its own
// goroutine.
func (w *Worker) invokeBounded(ctx context.Context, j *Job) error {
	timeout := w.opts.Timeout
	if j.Timeout > 0 {
		timeout = j.Timeout
	}
	if timeout <= 0 {
		return invoke(ctx, w.handler, j)
	}
	hctx, cancel := context.WithTimeoutCause(ctx, timeout, ErrTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- invoke(hctx, w.handler, j) }()
	select {
	case err := <-done:
		return err
	case <-hctx.Done():
		if !errors.Is(context.Cause(hctx), ErrTimeout) {
			return <-done // the lease was lost, or shutdown: the handler decides
		}
		return fmt.Errorf("trafikey: job %s ran past its timeout of %v: %w", j.ID, timeout, ErrTimeout)
	}
}

// claimSlack is how much earlier than the handler's start the heartbeat
// assumes the lease of a job without its CLAIM's send time was granted:
// the CLAIM was executed a round trip or so before, and renewing early is
// harmless while renewing late is not.
const claimSlack = 100 * time.Millisecond

// report tells the server how the attempt ended. A report that does not
// reach the server, or meets a write pause, is tried again until
// ReportTimeout: the job is still among the running ones, so the heartbeat
// renews its lease as soon as the server answers again.
func (w *Worker) report(j *Job, r *runningJob, handlerErr error, abandoned *atomic.Bool) (Outcome, error) {
	if r.cancelled.Load() {
		return OutcomeCancelled, handlerErr
	}
	if r.lost.Load() {
		return OutcomeLeaseLost, handlerErr
	}
	deadline := time.Now().Add(w.opts.ReportTimeout)
	if handlerErr == nil {
		// A handler that finished completes even after the shutdown
		// timeout: its work is done, running it again would be a waste.
		// Completions of concurrent handlers share COMPLETEMANY calls,
		// each job with its own outcome.
		return w.reported(OutcomeCompleted, w.complete(r, deadline), nil)
	}
	if abandoned.Load() {
		// Its error is most likely the cancellation itself, not a failure
		// of the job; the next worker gets the job with this attempt spent.
		return OutcomeAbandoned, handlerErr
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var retrying bool
	err := retryTransient(ctx, reportRetryMax, func() (err error) {
		retrying, err = j.Fail(ctx, handlerErr, !errors.Is(handlerErr, ErrSkipRetry))
		return err
	}, w.reportFailed(j))
	if retrying {
		if j.q.of != nil {
			// its partition has a job to promote, soon or later
			w.parts.delayed(j.q)
		}
		return w.reported(OutcomeRetrying, err, handlerErr)
	}
	return w.reported(OutcomeDead, err, handlerErr)
}

// complete reports r's job done through its queue's completer by deadline.
// The first try waits for the completer alone, which answers by the
// deadline, so a completion costs no timer of its own; only a try after a
// transient failure (an outage) has a context with the deadline, for the
// waits between tries.
func (w *Worker) complete(r *runningJob, deadline time.Time) error {
	j := r.job
	b := w.set.Load().completers[j.q]
	r.completion = completion{job: j, deadline: deadline, done: r.done, release: r.release}
	err := awaitCompletion(b, &r.completion)
	if err == nil || !transient(err) {
		return err
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	first := err
	return retryTransient(ctx, reportRetryMax, func() error {
		if first != nil {
			err, first = first, nil
			return err
		}
		return completeQueued(ctx, b, j)
	}, w.reportFailed(j))
}

// reportFailed logs a report's try that failed and is tried again.
func (w *Worker) reportFailed(j *Job) func(error) {
	return func(err error) { w.log.warn("trafikey: report job outcome, trying again", "job", j.ID, "err", err) }
}

// reported turns the error of a completion or FAIL into the outcome.
func (w *Worker) reported(want Outcome, err, handlerErr error) (Outcome, error) {
	switch {
	case err == nil:
		return want, handlerErr
	case errors.Is(err, ErrCancelled):
		return OutcomeCancelled, err
	case errors.Is(err, ErrLeaseLost), errors.Is(err, ErrNotFound):
		return OutcomeLeaseLost, err
	case errors.Is(err, ErrNotDurable):
		// The server applied the outcome; only its confirmation is missing.
		w.log.warn("trafikey: job outcome not confirmed durable", "outcome", want, "err", err)
		return want, err
	default:
		w.log.error("trafikey: report job outcome", "outcome", want, "err", err)
		return OutcomeUnreported, err
	}
}

func (w *Worker) count(o Outcome) {
	switch o {
	case OutcomeCompleted:
		w.processed.Add(1)
	case OutcomeRetrying:
		w.failed.Add(1)
		w.retried.Add(1)
	case OutcomeDead:
		w.failed.Add(1)
		w.dead.Add(1)
	case OutcomeLeaseLost:
		w.lost.Add(1)
	case OutcomeCancelled:
		w.cancelled.Add(1)
	case OutcomeAbandoned, OutcomeUnreported:
		w.abandoned.Add(1)
	}
}

// heartbeat extends the leases of running jobs, one goroutine for all of
// them: every HeartbeatEvery it renews each lease that would otherwise run
// out within two periods, so a lease always has a spare period for a late
// or failed EXTEND. Jobs shorter than a period are never extended.
func (w *Worker) heartbeat(ctx context.Context) {
	tick := time.NewTicker(w.opts.HeartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.renewDue(ctx)
	}
}

// renewDue extends each running job's lease that would run out within two
// heartbeat periods, and reports whether the server answered every EXTEND.
// A lease that ran out during an outage is among them: until a RECOVER takes
// the job, its EXTEND still succeeds.
func (w *Worker) renewDue(ctx context.Context) bool {
	period := w.opts.HeartbeatEvery
	now := time.Now()
	var due []*runningJob
	w.mu.Lock()
	for r := range w.jobs {
		deadline := time.Unix(0, r.renewed.Load()).Add(w.opts.Lease)
		if !r.lost.Load() && deadline.Sub(now) < 2*period {
			due = append(due, r)
		}
	}
	w.mu.Unlock()
	// Concurrent calls share the client's pipeline: a thousand leases cost
	// about one round trip, not a thousand.
	var wg sync.WaitGroup
	var failed atomic.Bool
	for _, r := range due {
		wg.Go(func() {
			if !w.extend(ctx, r, period) {
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	return !failed.Load()
}

// extend renews r's lease and reports whether the server answered: the
// lease renewed, or the claim found lost.
func (w *Worker) extend(ctx context.Context, r *runningJob, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sent := time.Now()
	_, err := r.job.Extend(ctx, w.opts.Lease)
	switch {
	case err == nil:
		r.renewed.Store(sent.UnixNano())
	case errors.Is(err, ErrCancelled):
		w.jobCancelled(r)
	case errors.Is(err, ErrLeaseLost), errors.Is(err, ErrNotFound):
		// The heartbeat and the recovery timer's renewal may both find
		// it: the first one acts.
		if r.lost.CompareAndSwap(false, true) {
			r.cancel(ErrLeaseLost)
			w.log.l.Warn("trafikey: lease lost", "job", r.job.ID, "attempt", r.job.Attempt, "err", err)
		}
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		// Run is returning.
		return false
	default:
		// The next tick tries again while the lease lasts.
		w.log.warn("trafikey: extend lease", "job", r.job.ID, "err", err)
		return false
	}
	return true
}

// maintain runs the schedule step, promotes due delayed jobs and recovers
// expired leases on their timers until ctx ends. Every worker does it: the verbs are idempotent and
// bounded, so peers doing the same work only cost a few calls.
func (w *Worker) maintain(ctx context.Context, subscribe func(q *Queue)) {
	promote := newTicker(w.opts.PromoteEvery)
	defer promote.stop()
	recoverTick := newTicker(w.opts.RecoverEvery)
	defer recoverTick.stop()
	scheduleTick := newTicker(w.opts.ScheduleEvery)
	defer scheduleTick.stop()
	// every worker reads its queues' partitions: an unpartitioned queue
	// may be partitioned while it runs
	refreshTick := newTicker(w.refreshEvery())
	defer refreshTick.stop()
	w.scheduleAll(ctx)
	w.promoteAll(ctx)
	w.recoverAll(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-scheduleTick.c:
			w.scheduleAll(ctx)
		case <-promote.c:
			w.promoteAll(ctx)
		case <-refreshTick.c:
			w.refreshParts(ctx, subscribe)
		case <-recoverTick.c:
			w.recoverAll(ctx)
			w.trimAll(ctx)
		}
	}
}

// trimSteps bounds the TRIM calls per queue and tick: a backlog of jobs to
// trim is worked off over ticks, a step of jobs a call, so that no call
// holds the server for long (docs/BENCHMARKS.md, "Flows, results and
// retention").
const trimSteps = 50

const (
	// trimStep is how many finished jobs a Worker deletes per TRIM call on
	// the native executor: about 0.6 ms of the server's time with a million
	// jobs retained.
	trimStep = 200
	// trimStepLua is the step on the Lua executor, whose TRIM costs about
	// four times as much per job: its steps hold the server about as long.
	trimStepLua = 50
)

// trimStepOf is the TRIM step a Worker takes on executor e.
func trimStepOf(e Executor) int {
	if e == ExecutorLua {
		return trimStepLua
	}
	return trimStep
}

// trimAll deletes finished jobs the queues' retention policies no longer
// keep, in bounded steps, on the recovery timer.
func (w *Worker) trimAll(ctx context.Context) {
	now := time.Now()
	for _, qw := range w.set.Load().queues {
		q := qw.Queue
		if q.of != nil && !w.parts.due(&w.parts.trim, q, now) {
			continue
		}
		step := trimStepOf(q.Executor())
		for range trimSteps {
			done, dead, err := q.trim(ctx, step)
			if q.of != nil {
				w.parts.called(&w.parts.trim, q, done+dead, now, w.opts.RecoverEvery)
			}
			if err != nil {
				if ctx.Err() == nil {
					w.log.error("trafikey: trim", "queue", q.name, "err", err)
				}
				break
			}
			if done+dead < step {
				break
			}
		}
	}
}

// scheduleAll runs the schedule step of every queue.
func (w *Worker) scheduleAll(ctx context.Context) {
	if w.opts.ScheduleEvery < 0 {
		return
	}
	for _, qw := range w.set.Load().queues {
		q := qw.Queue
		if q.idSuffix != "" {
			continue // a partitioned queue's schedules are in its partition 0
		}
		if _, err := q.runSchedules(ctx); err != nil && ctx.Err() == nil {
			w.log.error("trafikey: schedules", "queue", q.name, "err", err)
		}
	}
}

// promoteAll calls PROMOTE until a call moves fewer than it may.
func (w *Worker) promoteAll(ctx context.Context) {
	if w.opts.PromoteEvery < 0 {
		return
	}
	now := time.Now()
	for _, qw := range w.set.Load().queues {
		q := qw.Queue
		if q.of != nil && !w.parts.due(&w.parts.promote, q, now) {
			continue
		}
		for ctx.Err() == nil {
			n, err := q.promote(ctx, protocol.MaxCount)
			if q.of != nil {
				w.parts.called(&w.parts.promote, q, n, now, w.opts.PromoteEvery)
			}
			if err != nil {
				if ctx.Err() == nil {
					w.log.error("trafikey: promote", "queue", q.name, "err", err)
				}
				break
			}
			if n < protocol.MaxCount {
				break
			}
		}
	}
}

// recoverAll calls RECOVER until a call takes back fewer than it may.
func (w *Worker) recoverAll(ctx context.Context) {
	if w.opts.RecoverEvery < 0 {
		return
	}
	// This worker's own leases first: one that ran out while the server was
	// unreachable is renewed before this RECOVER could take it back. While
	// they cannot all be renewed, the server is not answering reliably, and
	// this round is skipped. A RECOVER the server refuses without running
	// it (LOADING after a restart) is not sent again: by the time it ran,
	// this worker's leases could have run out unrenewed; the next round
	// renews them first.
	if !w.renewDue(ctx) {
		return
	}
	for _, qw := range w.set.Load().queues {
		q := qw.Queue
		for ctx.Err() == nil {
			requeued, dead, err := q.recover(ctx, protocol.MaxCount, q.callOnce)
			if err != nil {
				if ctx.Err() == nil {
					w.log.error("trafikey: recover", "queue", q.name, "err", err)
				}
				break
			}
			if requeued+dead > 0 {
				w.log.l.Info("trafikey: recovered expired leases", "queue", q.name, "requeued", requeued, "dead", dead)
			}
			if requeued+dead < protocol.MaxCount {
				break
			}
		}
	}
}

// ticker is a time.Ticker that never fires when its period is negative.
type ticker struct {
	t *time.Ticker
	c <-chan time.Time
}

func newTicker(d time.Duration) ticker {
	if d < 0 {
		return ticker{}
	}
	t := time.NewTicker(d)
	return ticker{t: t, c: t.C}
}

func (t ticker) stop() {
	if t.t != nil {
		t.t.Stop()
	}
}
