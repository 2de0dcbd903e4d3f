package trafikey_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// serverNow is the server's clock, which At and Reschedule are read on.
func serverNow(t *testing.T, b *testBundle) time.Time {
	t.Helper()
	v := b.do(t, "TIME").([]any)
	var sec, usec int64
	for _, c := range v[0].(string) {
		sec = sec*10 + int64(c-'0')
	}
	for _, c := range v[1].(string) {
		usec = usec*10 + int64(c-'0')
	}
	return time.Unix(sec, usec*1000)
}

// TestJobTimeout: a job's own Timeout bounds its attempt in place of the
// worker's; a handler that ignores its context is abandoned at the
// deadline, the attempt fails with ErrTimeout and retries, the next attempt
// takes the token, and the abandoned handler's late completion is refused.
func TestJobTimeout(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		id, err := b.q.Add(t.Context(), []byte("hangs"), &trafikey.JobOptions{Timeout: 100 * time.Millisecond, MaxAttempts: 2, Backoff: trafikey.BackoffFixed, BackoffBase: time.Hour})
		require.NoError(t, err)
		release := make(chan struct{})
		late := make(chan error, 1)
		var calls atomic.Int64
		type done struct {
			job     *trafikey.Job
			outcome trafikey.Outcome
			err     error
		}
		dones := make(chan done, 2)
		w := newWorker(t, b.q, func(ctx context.Context, j *trafikey.Job) error {
			if calls.Add(1) == 1 {
				<-release // ignores ctx
				late <- j.Complete(context.Background())
				return nil
			}
			return nil
		}, trafikey.WorkerOptions{Timeout: time.Hour, OnDone: func(j *trafikey.Job, o trafikey.Outcome, err error) {
			dones <- done{j, o, err}
		}})
		runWorker(t, w)
		first := <-dones
		require.Equal(t, trafikey.OutcomeRetrying, first.outcome)
		require.ErrorIs(t, first.err, trafikey.ErrTimeout)
		require.Equal(t, 100*time.Millisecond, first.job.Timeout)
		info, err := b.q.Inspect(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDelayed, info.State)
		require.Contains(t, info.LastError, "ran past its timeout of 100ms")
		require.Equal(t, 100*time.Millisecond, info.Timeout)

		// the retry runs now: the second attempt holds the token
		state, err := b.q.Admin().Reschedule(t.Context(), id, 0)
		require.NoError(t, err)
		require.Equal(t, trafikey.StatePending, state)
		second := <-dones
		require.Equal(t, trafikey.OutcomeCompleted, second.outcome)
		require.Equal(t, 2, second.job.Attempt)

		close(release)
		lateErr := <-late
		require.Error(t, lateErr, "the abandoned handler's completion is refused")
		require.True(t, errors.Is(lateErr, trafikey.ErrLeaseLost) || errors.Is(lateErr, trafikey.ErrNotFound), "%v", lateErr)
	})
}

// TestCancelActive: cancelling a running job ends it at once, and its
// worker hears of it from the queue's cancel notice: the lease is an hour,
// so no heartbeat runs, yet the handler's context is cancelled with cause
// ErrCancelled; the outcome is cancelled, once, and logged once.
func TestCancelActive(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q, calls := b.counted(t, "cancelling", nil)
		b.q = q
		id, err := b.q.Add(t.Context(), []byte("long"), &trafikey.JobOptions{Kind: "report"})
		require.NoError(t, err)
		started := make(chan struct{})
		cause := make(chan error, 1)
		outcome := make(chan trafikey.Outcome, 2)
		logs := &syncBuffer{}
		w := newWorker(t, b.q, func(ctx context.Context, j *trafikey.Job) error {
			close(started)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return ctx.Err()
		}, trafikey.WorkerOptions{Lease: time.Hour, Logger: slog.New(slog.NewTextHandler(logs, nil)),
			OnDone: func(_ *trafikey.Job, o trafikey.Outcome, _ error) { outcome <- o }})
		stop := runWorker(t, w)
		<-started
		require.NoError(t, b.q.Cancel(t.Context(), id))
		requireCancelled(t, cause, "the handler's context was not cancelled")
		require.Equal(t, trafikey.OutcomeCancelled, <-outcome)
		require.NoError(t, stop())
		require.Zero(t, calls.count(protocol.Extend), "the notice, not a heartbeat, cancelled the handler")
		require.Empty(t, outcome, "one outcome")
		require.Equal(t, 1, w.Info().Cancelled)
		require.Equal(t, 1, strings.Count(logs.String(), "trafikey: job cancelled"), logs.String())
		info, err := b.q.Inspect(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDead, info.State)
		require.Equal(t, "cancelled", info.LastError)
		require.True(t, info.Cancelled)
		s := stats(t, b.q)
		require.Equal(t, 1, s.TotalCancelled)
		require.Equal(t, 0, s.TotalDead)
		require.Equal(t, 0, s.TotalFailed)
		require.Equal(t, 1, s.Dead)
		require.Equal(t, 0, s.Active)
	})
}

