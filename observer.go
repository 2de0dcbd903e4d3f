package trafikey

import "time"

// Observer is told what a Queue and the Workers on it do, for metrics and
// tracing; QueueOptions.Observer installs one. Each field is optional: a nil field
// is skipped, so an Observer sets only the events it wants, and a field
// added here later leaves existing Observers compiling. The trafikeyprom
// module builds one that counts into Prometheus series.
//
// The funcs are called synchronously on the goroutine that did the work,
// so they must be quick and safe for concurrent use.
type Observer struct {
	// JobsAdded: n jobs were added to queue by this client.
	JobsAdded func(queue string, n int)
	// JobsClaimed: n jobs (n > 0) were claimed from queue by this client.
	JobsClaimed func(queue string, n int)
	// JobStarted: a worker's handler starts on job.
	JobStarted func(job *Job)
	// JobFinished: a worker's handler returned after d and the job's
	// outcome is known.
	JobFinished func(job *Job, outcome Outcome, d time.Duration)
	// LeasesRecovered: a RECOVER put pending jobs back to pending and
	// dead-lettered dead jobs of queue whose leases had expired.
	LeasesRecovered func(queue string, pending, dead int)
	// ClaimRateLimited: a worker's claim on queue was refused by the
	// queue's rate limit, and the worker waits wait before its next claim.
	ClaimRateLimited func(queue string, wait time.Duration)
}

// The helpers below skip a nil field, so each call site stays one line.
// They take a pointer so that calling one copies no funcs.

func (o *Observer) jobsAdded(queue string, n int) {
	if o.JobsAdded != nil {
		o.JobsAdded(queue, n)
	}
}

func (o *Observer) jobsClaimed(queue string, n int) {
	if o.JobsClaimed != nil {
		o.JobsClaimed(queue, n)
	}
}

func (o *Observer) jobStarted(job *Job) {
	if o.JobStarted != nil {
		o.JobStarted(job)
	}
}

func (o *Observer) jobFinished(job *Job, outcome Outcome, d time.Duration) {
	if o.JobFinished != nil {
		o.JobFinished(job, outcome, d)
	}
}

func (o *Observer) leasesRecovered(queue string, pending, dead int) {
	if o.LeasesRecovered != nil {
		o.LeasesRecovered(queue, pending, dead)
	}
}

func (o *Observer) claimRateLimited(queue string, wait time.Duration) {
	if o.ClaimRateLimited != nil {
		o.ClaimRateLimited(queue, wait)
	}
}
