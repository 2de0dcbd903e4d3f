package trafikey

import (
	"context"
	"time"
)

// sharedDeadline returns a context for a call made on behalf of callers
// with the given deadlines (zero: none): it ends at the latest of them, or
// never when one has none, so that no caller's short deadline fails the
// call for the others.
func sharedDeadline(deadlines []time.Time) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, d := range deadlines {
		if d.IsZero() {
			return context.WithCancel(context.Background())
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(context.Background(), latest)
}
