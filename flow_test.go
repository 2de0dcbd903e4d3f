package trafikey_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// A parent runs after its children, and reads what they returned.
func TestFlowParentReadsChildResults(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q := b.q
		ids, err := q.AddFlow(t.Context(), trafikey.JobSpec{
			Payload: []byte("sum"),
			Children: []trafikey.JobSpec{
				{Payload: []byte("1")},
				{Payload: []byte("2"), Children: []trafikey.JobSpec{{Payload: []byte("20")}}},
				{Payload: []byte("3"), OnFail: trafikey.ChildRecorded, Options: trafikey.JobOptions{MaxAttempts: 1}},
			},
		})
		require.NoError(t, err)
		require.Len(t, ids.Children, 3)
		require.Len(t, ids.Children[1].Children, 1)
		info, err := q.Inspect(t.Context(), ids.ID)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateWaiting, info.State)
		require.Equal(t, 3, info.Waiting)
		require.Equal(t, 2, stats(t, q).Waiting, "the root and child 2 wait")

		var mu sync.Mutex
		var order []string
		var parentSaw []trafikey.ChildResult
		done := make(chan struct{})
		w, err := trafikey.NewWorker(q, func(ctx context.Context, j *trafikey.Job) error {
			mu.Lock()
			order = append(order, string(j.Payload))
			mu.Unlock()
			switch string(j.Payload) {
			case "3":
				return errors.New("three is broken")
			case "sum":
				res, err := j.Queue().Children(ctx, j.ID)
				parentSaw = res
				close(done)
				j.SetResult([]byte("total"))
				return err
			}
			j.SetResult([]byte("r" + string(j.Payload)))
			return nil
		}, trafikey.WorkerOptions{Concurrency: 4})
		require.NoError(t, err)
		runWorker(t, w)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("the parent never ran; order %q", order)
		}
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, "sum", order[len(order)-1], "the parent runs last: %q", order)
		require.Less(t, indexOf(order, "20"), indexOf(order, "2"), "a grandchild before its parent")
		require.Len(t, parentSaw, 3)
		require.Equal(t, []byte("r1"), parentSaw[0].Result)
		require.Equal(t, []byte("r2"), parentSaw[1].Result)
		require.False(t, parentSaw[2].Completed)
		require.Equal(t, "three is broken", parentSaw[2].Err)
	})
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// A child that dies with the default policy fails its parent once the
// other children finished.
func TestFlowChildFailsParent(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q := b.q
		ids, err := q.AddFlow(t.Context(), trafikey.JobSpec{
			Payload:  []byte("p"),
			Children: []trafikey.JobSpec{{Payload: []byte("bad"), Options: trafikey.JobOptions{MaxAttempts: 1}}, {Payload: []byte("ok")}},
		})
		require.NoError(t, err)
		jobs, err := q.Claim(t.Context(), time.Minute, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 2, "the children only; the parent waits")
		for _, j := range jobs {
			if string(j.Payload) == "bad" {
				_, err := j.Fail(t.Context(), errors.New("boom"), true)
				require.NoError(t, err)
			}
		}
		info, err := q.Inspect(t.Context(), ids.ID)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateWaiting, info.State, "it waits for the other child")
		for _, j := range jobs {
			if string(j.Payload) == "ok" {
				require.NoError(t, j.Complete(t.Context()))
			}
		}
		info, err = q.Inspect(t.Context(), ids.ID)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDead, info.State)
		require.Equal(t, "child "+ids.Children[0].ID+" failed", info.LastError)
		valkeytest.RequireConsistentQueue(t, b.server, q.Name())
	})
}

