package trafikey

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// WorkerInfo is a running Worker: who it is and what it runs, as it
// registers itself on its queues every few seconds (Admin.Workers), and
// what its handlers led to since it was created (Worker.Info).
type WorkerInfo struct {
	// ID names the worker: its host, process id and a random part.
	ID   string `json:"id"`
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Queues are the names of the queues it runs.
	Queues []string `json:"queues"`
	// Concurrency is how many handlers it runs at most; Running how many
	// run now, Jobs the ids of (at most 100 of) their jobs: in
	// Admin.Workers those of the queue read, in Worker.Info every queue's.
	Concurrency int      `json:"concurrency"`
	Running     int      `json:"running"`
	Jobs        []string `json:"jobs"`
	// Started is when Run started; Beat when the worker last registered,
	// by its own clock. A record whose worker has not registered for
	// three periods (15 s) is gone: the worker stopped or died.
	Started time.Time `json:"started"`
	Beat    time.Time `json:"beat"`

	// Processed counts jobs completed.
	Processed int `json:"processed"`
	// Failed counts failed attempts reported (Retried + Dead).
	Failed int `json:"failed"`
	// Retried counts failed attempts that will run again.
	Retried int `json:"retried"`
	// Dead counts jobs dead-lettered.
	Dead int `json:"dead"`
	// Lost counts claims lost while their handler ran.
	Lost int `json:"lost"`
	// Abandoned counts jobs left to lease recovery at shutdown or after a
	// transport error.
	Abandoned int `json:"abandoned"`
	// Cancelled counts jobs Queue.Cancel ended while their handler ran.
	Cancelled int `json:"cancelled"`
	// Waited counts the jobs it started whose wait is known, by how long
	// they waited: Waited[i] (i < 10) those under 4^i ms (1 ms, 4 ms,
	// 16 ms … 262.144 s), Waited[10] the rest. A wait is known only on a
	// queue with an Observer.JobWaited (trafikeyprom's sets one), whose
	// claims read it. In Admin.Workers the queue read's, in Worker.Info
	// every queue's.
	Waited []int `json:"waited"`
}

// waitBuckets is the length of WorkerInfo.Waited.
const waitBuckets = 11

// waitBucket is the index in WorkerInfo.Waited of a wait of d.
func waitBucket(d time.Duration) int {
	bound := time.Millisecond
	for i := range waitBuckets - 1 {
		if d < bound {
			return i
		}
		bound *= 4
	}
	return waitBuckets - 1
}

// countWait counts a job of q started after a wait of d; w.mu is held.
func (w *Worker) countWait(q *Queue, d time.Duration) {
	c := w.waited[q]
	if c == nil {
		c = new([waitBuckets]int)
		w.waited[q] = c
	}
	c[waitBucket(d)]++
}

// registerEvery is how often a running worker writes its record; the
// record lives three periods, so a worker that dies drops out of
// Admin.Workers within 15 s and one stalled for a period does not.
const registerEvery = 5 * time.Second

// registerSoonest is the shortest time between two registrations: a change
// of the jobs in hand is registered within it, a steady stream of them once
// per it.
const registerSoonest = 250 * time.Millisecond

// registryForget is how long past its expiry a dead worker's id stays in
// the index before another worker's registration drops it: long enough
// that clocks apart by minutes do not drop a live worker's.
const registryForget = time.Hour

// maxInfoJobs bounds the job ids a record carries.
const maxInfoJobs = 100

// maxListedWorkers bounds how many workers Admin.Workers reads.
const maxListedWorkers = 10000

// newWorkerID names a worker of host uniquely: host, pid and 48 random
// bits.
func newWorkerID(host string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return host + ":" + strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(b[:])
}

// Info returns what the worker is and does now: its counters, and, while
// it runs, the jobs in hand.
func (w *Worker) Info() WorkerInfo { return w.info(nil) }

// info is the worker's info with the jobs in hand of queue q, or of every
// queue when q is nil.
func (w *Worker) info(q *Queue) WorkerInfo {
	info := WorkerInfo{
		ID: w.id, Host: w.host, PID: os.Getpid(), Concurrency: w.opts.Concurrency,
		Processed: int(w.processed.Load()),
		Failed:    int(w.failed.Load()),
		Retried:   int(w.retried.Load()),
		Dead:      int(w.dead.Load()),
		Lost:      int(w.lost.Load()),
		Abandoned: int(w.abandoned.Load()),
		Cancelled: int(w.cancelled.Load()),
	}
	for _, qw := range w.set.Load().queues {
		if qw.Queue.idSuffix == "" {
			// a partitioned queue once: by its partition 0
			info.Queues = append(info.Queues, qw.Queue.name)
		}
	}
	if t := w.started.Load(); t != nil {
		info.Started = *t
	}
	w.mu.Lock()
	info.Waited = make([]int, waitBuckets)
	for wq, c := range w.waited {
		if q == nil || wq == q.logical() {
			for i, n := range c {
				info.Waited[i] += n
			}
		}
	}
	info.Running = len(w.jobs)
	for r := range w.jobs {
		if len(info.Jobs) < maxInfoJobs && (q == nil || r.job.q.logical() == q.logical()) {
			info.Jobs = append(info.Jobs, r.job.ID)
		}
	}
	w.mu.Unlock()
	slices.Sort(info.Jobs)
	return info
}

