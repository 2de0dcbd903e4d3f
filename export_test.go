package trafikey

// WithRunner exposes withRunner to the package's external tests, which wrap
// the real executors to count or alter calls.
var WithRunner = withRunner

// HashSlot exposes hashSlot, to check it against CLUSTER KEYSLOT.
var HashSlot = hashSlot

// WithClaimLoops returns o with n claim loops, for the tests and benchmarks
// of claim loops other than the default.
func WithClaimLoops(o WorkerOptions, n int) WorkerOptions {
	o.claimLoops = n
	return o
}