// TestCancelActiveWithoutNotice: a canceller whose ACL may not publish on
// the queue's cancels channel cancels all the same, with no notice; the
// worker learns it at the job's next heartbeat (EXTEND refused with
// ErrCancelled), stops extending it, and logs it once though the recovery
// timer's renewal of due leases may run beside the heartbeat.
func TestCancelActiveWithoutNotice(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q, calls := b.counted(t, "quiet", nil)
		b.do(t, "ACL", "SETUSER", "canceller", "on", ">pw", "+@all", "~*", "resetchannels")
		cc := valkeytest.ClientWith(t, b.server, valkey.ClientOption{Username: "canceller", Password: "pw"})
		var exec executor.Executor = executor.NewLua(cc)
		if b.q.Executor() == trafikey.ExecutorNative {
			exec = executor.NewNative(cc)
		}
		canceller, err := trafikey.Open(t.Context(), cc, "quiet", trafikey.WithRunner(exec, nil))
		require.NoError(t, err)
		id, err := q.Add(t.Context(), []byte("long"), nil)
		require.NoError(t, err)
		started := make(chan struct{})
		cause := make(chan error, 1)
		outcome := make(chan trafikey.Outcome, 2)
		logs := &syncBuffer{}
		w := newWorker(t, q, func(ctx context.Context, j *trafikey.Job) error {
			close(started)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return ctx.Err()
		}, trafikey.WorkerOptions{Lease: 300 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(logs, nil)),
			OnDone: func(_ *trafikey.Job, o trafikey.Outcome, _ error) { outcome <- o }})
		stop := runWorker(t, w)
		<-started
		before := calls.count(protocol.Extend)
		require.NoError(t, canceller.Cancel(t.Context(), id))
		requireCancelled(t, cause, "the handler's context was not cancelled")
		require.Equal(t, trafikey.OutcomeCancelled, <-outcome)
		require.NoError(t, stop())
		// one heartbeat's EXTEND (two when the recovery timer's renewal
		// ran beside it) found it, and none came after
		seen := calls.count(protocol.Extend) - before
		require.GreaterOrEqual(t, seen, 1, "a heartbeat found the cancel")
		require.LessOrEqual(t, seen, 2)
		require.Empty(t, outcome, "one outcome")
		require.Equal(t, 1, w.Info().Cancelled)
		require.Equal(t, 1, strings.Count(logs.String(), "trafikey: job cancelled"), logs.String())
		require.Equal(t, 1, stats(t, q).TotalCancelled)
	})
}

