package trafikey

// WithRunner exposes withRunner to the package's external tests, which wrap
// the real executors to count or alter calls.
var WithRunner = withRunner

// HashSlot exposes hashSlot, to check it against CLUSTER KEYSLOT.
var HashSlot = hashSlot
