// Package trafikeyprom exports trafikey's client-side events and queue
// depths as Prometheus series. It is a module of its own, so a program that
// uses trafikey without Prometheus links none of it.
//
// Two collectors, both registered on a registry the caller owns (nothing is
// registered globally):
//
//   - a trafikey.Observer from NewObserver, installed with
//     trafikey.QueueOptions.Observer, counts what this process's queues and workers
//     do: jobs added, claimed, completed, failed, retried, dead-lettered,
//     lost and cancelled, leases recovered, claims refused by the rate
//     limit, handlers running, handler run time, and how long jobs waited
//     to be claimed (trafikey.Observer.JobWaited);
//   - a QueueCollector reads each queue's STATS when scraped and reports
//     what the server holds, whatever process added or ran the jobs: the
//     jobs pending, delayed, active and dead, whether it is paused, its
//     lanes and rate limit, and its lifetime counters (added, completed,
//     failed, retried, dead-lettered, recovered, removed, requeued,
//     cancelled), a partitioned queue's summed over its partitions and
//     broken down by partition, and
//     optionally per-lane series. Its queues are fixed
//     (NewQueueCollector) or listed at each scrape
//     (NewQueueSourceCollector).
//
// Every series carries the label queue; per-lane series the label lane
// too, per-partition series the label partition (the partition's hash
// tag). The observer's series of jobs (added, claimed, completed, failed,
// retried, dead, lost, cancelled, running, the run time and the wait) carry the
// label kind too: the job's kind (trafikey.JobOptions.Kind), "none" for a
// job without one. Kinds are a program's handlers, a few per queue; to keep
// the series bounded whatever the producers pass, an observer gives the
// first 100 kinds it sees a value of their own and counts any later one as
// "other" (a kind named "none" or "other" shares those series; bytes that
// are not UTF-8 are shown as U+FFFD).
package trafikeyprom

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/latency"
)

const namespace = "trafikey"

// observer holds the series NewObserver's trafikey.Observer counts into.
type observer struct {
	added, claimed, completed, failed, retried, dead, lost *prometheus.CounterVec
	cancelled                                              *prometheus.CounterVec
	recoveredPending, recoveredDead, rateLimited           *prometheus.CounterVec
	running                                                *prometheus.GaugeVec
	duration, wait                                         *prometheus.HistogramVec
	kinds                                                  kindLabels
}

// Values of the kind label that are not a job's kind.
const (
	kindNone  = "none"  // a job without a kind
	kindOther = "other" // a kind seen after maxKinds others
)

// maxKinds is how many kinds an observer gives a label value of their own.
const maxKinds = 100

// kindLabels maps a job's kind to its kind label: the kind itself (made
// valid UTF-8, as a label value must be) for the first maxKinds kinds
// seen, kindOther after them, kindNone for none. A kind keeps its value,
// so a running gauge raised at the start is lowered at the finish.
type kindLabels struct {
	seen sync.Map // kind -> label value, read without the lock
	mu   sync.Mutex
	n    int
}

func (k *kindLabels) of(kind string) string {
	if kind == "" {
		return kindNone
	}
	if v, ok := k.seen.Load(kind); ok {
		return v.(string)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if v, ok := k.seen.Load(kind); ok {
		return v.(string)
	}
	if k.n == maxKinds {
		return kindOther // not stored: the map stays bounded too
	}
	k.n++
	v := strings.ToValidUTF8(kind, "\uFFFD")
	k.seen.Store(kind, v)
	return v
}

// NewObserver registers the observer's series on reg and returns a
// trafikey.Observer, for trafikey.QueueOptions.Observer, that counts into them. One
// Observer serves any number of queues.
func NewObserver(reg prometheus.Registerer) (trafikey.Observer, error) {
	queue, job := []string{"queue"}, []string{"queue", "kind"}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, labels)
	}
	o := &observer{
		added:            counter("jobs_added_total", "Jobs added through this process.", job),
		claimed:          counter("jobs_claimed_total", "Jobs claimed by this process.", job),
		completed:        counter("jobs_completed_total", "Jobs completed by this process's workers.", job),
		failed:           counter("jobs_failed_total", "Failed attempts reported by this process's workers.", job),
		retried:          counter("jobs_retried_total", "Failed attempts scheduled to run again.", job),
		dead:             counter("jobs_dead_total", "Jobs dead-lettered by this process's workers.", job),
		lost:             counter("jobs_lost_total", "Claims whose lease was lost while the handler ran.", job),
		cancelled:        counter("jobs_cancelled_total", "Jobs cancelled (Queue.Cancel) while this process's workers ran them.", job),
		recoveredPending: counter("leases_recovered_total", "Expired leases put back to pending by this process.", queue),
		recoveredDead:    counter("leases_dead_total", "Expired leases dead-lettered by this process.", queue),
		rateLimited:      counter("claims_rate_limited_total", "Claims of this process's workers refused by the queue's rate limit.", queue),
		running: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "jobs_running", Help: "Handlers running now in this process's workers.",
		}, job),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "job_duration_seconds", Help: "Handler run time.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, job),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "job_wait_seconds",
			Help:    "How long jobs claimed by this process waited between their add and their first claim (server clock), of the jobs added to run at once; retries and delayed jobs are not observed.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, job),
	}
	for _, c := range []prometheus.Collector{
		o.added, o.claimed, o.completed, o.failed, o.retried, o.dead, o.lost, o.cancelled,
		o.recoveredPending, o.recoveredDead, o.rateLimited, o.running, o.duration, o.wait,
	} {
		if err := reg.Register(c); err != nil {
			return trafikey.Observer{}, err
		}
	}
	return trafikey.Observer{
		JobsAdded:        o.jobsAdded,
		JobsClaimed:      o.jobsClaimed,
		JobWaited:        o.jobWaited,
		JobStarted:       o.jobStarted,
		JobFinished:      o.jobFinished,
		LeasesRecovered:  o.leasesRecovered,
		ClaimRateLimited: o.claimRateLimited,
	}, nil
}