// TestCancelNoticeAfterReconnect: the worker's connection with the
// subscription is killed while a job runs; the worker subscribes again,
// and the cancel that follows reaches the handler by its notice (the lease
// is an hour, so no heartbeat runs).
func TestCancelNoticeAfterReconnect(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q, calls := b.counted(t, "reconnect", nil)
		id, err := q.Add(t.Context(), []byte("long"), nil)
		require.NoError(t, err)
		started := make(chan struct{})
		cause := make(chan error, 1)
		w := newWorker(t, q, func(ctx context.Context, j *trafikey.Job) error {
			close(started)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return ctx.Err()
		}, trafikey.WorkerOptions{Lease: time.Hour})
		stop := runWorker(t, w)
		<-started
		// the id of the client holding the subscription ("" when none)
		subscriber := func() string {
			list, _ := b.do(t, "CLIENT", "LIST").(string)
			for line := range strings.Lines(list) {
				if strings.Contains(line, " ssub=1 ") {
					id, _, _ := strings.Cut(strings.TrimPrefix(line, "id="), " ")
					return id
				}
			}
			return ""
		}
		first := subscriber()
		require.NotEmpty(t, first, "the worker subscribed before it claimed")
		b.do(t, "CLIENT", "KILL", "ID", first)
		require.Eventually(t, func() bool { again := subscriber(); return again != "" && again != first },
			eventually, tick, "the worker subscribes again, on a new connection")
		require.NoError(t, q.Cancel(t.Context(), id))
		requireCancelled(t, cause, "the handler's context was not cancelled")
		require.NoError(t, stop())
		require.Zero(t, calls.count(protocol.Extend), "the notice, not a heartbeat, cancelled the handler")
		require.Equal(t, 1, w.Info().Cancelled)
	})
}

// TestCancelSubscriptionLifetime: the workers of a queue handle share one
// subscription to its cancels channel, one subscriber for the server
// (PUBSUB SHARDNUMSUB counts connections). A worker that stops while
// another runs sends no SUNSUBSCRIBE, and a cancel then still reaches the
// other's handler by its notice (the lease is an hour, so no heartbeat
// runs); the last one to stop unsubscribes, leaving the server no
// subscriber of the channel.
func TestCancelSubscriptionLifetime(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q, calls := b.counted(t, "lifetime", nil)
		channel := protocol.KeysOf(q.Name()).Cancels()
		subscribers := func() int { return shardSubscribers(t, b.server, channel) }
		// The slow log keeps every command with its arguments: the
		// client's own SUNSUBSCRIBEs of pooled connections name no channel.
		b.do(t, "CONFIG", "SET", "slowlog-log-slower-than", "0", "slowlog-max-len", "1000000")
		unsubscribes := func() int { return loggedCommands(t, b, "SUNSUBSCRIBE", channel) }
		started := make(chan *trafikey.Job, 2)
		causes := make(chan error, 2)
		handler := func(ctx context.Context, j *trafikey.Job) error {
			started <- j
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		}
		opts := trafikey.WorkerOptions{Concurrency: 1, Lease: time.Hour}
		cancelled := func(j *trafikey.Job) {
			t.Helper()
			require.NoError(t, q.Cancel(ctx, j.ID))
			requireCancelled(t, causes, "the handler of job %s was not cancelled", j.ID)
		}

		stopFirst := runWorker(t, newWorker(t, q, handler, opts))
		require.Eventually(t, func() bool { return subscribers() == 1 }, eventually, tick, "the worker subscribes")
		// Each worker runs a job, the second one's claimed after its
		// subscription was made.
		_, err := q.Add(ctx, []byte("first"), nil)
		require.NoError(t, err)
		first := <-started
		stopSecond := runWorker(t, newWorker(t, q, handler, opts))
		_, err = q.Add(ctx, []byte("second"), nil)
		require.NoError(t, err)
		second := <-started
		require.Equal(t, 1, subscribers(), "one subscription for both workers")

		cancelled(first)
		require.NoError(t, stopFirst())
		require.Zero(t, unsubscribes(), "the first worker to stop leaves the subscription")
		require.Equal(t, 1, subscribers())
		cancelled(second)
		require.NoError(t, stopSecond())
		require.Eventually(t, func() bool { return subscribers() == 0 }, eventually, tick,
			"the last worker to stop unsubscribes")
		require.Equal(t, 1, unsubscribes())
		require.Zero(t, calls.count(protocol.Extend), "the notices, not heartbeats, cancelled the handlers")
		require.Equal(t, 2, stats(t, q).TotalCancelled)
	})
}

