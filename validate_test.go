package trafikey_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// noIO is an executor that counts the calls that reach it: validation must
// refuse before any.
type noIO struct{ calls atomic.Int64 }

func (n *noIO) Name() string { return "lua" }

func (n *noIO) Exec(context.Context, *protocol.Verb, []string, []string) valkey.ValkeyResult {
	n.calls.Add(1)
	return valkey.ValkeyResult{}
}

func (n *noIO) Raw(context.Context, *protocol.Verb, string, []string) valkey.ValkeyResult {
	n.calls.Add(1)
	return valkey.ValkeyResult{}
}

func (n *noIO) ExecThen(context.Context, *protocol.Verb, []string, []string, executor.Then) (valkey.ValkeyResult, []valkey.ValkeyResult) {
	n.calls.Add(1)
	return valkey.ValkeyResult{}, nil
}

// requireInvalid checks one refused input: it is ErrInvalid, its text has
// the one prefix, and it repeats at most 64 bytes of any input.
func requireInvalid(t *testing.T, err error, what string) {
	t.Helper()
	require.ErrorIs(t, err, trafikey.ErrInvalid, what)
	require.True(t, strings.HasPrefix(err.Error(), "trafikey: "), "%s: %q", what, err)
	require.NotContains(t, err.Error(), "emq:", what)
	require.Less(t, len(err.Error()), 300, "%s: the text stays short: %q", what, err)
}

func TestValidationBeforeIO(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	io := &noIO{}
	q, err := trafikey.Open(ctx, nil, "v", trafikey.WithRunner(io, &trafikey.QueueOptions{NoInstall: true}))
	require.NoError(t, err)
	huge := strings.Repeat("x", 1<<20)
	for _, name := range []string{"", "a{b", "a}b", "{", huge, "\x00{"} {
		_, err := trafikey.Open(ctx, nil, name, trafikey.WithRunner(io, nil))
		requireInvalid(t, err, "queue name")
		require.NotContains(t, err.Error(), strings.Repeat("x", 65), "a long name is echoed at most 64 bytes")
	}
	_, err = trafikey.Open(ctx, nil, "v", nil)
	requireInvalid(t, err, "nil client")
	_, err = trafikey.Open(ctx, nil, "v", trafikey.WithRunner(io, &trafikey.QueueOptions{LogCap: -1}))
	requireInvalid(t, err, "log cap")
	_, err = trafikey.Open(ctx, nil, "v", trafikey.WithRunner(io, &trafikey.QueueOptions{LogCap: protocol.MaxLogCap + 1}))
	requireInvalid(t, err, "log cap")

	// a payload over 256 MiB, alone, in a batch or in a flow; two of half
	// that in a flow
	big := make([]byte, 256<<20+1)
	_, err = q.Add(ctx, big, nil)
	requireInvalid(t, err, "payload")
	_, err = q.AddBatch(ctx, []trafikey.JobSpec{{Payload: []byte("ok")}, {Payload: big}})
	requireInvalid(t, err, "batch payload")
	_, err = q.AddFlow(ctx, trafikey.JobSpec{Payload: big})
	requireInvalid(t, err, "flow payload")
	_, err = q.AddFlow(ctx, trafikey.JobSpec{Payload: big[:128<<20], Children: []trafikey.JobSpec{{Payload: big[:128<<20+1]}}})
	requireInvalid(t, err, "flow payloads")
	big = nil

	for _, id := range []string{"", "0", "01", "-1", "+1", "1.0", " 1", "1 ", "x", "4398046511104", "99999999999999999999", huge, "1\x00"} {
		_, err := q.Inspect(ctx, id)
		requireInvalid(t, err, "inspect id "+id)
		require.NotContains(t, err.Error(), strings.Repeat("x", 65))
		requireInvalid(t, q.Admin().Remove(ctx, id), "remove id")
		requireInvalid(t, q.Admin().Requeue(ctx, id), "requeue id")
	}

	bad := map[string]trafikey.JobOptions{
		"priority -1":         {Priority: -1},
		"priority 1001":       {Priority: protocol.MaxPriority + 1},
		"delay -1":            {Delay: -time.Millisecond},
		"delay 11 years":      {Delay: 11 * 365 * 24 * time.Hour},
		"max attempts huge":   {MaxAttempts: protocol.MaxAttempts + 1},
		"backoff kind":        {Backoff: "linear", BackoffBase: time.Second},
		"backoff kind huge":   {Backoff: trafikey.BackoffKind(huge), BackoffBase: time.Second},
		"backoff base -1":     {Backoff: trafikey.BackoffFixed, BackoffBase: -time.Second},
		"backoff base 25h":    {Backoff: trafikey.BackoffFixed, BackoffBase: 25 * time.Hour},
		"unique empty":        {UniqueKey: "", UniqueTTL: time.Minute},
		"unique huge":         {UniqueKey: huge, UniqueTTL: time.Minute},
		"unique ttl 0":        {UniqueKey: "k", UniqueTTL: 0},
		"unique ttl negative": {UniqueKey: "k", UniqueTTL: -time.Second},
		"lane huge":           {Lane: huge},
		"lane 129 bytes":      {Lane: strings.Repeat("l", protocol.MaxLaneName+1)},
	}
	for what, opts := range bad {
		_, err := q.Add(ctx, []byte("p"), &opts)
		requireInvalid(t, err, "add "+what)
		require.NotContains(t, err.Error(), strings.Repeat("x", 65), what)
		_, err = q.AddBatch(ctx, []trafikey.JobSpec{{Payload: []byte("ok")}, {Payload: []byte("p"), Options: opts}})
		requireInvalid(t, err, "add batch "+what)
		require.Contains(t, err.Error(), "add job 1", "names the job of the batch")
	}

	for _, lease := range []time.Duration{0, -time.Second, 25 * time.Hour} {
		_, err := q.Claim(ctx, lease, 1)
		requireInvalid(t, err, "claim lease")
	}
	for _, n := range []int{0, -1, protocol.MaxCount + 1} {
		_, err := q.Claim(ctx, time.Second, n)
		requireInvalid(t, err, "claim count")
		_, err = q.Admin().Maintain(ctx, n)
		requireInvalid(t, err, "maintain limit")
	}
	for _, lane := range []string{"", huge, strings.Repeat("l", protocol.MaxLaneName+1)} {
		requireInvalid(t, q.Lane(lane).SetCap(ctx, 1), "lane cap name")
		requireInvalid(t, q.Lane(lane).Pause(ctx), "pause lane name")
		requireInvalid(t, q.Lane(lane).Resume(ctx), "resume lane name")
		_, err := q.Lane(lane).Info(ctx)
		requireInvalid(t, err, "lane info name")
		require.NotContains(t, err.Error(), strings.Repeat("x", 65))
	}
	for _, limit := range []int{-1, protocol.MaxLaneCap + 1} {
		requireInvalid(t, q.Lane("a").SetCap(ctx, limit), "lane cap")
	}
	for _, limit := range []int{-1, protocol.MaxRateMax + 1} { // 0 removes the limit
		requireInvalid(t, q.Admin().SetRate(ctx, limit, time.Second), "rate limit")
	}
	for _, window := range []time.Duration{0, -time.Second, 25 * time.Hour} {
		requireInvalid(t, q.Admin().SetRate(ctx, 10, window), "rate window")
	}
	errs, err := q.CompleteMany(ctx, []*trafikey.Job{nil})
	require.NoError(t, err)
	requireInvalid(t, errs[0], "complete many nil job")

	// Events reads with the client itself (nil here): a refusal must come
	// before it is touched
	for _, from := range []string{"garbage", "1-x", "-1", "$1", "1.x", "1-1.-1", "1.2.3", huge, "\x00"} {
		n := 0
		for _, err := range q.Events(ctx, from) {
			requireInvalid(t, err, "events from "+echo64(from))
			n++
		}
		require.Equal(t, 1, n, "one error ends the iteration")
	}
	require.Zero(t, io.calls.Load(), "every refusal came before any call")
}