func (o *observer) jobsAdded(queue, kind string, n int) {
	o.added.WithLabelValues(queue, o.kinds.of(kind)).Add(float64(n))
}

func (o *observer) jobsClaimed(queue, kind string, n int) {
	o.claimed.WithLabelValues(queue, o.kinds.of(kind)).Add(float64(n))
}

func (o *observer) jobWaited(job *trafikey.Job, d time.Duration) {
	o.wait.WithLabelValues(job.Queue().Name(), o.kinds.of(job.Kind)).Observe(d.Seconds())
}

func (o *observer) jobStarted(job *trafikey.Job) {
	o.running.WithLabelValues(job.Queue().Name(), o.kinds.of(job.Kind)).Inc()
}

func (o *observer) jobFinished(job *trafikey.Job, outcome trafikey.Outcome, d time.Duration) {
	q, k := job.Queue().Name(), o.kinds.of(job.Kind)
	o.running.WithLabelValues(q, k).Dec()
	o.duration.WithLabelValues(q, k).Observe(d.Seconds())
	switch outcome {
	case trafikey.OutcomeCompleted:
		o.completed.WithLabelValues(q, k).Inc()
	case trafikey.OutcomeRetrying:
		o.failed.WithLabelValues(q, k).Inc()
		o.retried.WithLabelValues(q, k).Inc()
	case trafikey.OutcomeDead:
		o.failed.WithLabelValues(q, k).Inc()
		o.dead.WithLabelValues(q, k).Inc()
	case trafikey.OutcomeLeaseLost:
		o.lost.WithLabelValues(q, k).Inc()
	case trafikey.OutcomeCancelled:
		o.cancelled.WithLabelValues(q, k).Inc()
	}
}

func (o *observer) leasesRecovered(queue string, pending, dead int) {
	o.recoveredPending.WithLabelValues(queue).Add(float64(pending))
	o.recoveredDead.WithLabelValues(queue).Add(float64(dead))
}

func (o *observer) claimRateLimited(queue string, _ time.Duration) {
	o.rateLimited.WithLabelValues(queue).Inc()
}

// DefaultScrapeTimeout bounds the reads of one scrape.
const DefaultScrapeTimeout = 5 * time.Second

// scrapeParallel is how many queues a scrape reads at once.
const scrapeParallel = 16

// QueueSource lists the queues a QueueCollector reports, at each scrape:
// for a process whose set of queues changes (a dashboard that finds them
// on the server).
type QueueSource func(ctx context.Context) ([]*trafikey.Queue, error)

// CollectorOptions tune a QueueCollector.
type CollectorOptions struct {
	// Timeout bounds the reads of one scrape; 0 is DefaultScrapeTimeout.
	Timeout time.Duration
	// MaxLanes, when above 0, adds per-lane series for up to that many
	// lanes of each queue (in name order), read with LANES at every
	// scrape. Each lane is a few series: keep it to the lanes a dashboard
	// can show.
	MaxLanes int
}