// loggedCommands counts the commands of the server's slow log whose
// arguments are args, the command's name in upper case.
func loggedCommands(t *testing.T, b *testBundle, args ...string) int {
	t.Helper()
	entries, _ := b.do(t, "SLOWLOG", "GET", "-1").([]any)
	n := 0
	for _, e := range entries {
		fields, _ := e.([]any)
		require.Greater(t, len(fields), 3, "slow log entry %v", e)
		logged, _ := fields[3].([]any)
		got := make([]string, len(logged))
		for i, a := range logged {
			got[i] = fmt.Sprint(a)
		}
		if len(got) > 0 {
			got[0] = strings.ToUpper(got[0])
		}
		if slices.Equal(got, args) {
			n++
		}
	}
	return n
}

// TestCancelNoticeTouchesOnlyItsJob: a cancel notice cancels the handler
// of its own job only: not another job of its queue on another worker, nor
// the job of the same id of another queue. A notice is handled by every
// worker of the queue in the order sent, so once a later notice of the
// second worker's has reached its handler, the first one's has been seen.
func TestCancelNoticeTouchesOnlyItsJob(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		other := b.open(t, "other")
		type run struct {
			ctx   context.Context
			cause chan error
		}
		var mu sync.Mutex
		runs := map[string]run{}
		startedAny := make(chan string, 8)
		outcomes := make(chan string, 8)
		release := make(chan struct{})
		handler := func(prefix string) func(context.Context, *trafikey.Job) error {
			return func(ctx context.Context, j *trafikey.Job) error {
				r := run{ctx: ctx, cause: make(chan error, 1)}
				mu.Lock()
				runs[prefix+j.ID] = r
				mu.Unlock()
				startedAny <- prefix + j.ID
				select {
				case <-ctx.Done():
					r.cause <- context.Cause(ctx)
					return ctx.Err()
				case <-release:
					return nil
				}
			}
		}
		opts := func(prefix string, n int) trafikey.WorkerOptions {
			return trafikey.WorkerOptions{Concurrency: n, Lease: time.Hour, OnDone: func(j *trafikey.Job, o trafikey.Outcome, _ error) {
				outcomes <- prefix + j.ID + " " + string(o)
			}}
		}
		// the first worker of the queue runs job 1 alone, the second jobs
		// 2 and 3; the other queue's worker runs its own job 1
		first, err := b.q.Add(ctx, []byte("a"), nil)
		require.NoError(t, err)
		runWorker(t, newWorker(t, b.q, handler("q:"), opts("q:", 1)))
		require.Equal(t, "q:"+first, <-startedAny)
		ids := []string{first}
		for range 2 {
			id, err := b.q.Add(ctx, []byte("b"), nil)
			require.NoError(t, err)
			ids = append(ids, id)
		}
		runWorker(t, newWorker(t, b.q, handler("q:"), opts("q:", 2)))
		otherID, err := other.Add(ctx, []byte("c"), nil)
		require.NoError(t, err)
		require.Equal(t, first, otherID, "the same id in the other queue")
		runWorker(t, newWorker(t, other, handler("o:"), opts("o:", 1)))
		for range 3 {
			<-startedAny
		}

		require.NoError(t, b.q.Cancel(ctx, ids[0]))
		require.Equal(t, "q:"+ids[0]+" cancelled", <-outcomes)
		require.NoError(t, b.q.Cancel(ctx, ids[2]))
		require.Equal(t, "q:"+ids[2]+" cancelled", <-outcomes)
		mu.Lock()
		for _, key := range []string{"q:" + ids[1], "o:" + otherID} {
			require.NoError(t, runs[key].ctx.Err(), "%s untouched", key)
		}
		mu.Unlock()
		close(release)
		got := []string{<-outcomes, <-outcomes}
		require.ElementsMatch(t, []string{"q:" + ids[1] + " completed", "o:" + otherID + " completed"}, got)
		require.Equal(t, 2, stats(t, b.q).TotalCancelled)
		require.Equal(t, 0, stats(t, other).TotalCancelled)
	})
}

