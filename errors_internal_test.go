package trafikey

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// TestServerErrorClasses maps every text of the registry to its sentinels,
// without a server: the class is the first word, details come from the
// registry's builders.
func TestServerErrorClasses(t *testing.T) {
	t.Parallel()
	all := []error{
		ErrLeaseLost, ErrState, ErrDuplicate, ErrWire, ErrWritePaused, ErrRateLimited,
	}
	cases := []struct {
		verb *protocol.Verb
		text string
		want []error
	}{
		{protocol.Complete, protocol.ErrStale("complete"), []error{ErrLeaseLost}},
		{protocol.Extend, protocol.ErrNotActive("extend"), []error{ErrLeaseLost, ErrState}},
		{protocol.Complete, protocol.ErrNotActive("extend"), []error{ErrState}}, // another verb's text
		{protocol.Remove, protocol.ErrRemoveActive, []error{ErrState}},
		{protocol.Requeue, protocol.ErrRequeueNotDead, []error{ErrState}},
		{protocol.Add, protocol.ErrAddIDExists, []error{ErrState}},
		{protocol.Add, protocol.ErrAddIDSpace, []error{ErrState}},
		{protocol.Add, protocol.ErrAddDuplicate("42"), []error{ErrDuplicate}},
		{protocol.Add, protocol.ErrAddDuplicateInBatch, []error{ErrDuplicate}},
		{protocol.Claim, protocol.ErrWireMissing, []error{ErrWire}},
		{protocol.Claim, protocol.ErrWireFound("2"), []error{ErrWire}},
		{protocol.Claim, protocol.ErrWritePaused, []error{ErrWritePaused}},
		{protocol.Claim, protocol.ErrLayout("claim"), nil},
		{protocol.Claim, protocol.ErrBadArg("claim", "count"), nil},
		{protocol.Claim, protocol.ErrWrongType, nil},
		{protocol.Claim, protocol.ErrNoPerm, nil},
		{protocol.Claim, protocol.ErrHostReply, nil},
		{protocol.Claim, protocol.ErrRateLimited(1500), []error{ErrRateLimited}},
	}
	for _, c := range cases {
		cause := errors.New("client error")
		err := error(serverError(c.verb, c.text, cause))
		var se *Error
		require.ErrorAs(t, err, &se, c.text)
		require.Equal(t, c.text, se.Text, "the server's text is kept byte for byte")
		require.Equal(t, c.verb.Name, se.Verb)
		require.Equal(t, "trafikey: "+c.verb.Name+": "+c.text, err.Error())
		require.ErrorIs(t, err, cause, "the client's error stays reachable")
		for _, s := range all {
			require.Equal(t, slices.Contains(c.want, s), errors.Is(err, s), "%q: errors.Is(%v)", c.text, s)
		}
	}

	require.Equal(t, "42", serverError(protocol.Add, protocol.ErrAddDuplicate("42"), nil).JobID)
	require.Empty(t, serverError(protocol.Add, protocol.ErrAddDuplicateInBatch, nil).JobID)

	wait, ok := rateLimited(serverError(protocol.Claim, protocol.ErrRateLimited(1500), nil))
	require.True(t, ok)
	require.Equal(t, 1500*time.Millisecond, wait)
	wait, ok = rateLimited(serverError(protocol.Claim, protocol.ErrRateLimited(0), nil))
	require.True(t, ok)
	require.Zero(t, wait)
	_, ok = rateLimited(serverError(protocol.Claim, protocol.ErrStale("claim"), nil))
	require.False(t, ok, "only a rate refusal")
}

func TestTruncateText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "short", truncateText("short"))
	long := string(make([]byte, protocol.MaxText-1)) + "é" // é straddles the limit
	got := truncateText(long)
	require.Len(t, got, protocol.MaxText-1)
}

func TestCeilMS(t *testing.T) {
	t.Parallel()
	require.Equal(t, int64(0), ceilMS(0))
	require.Equal(t, int64(1), ceilMS(time.Nanosecond))
	require.Equal(t, int64(1), ceilMS(time.Millisecond))
	require.Equal(t, int64(2), ceilMS(1001*time.Microsecond))
}

// TestNotRunClasses: the refusals a server gives before running a call, for
// a state that passes, are transient; a redirect is marked apart (only a
// cluster client follows it); READONLY and the verbs' own refusals are not.
func TestNotRunClasses(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]error{
		"TRYAGAIN Multiple keys request during rehashing of slot":                          errNotRun,
		"LOADING Valkey is loading the dataset in memory":                                  errNotRun,
		"CLUSTERDOWN Hash slot not served":                                                 errNotRun,
		"CLUSTERDOWN The cluster is down":                                                  errNotRun,
		"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.": errNotRun,
		"MOVED 3999 127.0.0.1:6381":                                                        errRedirected,
		"ASK 3999 127.0.0.1:6381":                                                          errRedirected,
		"READONLY You can't write against a read only replica.":                            nil,
		protocol.ErrStale("complete"):                                                      nil,
		protocol.ErrWritePaused:                                                            nil,
	} {
		err := serverError(protocol.Complete, text, nil)
		require.Equal(t, want == errNotRun, errors.Is(err, errNotRun), text)
		require.Equal(t, want == errRedirected, errors.Is(err, errRedirected), text)
		require.Equal(t, want == errNotRun || text == protocol.ErrWritePaused, transient(err), text)
	}
}

// deadlineOnly is a context whose deadline has passed while its Err is
// still nil, as a context.WithDeadline's is until its timer fires.
type deadlineOnly struct{ context.Context }

func (deadlineOnly) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

func TestCtxDone(t *testing.T) {
	t.Parallel()
	require.NoError(t, ctxDone(context.Background()))
	require.ErrorIs(t, ctxDone(deadlineOnly{context.Background()}), context.DeadlineExceeded)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, ctxDone(ctx), context.Canceled)
	live, stop := context.WithTimeout(context.Background(), time.Hour)
	defer stop()
	require.NoError(t, ctxDone(live))
}