// QueueCollector reports what the server holds of queues, read at every
// scrape with one STATS call per queue, a JOBS call of one row for the
// queue's latency, and the worker registry (and LANES and a row per lane,
// with per-lane series): jobs by state, paused, lanes, the rate limit, the
// lifetime counters of every client and worker, the latency (how long the
// oldest waiting job has waited since it was added), and the workers
// running on the queue with their jobs in hand. A partitioned queue's
// series are its partitions' summed (its one STATS read covers them all),
// and it adds its jobs by state and its counters of added, completed and
// failed jobs per partition, labeled with the partition's hash tag. A
// queue whose reads fail is left out of that scrape and counted in
// trafikey_queue_scrape_errors_total.
type QueueCollector struct {
	source QueueSource
	opts   CollectorOptions

	jobs, paused, lanes, laneWaiting, rateLimit, rateWindow *prometheus.Desc
	totals                                                  []*prometheus.Desc
	laneJobs, laneCap, lanePaused, laneLatency              *prometheus.Desc
	latency, workers, workerJobs                            *prometheus.Desc
	partitions, partJobs                                    *prometheus.Desc
	partTotals                                              []*prometheus.Desc
	errors                                                  prometheus.Counter
}

// NewQueueCollector returns a collector of the given queues. Register it on
// a registry; each scrape reads every queue within DefaultScrapeTimeout.
func NewQueueCollector(queues ...*trafikey.Queue) *QueueCollector {
	return NewQueueSourceCollector(func(context.Context) ([]*trafikey.Queue, error) { return queues, nil }, CollectorOptions{})
}

// NewQueueSourceCollector returns a collector of the queues source lists
// at each scrape. A source error is counted in
// trafikey_queue_scrape_errors_total and reports no queue.
func NewQueueSourceCollector(source QueueSource, o CollectorOptions) *QueueCollector {
	if o.Timeout <= 0 {
		o.Timeout = DefaultScrapeTimeout
	}
	q := []string{"queue"}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(namespace+"_"+name, help, append(q, labels...), nil)
	}
	c := &QueueCollector{
		source:      source,
		opts:        o,
		jobs:        desc("queue_jobs", "Jobs in the queue by state, as the server counts them.", "state"),
		paused:      desc("queue_paused", "1 when the queue is paused."),
		lanes:       desc("queue_lanes", "Lanes of the queue with waiting or active jobs."),
		laneWaiting: desc("queue_lane_waiting_jobs", "Pending jobs of the queue that wait in a lane (part of the pending state)."),
		rateLimit:   desc("queue_rate_limit", "Most jobs claimed per rate window; 0 when the queue has no rate limit."),
		rateWindow:  desc("queue_rate_window_seconds", "The queue's rate window; 0 when it has no rate limit."),
		totals: []*prometheus.Desc{
			desc("queue_added_total", "Jobs ever added to the queue, by any client."),
			desc("queue_completed_total", "Jobs ever completed in the queue, by any worker."),
			desc("queue_failed_total", "Failed attempts in the queue, retried or dead-lettered, by any worker."),
			desc("queue_retried_total", "Failed attempts of the queue scheduled to run again."),
			desc("queue_dead_total", "Jobs of the queue dead-lettered, by failure or lease expiry."),
			desc("queue_recovered_total", "Expired leases of the queue put back to pending."),
			desc("queue_removed_total", "Jobs removed from the queue."),
			desc("queue_requeued_total", "Dead jobs of the queue requeued."),
			desc("queue_cancelled_total", "Jobs of the queue cancelled (among the dead ones)."),
		},
		laneJobs:    desc("lane_jobs", "Jobs of a lane by state: waiting (pending in the lane) or active.", "lane", "state"),
		laneCap:     desc("lane_cap", "Most jobs of a lane active at once; 0 for no cap.", "lane"),
		lanePaused:  desc("lane_paused", "1 when the lane is paused.", "lane"),
		laneLatency: desc("lane_latency_seconds", "How long the lane's oldest waiting job has waited since it was added (this process's clock); 0 when the lane has none waiting.", "lane"),
		latency:     desc("queue_latency_seconds", "How long the oldest waiting job among those without a lane has waited since it was added (this process's clock); 0 when none waits."),
		workers:     desc("queue_workers", "Workers running on the queue, as they registered themselves."),
		workerJobs:  desc("queue_worker_jobs_running", "Handlers the queue's registered workers run now, as they last registered."),
		partitions:  desc("queue_partitions", "Partitions of a partitioned queue, whose series above are its partitions' summed; 0 for a queue never partitioned."),
		partJobs:    desc("queue_partition_jobs", "Jobs in one partition of a partitioned queue by state, as the server counts them; summed over the partitions, trafikey_queue_jobs.", "partition", "state"),
		partTotals: []*prometheus.Desc{
			desc("queue_partition_added_total", "Jobs ever added to one partition of a partitioned queue.", "partition"),
			desc("queue_partition_completed_total", "Jobs ever completed in one partition of a partitioned queue.", "partition"),
			desc("queue_partition_failed_total", "Failed attempts in one partition of a partitioned queue, retried or dead-lettered.", "partition"),
		},
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "queue_scrape_errors_total",
			Help: "Reads of a scrape that failed: listing the queues, or a queue's STATS or LANES.",
		}),
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *QueueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range slices.Concat([]*prometheus.Desc{c.jobs, c.paused, c.lanes, c.laneWaiting, c.rateLimit, c.rateWindow, c.latency, c.workers, c.workerJobs, c.partitions, c.partJobs}, c.totals, c.partTotals) {
		ch <- d
	}
	if c.opts.MaxLanes > 0 {
		ch <- c.laneJobs
		ch <- c.laneCap
		ch <- c.lanePaused
		ch <- c.laneLatency
	}
	c.errors.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c *QueueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
	defer cancel()
	queues, err := c.source(ctx)
	if err != nil {
		c.errors.Inc()
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, scrapeParallel)
	for _, q := range queues {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := c.collectQueue(ctx, q, ch); err != nil {
				c.errors.Inc()
			}
		})
	}
	wg.Wait()
	c.errors.Collect(ch)
}