// TestCancelActiveRefusesLateCalls: the holder of a cancelled job's token
// is refused with ErrCancelled, whatever it reports.
func TestCancelActiveRefusesLateCalls(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		_, err := b.q.Add(t.Context(), []byte("a"), nil)
		require.NoError(t, err)
		j := claimOne(t, b.q, time.Minute)
		require.NoError(t, b.q.Cancel(t.Context(), j.ID))
		_, err = j.Extend(t.Context(), time.Minute)
		require.ErrorIs(t, err, trafikey.ErrCancelled)
		require.ErrorIs(t, err, trafikey.ErrState)
		require.NotErrorIs(t, err, trafikey.ErrLeaseLost)
		require.ErrorIs(t, j.Complete(t.Context()), trafikey.ErrCancelled)
		_, err = j.Fail(t.Context(), errors.New("late"), true)
		require.ErrorIs(t, err, trafikey.ErrCancelled)
		errs, err := b.q.CompleteMany(t.Context(), []*trafikey.Job{j})
		require.NoError(t, err)
		require.ErrorIs(t, errs[0], trafikey.ErrCancelled)

		// requeued, it runs again, and the old token stays refused
		require.NoError(t, b.q.Admin().Requeue(t.Context(), j.ID))
		info, err := b.q.Inspect(t.Context(), j.ID)
		require.NoError(t, err)
		require.False(t, info.Cancelled)
		j2 := claimOne(t, b.q, time.Minute)
		require.ErrorIs(t, j.Complete(t.Context()), trafikey.ErrLeaseLost)
		require.NoError(t, j2.Complete(t.Context()))
	})
}

// TestCancelPendingAndDelayed: a job that has not run yet is cancelled to
// the dead jobs; other states are refused.
func TestCancelPendingAndDelayed(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		pending, err := b.q.Add(ctx, []byte("p"), nil)
		require.NoError(t, err)
		delayed, err := b.q.Add(ctx, []byte("d"), &trafikey.JobOptions{Delay: time.Hour})
		require.NoError(t, err)
		require.NoError(t, b.q.Cancel(ctx, pending))
		require.NoError(t, b.q.Cancel(ctx, delayed))
		for _, id := range []string{pending, delayed} {
			info, err := b.q.Inspect(ctx, id)
			require.NoError(t, err)
			require.Equal(t, trafikey.StateDead, info.State)
			require.True(t, info.Cancelled)
		}
		s := stats(t, b.q)
		require.Equal(t, 2, s.TotalCancelled)
		require.Equal(t, 0, s.Pending+s.Delayed)
		jobs, err := b.q.Claim(ctx, time.Minute, 10)
		require.NoError(t, err)
		require.Empty(t, jobs)

		require.ErrorIs(t, b.q.Cancel(ctx, pending), trafikey.ErrState, "already dead")
		require.ErrorIs(t, b.q.Cancel(ctx, "999"), trafikey.ErrNotFound)
		require.ErrorIs(t, b.q.Cancel(ctx, "x"), trafikey.ErrInvalid)
	})
}

// TestDelay: a job's Delay counts from the server's clock; a negative or
// over-long one is refused before any I/O.
func TestDelay(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		before := serverNow(t, b)
		later, err := b.q.Add(ctx, []byte("later"), &trafikey.JobOptions{Delay: time.Hour})
		require.NoError(t, err)
		after := serverNow(t, b)
		now, err := b.q.Add(ctx, []byte("now"), nil)
		require.NoError(t, err)
		info, err := b.q.Inspect(ctx, later)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDelayed, info.State)
		due, err := strconv.ParseInt(strings.TrimSpace(b.do(t, "ZSCORE", "emq:{test}:delayed", later).(string)), 10, 64)
		require.NoError(t, err)
		require.GreaterOrEqual(t, due, before.Add(time.Hour).UnixMilli())
		require.LessOrEqual(t, due, after.Add(time.Hour).UnixMilli())
		j := claimOne(t, b.q, time.Minute)
		require.Equal(t, now, j.ID)

		_, err = b.q.Add(ctx, []byte("x"), &trafikey.JobOptions{Delay: -time.Millisecond})
		require.ErrorIs(t, err, trafikey.ErrInvalid)
		_, err = b.q.Add(ctx, []byte("x"), &trafikey.JobOptions{Delay: 11 * 365 * 24 * time.Hour})
		require.ErrorIs(t, err, trafikey.ErrInvalid)
	})
}