func TestOpenNativeWithoutModule(t *testing.T) {
	t.Parallel()
	c := valkeytest.Client(t, valkeytest.Start(t, valkeyserver.Options{}))
	_, err := trafikey.Open(t.Context(), c, "n", &trafikey.QueueOptions{Executor: trafikey.ExecutorNative})
	requireInvalid(t, err, "native without the module")
	_, err = trafikey.Open(t.Context(), c, "n", &trafikey.QueueOptions{Executor: "fast"})
	requireInvalid(t, err, "unknown executor")
}

// echo64 is s cut to 64 bytes, for a test's messages.
func echo64(s string) string { return s[:min(len(s), 64)] }

// TestNoClientReadsNoPartitions: a handle whose verbs a runner answers has
// no client, so it never reads whether its queue was partitioned since it
// opened (which would dereference the missing client in the background).
func TestNoClientReadsNoPartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	io := &noIO{}
	q, err := trafikey.Open(ctx, nil, "v", trafikey.WithPartitionRefresh(
		trafikey.WithRunner(io, &trafikey.QueueOptions{NoInstall: true}), time.Millisecond))
	require.NoError(t, err)
	for range 5 {
		time.Sleep(2 * time.Millisecond)
		_, _ = q.Stats(ctx) // each call may start the background read
	}
	time.Sleep(20 * time.Millisecond) // a background read would have run by now
	require.Positive(t, io.calls.Load(), "the calls reached the runner")
}
