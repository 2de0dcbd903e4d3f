package trafikey

import (
	"slices"
	"time"
)

// Observer is told what a Queue and the Workers on it do, for metrics and
// tracing; QueueOptions.Observer installs one. Each field is optional: a nil field
// is skipped, so an Observer sets only the events it wants, and a field
// added here later leaves existing Observers compiling. The trafikeyprom
// module builds one that counts into Prometheus series.
//
// The funcs are called synchronously on the goroutine that did the work,
// so they must be quick and safe for concurrent use.
//
// A job's kind (JobOptions.Kind, Job.Kind) is passed where the job is
// known: JobsAdded and JobsClaimed report a call's jobs once per kind, and
// JobStarted and JobFinished have the job. A kind is empty for a job added
// without one.
type Observer struct {
	// JobsAdded: n jobs (n > 0) of kind were added to queue by this
	// client. A call that adds jobs of several kinds reports once per
	// kind, in the order the kinds first appear in it.
	JobsAdded func(queue, kind string, n int)
	// JobsClaimed: n jobs (n > 0) of kind were claimed from queue by this
	// client, once per kind of the call as JobsAdded. The kind is empty
	// too when the server's CLAIM replies no kinds (a dataset older than
	// the extended rows).
	JobsClaimed func(queue, kind string, n int)
	// JobWaited: job, just claimed by this client, had waited d between
	// its add and this, its first claim, by the server's clock (its
	// lane's turn included). Only jobs added to run at once are reported:
	// a retry, or a job added with a delay or a run time, a flow's parent,
	// or one promoted, requeued or recovered since its add is not, as no
	// row records when it became ready. Setting it makes the queue's
	// claims read each job's wait (two more fields of its row); a Worker
	// of the queue then also counts the waits in its registry record
	// (WorkerInfo.Waited).
	JobWaited func(job *Job, d time.Duration)
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

// jobsAdded reports the jobs of an ADD call, its arguments' job groups as
// JobOptions.args builds them (jobArgs each), once per kind.
func (o *Observer) jobsAdded(queue string, jobs []string) {
	if o.JobsAdded != nil {
		byKind(len(jobs)/jobArgs, func(i int) string { return jobs[i*jobArgs+colKind] }, func(kind string, n int) {
			o.JobsAdded(queue, kind, n)
		})
	}
}

// jobsAddedOfKind reports n jobs added, all of one kind.
func (o *Observer) jobsAddedOfKind(queue, kind string, n int) {
	if o.JobsAdded != nil && n > 0 {
		o.JobsAdded(queue, kind, n)
	}
}

func (o *Observer) jobsClaimed(queue string, jobs []*Job) {
	if o.JobsClaimed != nil {
		byKind(len(jobs), func(i int) string { return jobs[i].Kind }, func(kind string, n int) {
			o.JobsClaimed(queue, kind, n)
		})
	}
}

// byKind counts n jobs by kindOf(i) and reports each kind's count, in the
// order the kinds first appear. A call's jobs mostly share one kind, or a
// few: the kinds are kept in a slice, not a map.
func byKind(n int, kindOf func(i int) string, report func(kind string, n int)) {
	var kinds []string
	var counts []int
	for i := range n {
		k := kindOf(i)
		j := slices.Index(kinds, k)
		if j < 0 {
			kinds, counts = append(kinds, k), append(counts, 0)
			j = len(kinds) - 1
		}
		counts[j]++
	}
	for j, k := range kinds {
		report(k, counts[j])
	}
}

// jobsWaited reports the waits known of a claim's jobs.
func (o *Observer) jobsWaited(jobs []*Job) {
	if o.JobWaited != nil {
		for _, j := range jobs {
			if j.waitKnown {
				o.JobWaited(j, j.waited)
			}
		}
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
