package trafikey_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
)

// TestObserverJobWaited: a job added to run at once is reported, on its
// first claim, with how long it waited since its Add by the server's clock
// (held between zero and the time this test saw pass around the Add and
// the Claim, on one machine's clock); a retry and a job added with a delay
// are not reported.
func TestObserverJobWaited(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		var mu sync.Mutex
		waited := map[string]time.Duration{}
		q := b.open(t, "waits", trafikey.QueueOptions{Observer: trafikey.Observer{JobWaited: func(j *trafikey.Job, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			require.NotContains(t, waited, j.ID, "reported once")
			waited[j.ID] = d
		}}})
		waitOf := func(id string) (time.Duration, bool) {
			mu.Lock()
			defer mu.Unlock()
			d, ok := waited[id]
			return d, ok
		}
		before := time.Now()
		ready, err := q.Add(ctx, []byte("ready"), nil)
		require.NoError(t, err)
		_, err = q.Add(ctx, []byte("later"), &trafikey.JobOptions{Delay: time.Millisecond})
		require.NoError(t, err)
		j := claimOne(t, q, time.Minute)
		after := time.Now()
		require.Equal(t, ready, j.ID)
		d, known := waitOf(ready)
		require.True(t, known, "the first claim of a job added ready")
		// the server's ms clock against this one's: a ms either way
		require.GreaterOrEqual(t, d, time.Duration(0))
		require.LessOrEqual(t, d, after.Sub(before)+2*time.Millisecond)

		// its retry, and the delayed job: moved since their add
		retrying, err := j.Fail(ctx, nil, true)
		require.NoError(t, err)
		require.True(t, retrying)
		n, err := q.Admin().PromoteAll(ctx, nil) // both, due or not
		require.NoError(t, err)
		require.Equal(t, 2, n)
		for range 2 {
			claimOne(t, q, time.Minute)
		}
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, waited, 1, "no other job reported")
	})
}
