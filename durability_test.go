package trafikey_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/protocol"
)

// TestKillNineLosesNoAcknowledgedJob kills the server with SIGKILL while
// producers add and a consumer claims and completes, with appendfsync
// always. Restarted from its AOF, the server holds a row for every job whose
// ADD was acknowledged and that was never completed, and no row for a job
// whose COMPLETE was acknowledged.
func TestKillNineLosesNoAcknowledgedJob(t *testing.T) {
	t.Parallel()
	for _, e := range executors() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			s, c, exec := e.start(t, valkeyserver.Options{AOF: true})
			q, err := trafikey.Open(t.Context(), c, "durable", trafikey.WithRunner(exec))
			require.NoError(t, err)

			var mu sync.Mutex
			added := map[string]bool{}
			completed := map[string]bool{}
			// A COMPLETE cut off by the kill may or may not have been applied:
			// such a job may be found either way.
			inFlight := map[string]bool{}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for ctx.Err() == nil {
						id, err := q.Add(ctx, []byte("durable job"))
						if err != nil {
							continue // unacknowledged: the server may be gone
						}
						mu.Lock()
						added[id] = true
						mu.Unlock()
					}
				})
			}
			wg.Go(func() {
				for ctx.Err() == nil {
					jobs, err := q.Claim(ctx, time.Minute, 16)
					if err != nil {
						continue
					}
					for _, j := range jobs {
						mu.Lock()
						inFlight[j.ID] = true
						mu.Unlock()
						if j.Complete(ctx) == nil {
							mu.Lock()
							completed[j.ID] = true
							mu.Unlock()
						}
					}
				}
			})

			// Kill once enough work has been acknowledged on both sides.
			require.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(added) >= 2000 && len(completed) >= 200
			}, eventually, 5*time.Millisecond)
			require.NoError(t, s.Kill())
			cancel()
			wg.Wait()
			require.NoError(t, s.Restart(t.Context()))

			keys := protocol.KeysOf(q.Name())
			ids := make([]string, 0, len(added))
			for id := range added {
				ids = append(ids, id)
			}
			for id := range completed {
				require.True(t, added[id], "job %s completed but never acknowledged as added", id)
			}
			cmds := make(valkey.Commands, len(ids))
			for i, id := range ids {
				cmds[i] = c.B().Exists().Key(keys.Job(id)).Build()
			}
			var res []valkey.ValkeyResult
			require.Eventually(t, func() bool {
				res = c.DoMulti(t.Context(), cmds...)
				return !errors.Is(res[0].Error(), context.Canceled) && res[0].Error() == nil
			}, eventually, 50*time.Millisecond, "the client reconnects to the restarted server")
			lost, resurrected := 0, 0
			for i, r := range res {
				n, err := r.AsInt64()
				require.NoError(t, err)
				switch {
				case completed[ids[i]] && n != 0:
					resurrected++
				case !inFlight[ids[i]] && n != 1:
					lost++
				}
			}
			require.Zero(t, lost, "acknowledged jobs missing after kill -9 (of %d added, %d completed)", len(added), len(completed))
			require.Zero(t, resurrected, "acknowledged completions undone after kill -9")
			t.Logf("%s: %d acknowledged adds, %d acknowledged completes, all as acknowledged after kill -9", e.name, len(added), len(completed))
		})
	}
}
