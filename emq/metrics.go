package emq

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Prometheus series of one queue, registered by
// WithMetrics. A nil *metrics records nothing, so callers never check.
type metrics struct {
	nAdded, nClaimed, nCompleted, nFailed, nRetried, nDead, nLost prometheus.Counter
	nRecoveredPending, nRecoveredDead                             prometheus.Counter
	running                                                       prometheus.Gauge
	duration                                                      prometheus.Observer
}

func newMetrics(reg prometheus.Registerer, queue string) (*metrics, error) {
	labels := prometheus.Labels{"queue": queue}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "trafikey", Name: name, Help: help, ConstLabels: labels,
		})
	}
	m := &metrics{
		nAdded:            counter("jobs_added_total", "Jobs added through this client."),
		nClaimed:          counter("jobs_claimed_total", "Jobs claimed by this client."),
		nCompleted:        counter("jobs_completed_total", "Jobs completed by this client's workers."),
		nFailed:           counter("jobs_failed_total", "Failed attempts reported by this client's workers."),
		nRetried:          counter("jobs_retried_total", "Failed attempts scheduled to run again."),
		nDead:             counter("jobs_dead_total", "Jobs dead-lettered by this client's workers."),
		nLost:             counter("jobs_lost_total", "Claims whose lease was lost while the handler ran."),
		nRecoveredPending: counter("leases_recovered_total", "Expired leases put back to pending by this client."),
		nRecoveredDead:    counter("leases_dead_total", "Expired leases dead-lettered by this client."),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "trafikey", Name: "jobs_running", Help: "Handlers running now in this client's workers.",
			ConstLabels: labels,
		}),
	}
	hist := prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "trafikey", Name: "job_duration_seconds", Help: "Handler run time.",
		ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
	})
	register := func(c prometheus.Collector) (prometheus.Collector, error) {
		if err := reg.Register(c); err != nil {
			// A queue opened twice on one registry shares its series.
			if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
				return are.ExistingCollector, nil
			}
			return nil, err
		}
		return c, nil
	}
	for _, p := range []*prometheus.Counter{
		&m.nAdded, &m.nClaimed, &m.nCompleted, &m.nFailed, &m.nRetried, &m.nDead, &m.nLost,
		&m.nRecoveredPending, &m.nRecoveredDead,
	} {
		c, err := register(*p)
		if err != nil {
			return nil, err
		}
		*p = c.(prometheus.Counter)
	}
	g, err := register(m.running)
	if err != nil {
		return nil, err
	}
	m.running = g.(prometheus.Gauge)
	h, err := register(hist)
	if err != nil {
		return nil, err
	}
	m.duration = h.(prometheus.Histogram)
	return m, nil
}

func (m *metrics) added(n int) {
	if m != nil {
		m.nAdded.Add(float64(n))
	}
}

func (m *metrics) claimed(n int) {
	if m != nil && n > 0 {
		m.nClaimed.Add(float64(n))
	}
}

func (m *metrics) recovered(pending, dead int) {
	if m != nil {
		m.nRecoveredPending.Add(float64(pending))
		m.nRecoveredDead.Add(float64(dead))
	}
}

func (m *metrics) started() {
	if m != nil {
		m.running.Inc()
	}
}

// finished records a handler that ran for d and the outcome it led to.
func (m *metrics) finished(d time.Duration, o Outcome) {
	if m == nil {
		return
	}
	m.running.Dec()
	m.duration.Observe(d.Seconds())
	switch o {
	case OutcomeCompleted:
		m.nCompleted.Inc()
	case OutcomeRetrying:
		m.nFailed.Inc()
		m.nRetried.Inc()
	case OutcomeDead:
		m.nFailed.Inc()
		m.nDead.Inc()
	case OutcomeLost:
		m.nLost.Inc()
	}
}