// collectQueue reads one queue and sends its series, all or none.
func (c *QueueCollector) collectQueue(ctx context.Context, q *trafikey.Queue, ch chan<- prometheus.Metric) error {
	s, err := q.Stats(ctx)
	if err != nil {
		return err
	}
	var lanes []trafikey.LaneInfo
	if c.opts.MaxLanes > 0 && s.Lanes > 0 {
		for l, err := range q.Lanes(ctx) {
			if err != nil {
				return err
			}
			if len(lanes) == c.opts.MaxLanes {
				break
			}
			lanes = append(lanes, l)
		}
	}
	latency, err := oldestAge(ctx, q, "")
	if err != nil {
		return err
	}
	laneLatency := make([]float64, len(lanes))
	for i, l := range lanes {
		if laneLatency[i], err = oldestAge(ctx, q, l.Name); err != nil {
			return err
		}
	}
	workers, err := q.Admin().Workers(ctx)
	if err != nil {
		return err
	}
	running := 0
	for _, w := range workers {
		running += w.Running
	}
	name := q.Name()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{name}, labels...)...)
	}
	for state, n := range jobsByState(s) {
		gauge(c.jobs, float64(n), string(state))
	}
	gauge(c.partitions, float64(len(s.Partitions)))
	for _, p := range s.Partitions {
		for state, n := range jobsByState(p) {
			gauge(c.partJobs, float64(n), p.Partition, string(state))
		}
		for i, v := range []int{p.TotalAdded, p.TotalCompleted, p.TotalFailed} {
			ch <- prometheus.MustNewConstMetric(c.partTotals[i], prometheus.CounterValue, float64(v), name, p.Partition)
		}
	}
	gauge(c.paused, flag(s.Paused))
	gauge(c.lanes, float64(s.Lanes))
	gauge(c.laneWaiting, float64(s.LaneWaiting))
	gauge(c.rateLimit, float64(s.RateLimit))
	gauge(c.rateWindow, s.RateWindow.Seconds())
	gauge(c.latency, latency)
	gauge(c.workers, float64(len(workers)))
	gauge(c.workerJobs, float64(running))
	for i, v := range []int{
		s.TotalAdded, s.TotalCompleted, s.TotalFailed, s.TotalRetried,
		s.TotalDead, s.TotalRecovered, s.TotalRemoved, s.TotalRequeued,
		s.TotalCancelled,
	} {
		ch <- prometheus.MustNewConstMetric(c.totals[i], prometheus.CounterValue, float64(v), name)
	}
	for i, l := range lanes {
		gauge(c.laneLatency, laneLatency[i], l.Name)
		gauge(c.laneJobs, float64(l.Waiting), l.Name, "waiting")
		gauge(c.laneJobs, float64(l.Active), l.Name, "active")
		gauge(c.laneCap, float64(l.Cap), l.Name)
		gauge(c.lanePaused, flag(l.Paused), l.Name)
	}
	return nil
}

// jobsByState are the counts of s by state, as trafikey_queue_jobs has them.
func jobsByState(s trafikey.Stats) map[trafikey.JobState]int {
	return map[trafikey.JobState]int{
		trafikey.StatePending: s.Pending, trafikey.StateDelayed: s.Delayed,
		trafikey.StateActive: s.Active, trafikey.StateDead: s.Dead,
		trafikey.StateWaiting: s.Waiting, trafikey.StateCompleted: s.Retained,
	}
}

// oldestAge is how long the oldest waiting job of lane ("" for the jobs
// without a lane) has waited since it was added, in seconds: 0 when none
// waits. The dashboard's queue page shows the same latencies.
func oldestAge(ctx context.Context, q *trafikey.Queue, lane string) (float64, error) {
	added, err := latency.Oldest(ctx, q, lane)
	return latency.Since(added, time.Now()).Seconds(), err
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
