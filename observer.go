package trafikey

import "time"

// Observer is told what a Queue and the Workers on it do, for metrics and
// tracing; WithObserver installs one. The trafikeyprom module implements it
// with Prometheus series. Methods are called synchronously on the goroutine
// that did the work, so they must be quick and safe for concurrent use.
//
// Embed BaseObserver in an implementation to keep it compiling when methods
// are added here.
type Observer interface {
	// JobsAdded: n jobs were added to queue by this client.
	JobsAdded(queue string, n int)
	// JobsClaimed: n jobs (n > 0) were claimed from queue by this client.
	JobsClaimed(queue string, n int)
	// JobStarted: a worker's handler starts on job.
	JobStarted(job *Job)
	// JobFinished: a worker's handler returned after d and the job's
	// outcome is known.
	JobFinished(job *Job, outcome Outcome, d time.Duration)
	// LeasesRecovered: a RECOVER put pending jobs back to pending and
	// dead-lettered dead jobs of queue whose leases had expired.
	LeasesRecovered(queue string, pending, dead int)
	// ClaimRateLimited: a worker's claim on queue was refused by the
	// queue's rate limit, and the worker waits wait before its next claim.
	ClaimRateLimited(queue string, wait time.Duration)
}

// BaseObserver implements every Observer method as a no-op.
type BaseObserver struct{}

// JobsAdded implements Observer.
func (BaseObserver) JobsAdded(string, int) {}

// JobsClaimed implements Observer.
func (BaseObserver) JobsClaimed(string, int) {}

// JobStarted implements Observer.
func (BaseObserver) JobStarted(*Job) {}

// JobFinished implements Observer.
func (BaseObserver) JobFinished(*Job, Outcome, time.Duration) {}

// LeasesRecovered implements Observer.
func (BaseObserver) LeasesRecovered(string, int, int) {}

// ClaimRateLimited implements Observer.
func (BaseObserver) ClaimRateLimited(string, time.Duration) {}
