// Package trafikeyprom exports trafikey's client-side events and queue
// depths as Prometheus series. It is a module of its own, so a program that
// uses trafikey without Prometheus links none of it.
//
// Two collectors, both registered on a registry the caller owns (nothing is
// registered globally):
//
//   - an Observer, installed with trafikey.WithObserver, counts what this
//     process's queues and workers do: jobs added, claimed, completed,
//     failed, retried, dead-lettered and lost, leases recovered, handlers
//     running, and handler run time;
//   - a QueueCollector reads each queue's STATS when scraped and reports
//     the jobs pending, delayed, active and dead, and whether it is paused,
//     as seen by the server, whatever process added or ran them.
//
// Every series carries the label queue.
package trafikeyprom

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trafikey/trafikey"
)

const namespace = "trafikey"

// Observer is a trafikey.Observer that counts into Prometheus series. One
// Observer serves any number of queues.
type Observer struct {
	trafikey.BaseObserver

	added, claimed, completed, failed, retried, dead, lost *prometheus.CounterVec
	recoveredPending, recoveredDead, rateLimited           *prometheus.CounterVec
	running                                                *prometheus.GaugeVec
	duration                                               *prometheus.HistogramVec
}

// NewObserver registers the observer's series on reg and returns it.
func NewObserver(reg prometheus.Registerer) (*Observer, error) {
	labels := []string{"queue"}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, labels)
	}
	o := &Observer{
		added:            counter("jobs_added_total", "Jobs added through this process."),
		claimed:          counter("jobs_claimed_total", "Jobs claimed by this process."),
		completed:        counter("jobs_completed_total", "Jobs completed by this process's workers."),
		failed:           counter("jobs_failed_total", "Failed attempts reported by this process's workers."),
		retried:          counter("jobs_retried_total", "Failed attempts scheduled to run again."),
		dead:             counter("jobs_dead_total", "Jobs dead-lettered by this process's workers."),
		lost:             counter("jobs_lost_total", "Claims whose lease was lost while the handler ran."),
		recoveredPending: counter("leases_recovered_total", "Expired leases put back to pending by this process."),
		recoveredDead:    counter("leases_dead_total", "Expired leases dead-lettered by this process."),
		rateLimited:      counter("claims_rate_limited_total", "Claims of this process's workers refused by the queue's rate limit."),
		running: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "jobs_running", Help: "Handlers running now in this process's workers.",
		}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "job_duration_seconds", Help: "Handler run time.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, labels),
	}
	for _, c := range []prometheus.Collector{
		o.added, o.claimed, o.completed, o.failed, o.retried, o.dead, o.lost,
		o.recoveredPending, o.recoveredDead, o.rateLimited, o.running, o.duration,
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// JobsAdded implements trafikey.Observer.
func (o *Observer) JobsAdded(queue string, n int) { o.added.WithLabelValues(queue).Add(float64(n)) }

// JobsClaimed implements trafikey.Observer.
func (o *Observer) JobsClaimed(queue string, n int) {
	o.claimed.WithLabelValues(queue).Add(float64(n))
}

// JobStarted implements trafikey.Observer.
func (o *Observer) JobStarted(job *trafikey.Job) {
	o.running.WithLabelValues(job.Queue().Name()).Inc()
}

// JobFinished implements trafikey.Observer.
func (o *Observer) JobFinished(job *trafikey.Job, outcome trafikey.Outcome, d time.Duration) {
	q := job.Queue().Name()
	o.running.WithLabelValues(q).Dec()
	o.duration.WithLabelValues(q).Observe(d.Seconds())
	switch outcome {
	case trafikey.OutcomeCompleted:
		o.completed.WithLabelValues(q).Inc()
	case trafikey.OutcomeRetrying:
		o.failed.WithLabelValues(q).Inc()
		o.retried.WithLabelValues(q).Inc()
	case trafikey.OutcomeDead:
		o.failed.WithLabelValues(q).Inc()
		o.dead.WithLabelValues(q).Inc()
	case trafikey.OutcomeLost:
		o.lost.WithLabelValues(q).Inc()
	}
}

// LeasesRecovered implements trafikey.Observer.
func (o *Observer) LeasesRecovered(queue string, pending, dead int) {
	o.recoveredPending.WithLabelValues(queue).Add(float64(pending))
	o.recoveredDead.WithLabelValues(queue).Add(float64(dead))
}

// ClaimRateLimited implements trafikey.Observer.
func (o *Observer) ClaimRateLimited(queue string, _ time.Duration) {
	o.rateLimited.WithLabelValues(queue).Inc()
}

// DefaultScrapeTimeout bounds the STATS calls of one scrape.
const DefaultScrapeTimeout = 5 * time.Second

// QueueCollector reports the depth of queues, read from the server with
// one STATS call per queue at every scrape. A queue whose STATS fails is
// left out of that scrape and counted in trafikey_queue_scrape_errors_total.
type QueueCollector struct {
	queues  []*trafikey.Queue
	timeout time.Duration

	jobs, paused, added, completed *prometheus.Desc
	errors                         prometheus.Counter
}

// NewQueueCollector returns a collector of the given queues' depths.
// Register it on a registry; each scrape reads every queue within
// DefaultScrapeTimeout.
func NewQueueCollector(queues ...*trafikey.Queue) *QueueCollector {
	return &QueueCollector{
		queues:  queues,
		timeout: DefaultScrapeTimeout,
		jobs: prometheus.NewDesc(namespace+"_queue_jobs",
			"Jobs in the queue by state, as the server counts them.", []string{"queue", "state"}, nil),
		paused: prometheus.NewDesc(namespace+"_queue_paused",
			"1 when the queue is paused.", []string{"queue"}, nil),
		added: prometheus.NewDesc(namespace+"_queue_added_total",
			"Jobs ever added to the queue, by any client.", []string{"queue"}, nil),
		completed: prometheus.NewDesc(namespace+"_queue_completed_total",
			"Jobs ever completed in the queue, by any worker.", []string{"queue"}, nil),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "queue_scrape_errors_total",
			Help: "STATS calls of a scrape that failed.",
		}),
	}
}

// Describe implements prometheus.Collector.
func (c *QueueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.paused
	ch <- c.added
	ch <- c.completed
	c.errors.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c *QueueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	for _, q := range c.queues {
		s, err := q.Stats(ctx)
		if err != nil {
			c.errors.Inc()
			continue
		}
		name := q.Name()
		for state, n := range map[trafikey.JobState]int64{
			trafikey.StatePending: s.Pending, trafikey.StateDelayed: s.Delayed,
			trafikey.StateActive: s.Active, trafikey.StateDead: s.Dead,
		} {
			ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(n), name, string(state))
		}
		paused := 0.0
		if s.Paused {
			paused = 1
		}
		ch <- prometheus.MustNewConstMetric(c.paused, prometheus.GaugeValue, paused, name)
		ch <- prometheus.MustNewConstMetric(c.added, prometheus.CounterValue, float64(s.TotalAdded), name)
		ch <- prometheus.MustNewConstMetric(c.completed, prometheus.CounterValue, float64(s.TotalCompleted), name)
	}
	c.errors.Collect(ch)
}