// TestReschedule: a pending job is delayed, a delayed one made pending, a
// claimed one refused.
func TestReschedule(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		id, err := b.q.Add(ctx, []byte("a"), nil)
		require.NoError(t, err)
		state, err := b.q.Admin().Reschedule(ctx, id, time.Hour)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDelayed, state)
		jobs, err := b.q.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		require.Empty(t, jobs, "delayed now")
		before := serverNow(t, b)
		state, err = b.q.Admin().Reschedule(ctx, id, 2*time.Hour)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDelayed, state)
		after := serverNow(t, b)
		due, err := strconv.ParseInt(fmt.Sprint(b.do(t, "ZSCORE", "emq:{test}:delayed", id)), 10, 64)
		require.NoError(t, err)
		require.GreaterOrEqual(t, due, before.Add(2*time.Hour).UnixMilli(), "two hours from the server's now")
		require.LessOrEqual(t, due, after.Add(2*time.Hour).UnixMilli())
		state, err = b.q.Admin().Reschedule(ctx, id, 0)
		require.NoError(t, err)
		require.Equal(t, trafikey.StatePending, state)
		j := claimOne(t, b.q, time.Minute)
		require.Equal(t, id, j.ID)
		_, err = b.q.Admin().Reschedule(ctx, id, 0)
		require.ErrorIs(t, err, trafikey.ErrState, "a claimed job")
		_, err = b.q.Admin().Reschedule(ctx, "999", 0)
		require.ErrorIs(t, err, trafikey.ErrNotFound)
		_, err = b.q.Admin().Reschedule(ctx, id, -time.Second)
		require.ErrorIs(t, err, trafikey.ErrInvalid)
	})
}

// Email is the payload of the typed job kind of the tests.
type Email struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
}

var sendEmail = trafikey.NewJobType[Email]("email")

// TestMuxRoutesKinds: a Mux runs each job's handler by kind, a JobType adds
// and decodes its payload type, and a job of a kind without a handler is
// dead-lettered on its first attempt with an error naming the kind.
func TestMuxRoutesKinds(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		got := make(chan string, 3)
		mux := trafikey.NewMux()
		sendEmail.Handle(mux, func(_ context.Context, j *trafikey.Job, e Email) error {
			got <- j.Kind + ":" + e.To + ":" + e.Subject
			return nil
		})
		mux.Handle("raw", func(_ context.Context, j *trafikey.Job) error {
			got <- j.Kind + ":" + string(j.Payload)
			return nil
		})
		emailID, err := sendEmail.Add(ctx, b.q, Email{To: "a@example.com", Subject: "hi"}, nil)
		require.NoError(t, err)
		_, err = b.q.Add(ctx, []byte("bytes"), &trafikey.JobOptions{Kind: "raw"})
		require.NoError(t, err)
		unknown, err := b.q.Add(ctx, []byte("?"), &trafikey.JobOptions{Kind: "fax", MaxAttempts: 5})
		require.NoError(t, err)
		badJSON, err := b.q.Add(ctx, []byte("{"), &trafikey.JobOptions{Kind: sendEmail.Kind(), MaxAttempts: 5})
		require.NoError(t, err)
		info, err := b.q.Inspect(ctx, emailID)
		require.NoError(t, err)
		require.Equal(t, "email", info.Kind)

		dead := make(chan error, 2)
		w := newWorker(t, b.q, mux.Dispatch, trafikey.WorkerOptions{OnDone: func(_ *trafikey.Job, o trafikey.Outcome, err error) {
			if o == trafikey.OutcomeDead {
				dead <- err
			}
		}})
		runWorker(t, w)
		seen := map[string]bool{}
		for range 2 {
			seen[<-got] = true
		}
		require.Equal(t, map[string]bool{"email:a@example.com:hi": true, "raw:bytes": true}, seen)
		var errs []error
		for range 2 {
			errs = append(errs, <-dead)
		}
		unknownErr := errs[0]
		if !errors.Is(unknownErr, trafikey.ErrUnknownKind) {
			unknownErr = errs[1]
		}
		require.ErrorIs(t, unknownErr, trafikey.ErrUnknownKind)
		require.ErrorIs(t, unknownErr, trafikey.ErrSkipRetry)
		require.EqualError(t, unknownErr, `trafikey: no handler for kind "fax"`)

		info, err = b.q.Inspect(ctx, unknown)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDead, info.State)
		require.Equal(t, 1, info.Attempts, "no retries")
		require.Equal(t, `trafikey: no handler for kind "fax"`, info.LastError)
		info, err = b.q.Inspect(ctx, badJSON)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDead, info.State)
		require.Equal(t, 1, info.Attempts, "no retries")
		require.Contains(t, info.LastError, `payload of kind "email" does not decode`)
	})
}

