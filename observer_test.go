package trafikey_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
)

// TestObserverKinds: JobsAdded and JobsClaimed report a call's jobs once
// per kind, in the order the kinds first appear, whichever call added
// them (Add, AddBatch, AddFlow).
func TestObserverKinds(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		type report struct {
			op, kind string
			n        int
		}
		var (
			mu   sync.Mutex
			seen []report
		)
		rec := func(op string) func(string, string, int) {
			return func(_, kind string, n int) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, report{op, kind, n})
			}
		}
		take := func() []report {
			mu.Lock()
			defer mu.Unlock()
			out := seen
			seen = nil
			return out
		}
		q := b.open(t, "kinds", trafikey.QueueOptions{Observer: trafikey.Observer{
			JobsAdded: rec("added"), JobsClaimed: rec("claimed"),
		}})
		spec := func(kind string) trafikey.JobSpec {
			return trafikey.JobSpec{Payload: []byte("p"), Options: trafikey.JobOptions{Kind: kind}}
		}
		_, err := q.AddBatch(ctx, []trafikey.JobSpec{spec("b"), spec(""), spec("b"), spec("a"), spec("")})
		require.NoError(t, err)
		require.Equal(t, []report{{"added", "b", 2}, {"added", "", 2}, {"added", "a", 1}}, take())

		_, err = q.Add(ctx, []byte("p"), &trafikey.JobOptions{Kind: "a"})
		require.NoError(t, err)
		require.Equal(t, []report{{"added", "a", 1}}, take())

		root := spec("parent")
		root.Children = []trafikey.JobSpec{spec("child"), spec("child")}
		_, err = q.AddFlow(ctx, root)
		require.NoError(t, err)
		require.Equal(t, []report{{"added", "parent", 1}, {"added", "child", 2}}, take())

		// claim order: the batch's five jobs, then the a, then the children
		jobs, err := q.Claim(ctx, time.Minute, 1000)
		require.NoError(t, err)
		require.Len(t, jobs, 8)
		require.Equal(t, []report{{"claimed", "b", 2}, {"claimed", "", 2}, {"claimed", "a", 2}, {"claimed", "child", 2}}, take())
	})
}