// AddAndWait returns the handler's result, or the job's death.
func TestAddAndWait(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q := b.q
		w, err := trafikey.NewWorker(q, func(_ context.Context, j *trafikey.Job) error {
			if string(j.Payload) == "fail" {
				return trafikey.SkipRetry(errors.New("no such user"))
			}
			j.SetResult([]byte(strings.ToUpper(string(j.Payload))))
			return nil
		}, trafikey.WorkerOptions{Concurrency: 2})
		require.NoError(t, err)
		runWorker(t, w)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		res, err := q.AddAndWait(ctx, []byte("hello"), nil)
		require.NoError(t, err)
		require.Equal(t, []byte("HELLO"), res)
		_, err = q.AddAndWait(ctx, []byte("fail"), nil)
		require.ErrorIs(t, err, trafikey.ErrJobDead)
		var dead *trafikey.Error
		require.True(t, errors.As(err, &dead))
		require.Equal(t, "no such user", dead.Text)
		require.NotEmpty(t, dead.JobID)
		require.Contains(t, err.Error(), "job "+dead.JobID+" died: no such user")

		// a second waiter reads the same outcome
		id, err := q.Add(ctx, []byte("again"), &trafikey.JobOptions{KeepOutcome: time.Minute})
		require.NoError(t, err)
		var wg sync.WaitGroup
		var got [2][]byte
		for i := range got {
			wg.Go(func() {
				r, err := q.Wait(ctx, id)
				require.NoError(t, err)
				got[i] = r
			})
		}
		wg.Wait()
		require.Equal(t, [2][]byte{[]byte("AGAIN"), []byte("AGAIN")}, got)
	})
}

// Retained completed jobs keep their results, and Trim bounds them.
func TestRetention(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q := b.q
		require.NoError(t, q.Admin().SetRetention(t.Context(), trafikey.RetentionPolicy{KeepCompleted: time.Hour, KeepCompletedMax: 3, KeepDeadMax: 1}))
		addLaned(t, q, "", 5)
		jobs, err := q.Claim(t.Context(), time.Minute, 5)
		require.NoError(t, err)
		for i, j := range jobs {
			if i == 4 {
				for range 3 {
					_, err := j.Fail(t.Context(), errors.New("dead"), false)
					if err == nil {
						break
					}
				}
				continue
			}
			j.SetResult([]byte("res-" + j.ID))
			require.NoError(t, j.Complete(t.Context()))
		}
		info, err := q.Inspect(t.Context(), jobs[0].ID)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateCompleted, info.State)
		require.Equal(t, []byte("res-"+jobs[0].ID), info.Result)
		require.Equal(t, 4, stats(t, q).Retained)
		mt, err := q.Admin().Maintain(t.Context(), 1000)
		done, dead := mt.TrimmedCompleted, mt.TrimmedDead
		require.NoError(t, err)
		require.Equal(t, [2]int{1, 0}, [2]int{done, dead}, "one completed job past the bound of 3")
		_, err = q.Inspect(t.Context(), jobs[0].ID)
		require.ErrorIs(t, err, trafikey.ErrNotFound, "the oldest went first")
		require.Equal(t, 3, stats(t, q).Retained)
		valkeytest.RequireConsistentQueue(t, b.server, q.Name())

		// a result over the queue's bound is refused, the job left active
		require.NoError(t, q.Admin().SetRetention(t.Context(), trafikey.RetentionPolicy{ResultMax: 4}))
		addLaned(t, q, "", 1)
		j := claimOne(t, q, time.Minute)
		j.SetResult([]byte("too long"))
		require.ErrorIs(t, j.Complete(t.Context()), trafikey.ErrResultTooLarge)
		errs, err := q.CompleteMany(t.Context(), []*trafikey.Job{j})
		require.NoError(t, err)
		require.ErrorIs(t, errs[0], trafikey.ErrResultTooLarge)
		j.SetResult([]byte("ok"))
		require.NoError(t, j.Complete(t.Context()))
	})
}

// Removing a waiting parent removes its flow.
func TestRemoveFlow(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q := b.q
		ids, err := q.AddFlow(t.Context(), trafikey.JobSpec{Payload: []byte("p"), Children: []trafikey.JobSpec{{Payload: []byte("a")}, {Payload: []byte("b")}}})
		require.NoError(t, err)
		require.NoError(t, q.Admin().Remove(t.Context(), ids.ID))
		s := stats(t, q)
		require.Zero(t, s.Pending+s.Waiting)
		valkeytest.RequireConsistentQueue(t, b.server, q.Name())
	})
}