// TestMuxFallback: a fallback handler takes the kinds without a route, and
// registering a kind twice panics.
func TestMuxFallback(t *testing.T) {
	t.Parallel()
	mux := trafikey.NewMux()
	mux.Handle("a", func(context.Context, *trafikey.Job) error { return nil })
	require.Panics(t, func() { mux.Handle("a", func(context.Context, *trafikey.Job) error { return nil }) })
	require.Panics(t, func() { mux.Handle("b", nil) })
	err := mux.Dispatch(context.Background(), &trafikey.Job{Kind: "z"})
	require.ErrorIs(t, err, trafikey.ErrUnknownKind)
	require.ErrorIs(t, err, trafikey.ErrSkipRetry)
	mux.Fallback(func(_ context.Context, j *trafikey.Job) error { return errors.New("fallback " + j.Kind) })
	require.EqualError(t, mux.Dispatch(context.Background(), &trafikey.Job{Kind: "z"}), "fallback z")
}

// TestJobFields: a claimed job carries its max attempts, kind, timeout and
// headers, and tells its last attempt.
func TestJobFields(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		_, err := b.q.Add(ctx, []byte("a"), &trafikey.JobOptions{MaxAttempts: 2, Backoff: trafikey.BackoffFixed, BackoffBase: 0, Kind: "k", Timeout: 1500 * time.Millisecond, Headers: map[string]string{"traceparent": "00-abc-def-01", "x": "a=b&c", "y": "1"}})
		require.NoError(t, err)
		j := claimOne(t, b.q, time.Minute)
		require.Equal(t, 2, j.MaxAttempts)
		require.Equal(t, "k", j.Kind)
		require.Equal(t, 1500*time.Millisecond, j.Timeout)
		require.Equal(t, map[string]string{"traceparent": "00-abc-def-01", "x": "a=b&c", "y": "1"}, j.Headers)
		require.Less(t, j.Attempt, j.MaxAttempts)
		_, err = j.Fail(ctx, errors.New("once"), true)
		require.NoError(t, err)
		_, err = b.q.Admin().Reschedule(ctx, j.ID, 0)
		require.NoError(t, err)
		j = claimOne(t, b.q, time.Minute)
		require.Equal(t, 2, j.Attempt)
		require.Equal(t, j.MaxAttempts, j.Attempt, "the last attempt")
		info, err := b.q.Inspect(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, j.Headers, info.Headers)

		_, err = b.q.Add(ctx, []byte("plain"), nil)
		require.NoError(t, err)
		p := claimOne(t, b.q, time.Minute)
		require.Equal(t, "", p.Kind)
		require.Equal(t, time.Duration(0), p.Timeout)
		require.Nil(t, p.Headers)
		require.Equal(t, 3, p.MaxAttempts)
	})
}

// TestJobOptionsValidated: the new options are checked before any I/O.
func TestJobOptionsValidated(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		for name, opt := range map[string]trafikey.JobOptions{
			"kind":             {Kind: strings.Repeat("k", 129)},
			"negative timeout": {Timeout: -time.Second},
			"long timeout":     {Timeout: 25 * time.Hour},
			"headers":          {Headers: map[string]string{"h": strings.Repeat("v", protocol.MaxHeaders)}},
		} {
			_, err := b.q.Add(ctx, []byte("a"), &opt)
			require.ErrorIs(t, err, trafikey.ErrInvalid, name)
		}
		require.Equal(t, 0, stats(t, b.q).TotalAdded)
	})
}

