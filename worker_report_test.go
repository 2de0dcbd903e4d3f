package trafikey_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
)

// TestWorkerReportTimeoutBoundsAPausedServer: handlers return while the
// server holds every write (CLIENT PAUSE WRITE, for a minute), so their
// completions wait in calls that get no reply. ReportTimeout still bounds
// each report, though no job has a timer of its own: every job ends
// unreported with DeadlineExceeded while the server is still paused, and
// is left to lease recovery (or completed by a held call once the pause
// ends).
func TestWorkerReportTimeoutBoundsAPausedServer(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		const n = 20
		addN(t, b.q, n)
		h, allStarted, release := holdJobs(n)
		outcomes := make(chan error, n)
		w := newWorker(t, b.q, h, trafikey.WorkerOptions{
			Concurrency: n, Lease: time.Minute, ReportTimeout: 300 * time.Millisecond,
			OnDone: func(_ *trafikey.Job, o trafikey.Outcome, err error) {
				if o != trafikey.OutcomeUnreported {
					err = errors.Join(errors.New(string(o)), err)
				}
				outcomes <- err
			},
		})
		stop := runWorker(t, w)
		<-allStarted

		b.do(t, "CLIENT", "PAUSE", "60000", "WRITE")
		unpaused := false
		unpause := func() {
			if !unpaused {
				unpaused = true
				b.do(t, "CLIENT", "UNPAUSE")
			}
		}
		t.Cleanup(unpause)
		close(release)
		for range n {
			select {
			case err := <-outcomes:
				require.ErrorIs(t, err, context.DeadlineExceeded)
			case <-time.After(eventually):
				t.Fatal("a report outlived its ReportTimeout on a paused server")
			}
		}
		unpause()
		require.NoError(t, stop())
		require.Equal(t, trafikey.WorkerInfo{Abandoned: n}, counters(w.Info()))
		// A call the pause held runs once the server is back, so some
		// jobs may be completed after all; the others wait for recovery.
		st := stats(t, b.q)
		require.Equal(t, n, st.Active+st.TotalCompleted)
		require.Zero(t, st.Pending+st.Delayed+st.Dead)
	})
}