// register writes the worker's record on every queue it runs, then every
// registerEvery until ctx ends, and deletes it then.
func (w *Worker) register(ctx context.Context) {
	every := w.opts.registerEvery
	if every <= 0 {
		every = registerEvery
	}
	t := newTicker(every)
	defer t.stop()
	for {
		w.registerOnce(ctx, 3*every)
		select {
		case <-ctx.Done():
			// a record of its own, gone with the worker: not left to expire
			bye, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			w.registerOnce(bye, 0)
			cancel()
			return
		case <-t.c:
		case <-w.changed:
			// the jobs in hand changed: registered soon, not at once, so
			// a busy worker writes its record a few times a second at most
			if !sleep(ctx, min(registerSoonest, every)) {
				continue
			}
		}
	}
}

// registryChanged tells the registration that the jobs in hand changed.
func (w *Worker) registryChanged() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// registerOnce writes the worker's record on each of its queues with a TTL
// of ttl, or deletes it when ttl is 0. A failure is logged: the registry
// is a view, and the next period writes again.
func (w *Worker) registerOnce(ctx context.Context, ttl time.Duration) {
	beat := time.Now()
	for _, qw := range w.set.Load().queues {
		q := qw.Queue
		if q.client == nil || q.idSuffix != "" {
			// a partitioned queue's workers register in its partition 0
			continue
		}
		info := w.info(q)
		info.Beat = beat
		if err := q.writeWorker(ctx, info, ttl); err != nil && ctx.Err() == nil {
			w.log.error("trafikey: worker registry", "queue", q.name, "err", err)
		}
	}
}

// writeWorker writes info as the record of its worker on q for ttl (0:
// deletes it), indexes it, and drops from the index the ids of workers
// whose record expired registryForget ago; the index itself lives
// registryForget past the last registration. A record is written only
// while the queue's wire stamp is there, in a transaction that watches it:
// a queue deleted (Admin.DeleteQueue) is not written again by the workers
// still running on it. It writes on a connection of its own (the client's
// pool for blocking commands): a write the server holds (CLIENT PAUSE
// WRITE, during a failover) then holds none of the calls that share the
// client's pipelines, such as a worker's claims or its cancel notices'
// subscription.
func (q *Queue) writeWorker(ctx context.Context, info WorkerInfo, ttl time.Duration) error {
	index := q.keys.Fixed(protocol.SuffixWorkers)
	record := q.keys.Base + protocol.SuffixWorker + info.ID
	if ttl == 0 {
		c := q.client
		var errs []error
		for _, r := range c.DoMulti(ctx, c.B().Del().Key(record).Build(), c.B().Zrem().Key(index).Member(info.ID).Build()) {
			errs = append(errs, r.Error())
		}
		return errors.Join(errs...)
	}
	data, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return q.client.Dedicated(func(c valkey.DedicatedClient) error {
		watched := c.DoMulti(ctx, c.B().Watch().Key(q.keys.Version).Build(), c.B().Exists().Key(q.keys.Version).Build())
		if err := errors.Join(watched[0].Error(), watched[1].Error()); err != nil {
			return err
		}
		if n, _ := watched[1].AsInt64(); n == 0 {
			// the queue is not installed, or was deleted
			return c.Do(ctx, c.B().Unwatch().Build()).Error()
		}
		expires := info.Beat.Add(ttl).UnixMilli()
		forget := info.Beat.Add(-registryForget).UnixMilli()
		res := c.DoMulti(ctx,
			c.B().Multi().Build(),
			c.B().Set().Key(record).Value(string(data)).Px(ttl).Build(),
			c.B().Zadd().Key(index).ScoreMember().ScoreMember(float64(expires), info.ID).Build(),
			c.B().Zremrangebyscore().Key(index).Min("-inf").Max("("+strconv.FormatInt(forget, 10)).Build(),
			c.B().Pexpire().Key(index).Milliseconds((ttl + registryForget).Milliseconds()).Build(),
			c.B().Exec().Build())
		var errs []error
		for _, r := range res {
			// an EXEC the watch aborted replies null: the queue went
			// meanwhile, and nothing was written
			if err := r.Error(); err != nil && !valkey.IsValkeyNil(err) {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	})
}

// Workers lists the workers running on the queue now, as each last
// registered itself (every 5 s, and within 250 ms of a change of its jobs
// in hand), in the order of their ids. A worker that stopped is gone at
// once; one that died, within 15 s.
func (a Admin) Workers(ctx context.Context) ([]WorkerInfo, error) {
	q := a.q
	if q.client == nil {
		return nil, invalid("workers", "the queue has no client")
	}
	c := q.client
	index := q.keys.Fixed(protocol.SuffixWorkers)
	ids, err := c.Do(ctx, c.B().Zrange().Key(index).Min("0").Max(strconv.Itoa(maxListedWorkers-1)).Build()).AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("trafikey: workers: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	slices.Sort(ids)
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = q.keys.Base + protocol.SuffixWorker + id
	}
	// one slot, the queue's: MGET reads them in one call, cluster or not
	records, err := c.Do(ctx, c.B().Mget().Key(keys...).Build()).ToArray()
	if err != nil {
		return nil, fmt.Errorf("trafikey: workers: %w", err)
	}
	var out []WorkerInfo
	for i, r := range records {
		data, err := r.ToString()
		if valkey.IsValkeyNil(err) {
			continue // expired: the worker died
		}
		var info WorkerInfo
		if err == nil {
			err = json.Unmarshal([]byte(data), &info)
		}
		if err != nil {
			return out, fmt.Errorf("trafikey: workers: record of %s: %w", echo(ids[i]), err)
		}
		out = append(out, info)
	}
	return out, nil
}