// TestPlainClaims: plain claims carry none of the job's fields.
func TestPlainClaims(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		q := b.open(t, "plainclaims", trafikey.QueueOptions{PlainClaims: true})
		_, err := q.Add(t.Context(), []byte("a"), &trafikey.JobOptions{Kind: "k", Timeout: time.Second, MaxAttempts: 1})
		require.NoError(t, err)
		j := claimOne(t, q, time.Minute)
		require.Equal(t, "a", string(j.Payload))
		require.Equal(t, "", j.Kind)
		require.Equal(t, time.Duration(0), j.Timeout)
		require.Equal(t, 0, j.MaxAttempts)
	})
}

// TestEventsOfRescheduleAndCancel: the two verbs publish their events.
func TestEventsOfRescheduleAndCancel(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		require.NoError(t, b.q.Admin().SetEvents(ctx, 1000))
		id, err := b.q.Add(ctx, []byte("a"), nil)
		require.NoError(t, err)
		_, err = b.q.Admin().Reschedule(ctx, id, time.Hour)
		require.NoError(t, err)
		require.NoError(t, b.q.Cancel(ctx, id))
		evs := collect(t, b.q, "0", 3)
		require.Equal(t, []string{"added " + id, "rescheduled " + id, "cancelled " + id}, names(evs))
		require.Equal(t, map[string]string{"state": "delayed"}, evs[1].Fields)
		require.Equal(t, map[string]string{"state": "delayed"}, evs[2].Fields)
	})
}

// TestFlowOptions: a parent may not wait for a due time; a child may, and
// carries its kind.
func TestFlowOptions(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		_, err := b.q.AddFlow(ctx, trafikey.JobSpec{Payload: []byte("p"), Options: trafikey.JobOptions{Delay: time.Until(time.Now().Add(time.Hour))},
			Children: []trafikey.JobSpec{{Payload: []byte("c")}}})
		require.ErrorIs(t, err, trafikey.ErrInvalid)
		ids, err := b.q.AddFlow(ctx, trafikey.JobSpec{Payload: []byte("p"), Options: trafikey.JobOptions{Kind: "parent"},
			Children: []trafikey.JobSpec{{Payload: []byte("c"), Options: trafikey.JobOptions{Kind: "child", Delay: time.Until(time.Now().Add(time.Hour))}}}})
		require.NoError(t, err)
		child, err := b.q.Inspect(ctx, ids.Children[0].ID)
		require.NoError(t, err)
		require.Equal(t, trafikey.StateDelayed, child.State)
		require.Equal(t, "child", child.Kind)
		parent, err := b.q.Inspect(ctx, ids.ID)
		require.NoError(t, err)
		require.Equal(t, "parent", parent.Kind)
		require.Equal(t, trafikey.StateWaiting, parent.State)
	})
}

// TestHandleResult: a typed handler's result reaches AddAndWaitResult
// decoded; its failure is the job's death; a result of another shape does
// not decode.
func TestHandleResult(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		type in struct{ N int }
		type out struct{ Double int }
		double := trafikey.NewJobType[in]("double")
		mux := trafikey.NewMux()
		trafikey.HandleResult(mux, double, func(_ context.Context, job *trafikey.Job, v in) (out, error) {
			if v.N < 0 {
				return out{}, trafikey.SkipRetry(errors.New("negative"))
			}
			return out{Double: 2 * v.N}, nil
		})
		runWorker(t, newWorker(t, b.q, mux.Dispatch, trafikey.WorkerOptions{}))

		got, err := trafikey.AddAndWaitResult[out](ctx, b.q, double, in{N: 21}, nil)
		require.NoError(t, err)
		require.Equal(t, out{Double: 42}, got)

		_, err = trafikey.AddAndWaitResult[out](ctx, b.q, double, in{N: -1}, nil)
		require.ErrorIs(t, err, trafikey.ErrJobDead)
		require.ErrorContains(t, err, "negative")

		_, err = trafikey.AddAndWaitResult[[]string](ctx, b.q, double, in{N: 1}, nil)
		require.ErrorContains(t, err, `result of kind "double" does not decode`)
	})
}
