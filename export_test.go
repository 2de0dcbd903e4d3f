package trafikey

import (
	"time"

	"github.com/trafikey/trafikey/internal/executor"
)

// WithRunner returns a copy of o (nil: the defaults) whose queue runs its
// verbs on r: the package's external tests wrap the real executors to count
// or alter calls.
func WithRunner(r executor.Executor, o *QueueOptions) *QueueOptions {
	var c QueueOptions
	if o != nil {
		c = *o
	}
	c.runner = r
	return &c
}

// WithPartitionRefresh returns a copy of o whose handle of a partitioned
// queue reads its partitions again every d when it adds, for the tests of
// a growth seen by a producer.
func WithPartitionRefresh(o *QueueOptions, d time.Duration) *QueueOptions {
	c := *o
	c.partsEvery = d
	return &c
}

// HashSlot exposes hashSlot, to check it against CLUSTER KEYSLOT.
var HashSlot = hashSlot

// WithRegisterEvery returns o with the worker registration's period d, for
// the tests that see a record renewed.
func WithRegisterEvery(o WorkerOptions, d time.Duration) WorkerOptions {
	o.registerEvery = d
	return o
}

// WithWorkerRefresh returns o with the worker's reads of its queues'
// partitions every d, for the tests that keep a worker's set behind its
// handle's partitions.
func WithWorkerRefresh(o WorkerOptions, d time.Duration) WorkerOptions {
	o.refreshEvery = d
	return o
}

// WithClaimLoops returns o with n claim loops, for the tests and benchmarks
// of claim loops other than the default.
func WithClaimLoops(o WorkerOptions, n int) WorkerOptions {
	o.claimLoops = n
	return o
}
