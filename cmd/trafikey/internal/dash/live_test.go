package dash

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// push is one server-sent event of /api/live.
type push struct {
	event string
	data  string
}

// openLive reads srv's /api/live until the test ends, and returns its
// pushes.
func openLive(t *testing.T, url string) <-chan push {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/live", nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	out := make(chan push, 1024)
	go func() {
		defer res.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		var p push
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if p.event != "" {
					select {
					case out <- p:
					case <-ctx.Done():
						return
					}
				}
				p = push{}
			case strings.HasPrefix(line, "event: "):
				p.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				p.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return out
}

// next returns the next push of event that ok accepts.
func next[T any](t *testing.T, pushes <-chan push, event string, ok func(T) bool) T {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case p, open := <-pushes:
			require.True(t, open, "the stream ended")
			if p.event != event {
				continue
			}
			var v T
			require.NoError(t, json.Unmarshal([]byte(p.data), &v), p.data)
			if ok(v) {
				return v
			}
		case <-deadline:
			t.Fatalf("no %s push came that the test waits for", event)
		}
	}
}

func TestLive(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	mail, err := trafikey.Open(ctx, c, "mail", nil)
	require.NoError(t, err)
	require.NoError(t, mail.Admin().SetEvents(ctx, 1000))
	quiet, err := trafikey.Open(ctx, c, "quiet", nil)
	require.NoError(t, err)
	// A slow sample: a change of mail comes by its events, not by a tick.
	srv := startDash(t, c, Options{SampleEvery: time.Hour})
	pushes := openLive(t, srv.URL)
	next(t, pushes, "hello", func(struct{}) bool { return true })
	eventually(t, srv, "/api/queues", `"name":"mail"`)

	// The watch starts at a discovery: jobs are added until one of their
	// events is pushed.
	stop := make(chan struct{})
	added := make(chan string, 1000)
	go func() {
		for {
			id, err := mail.Add(ctx, []byte("x"), nil)
			if err != nil {
				return
			}
			added <- id
			_, _ = quiet.Add(ctx, []byte("x"), nil)
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	got := next(t, pushes, "queue", func(p queuePush) bool { return len(p.Events) > 0 })
	close(stop)
	require.Equal(t, "mail", got.Queue.Name)
	require.True(t, got.Queue.Live)
	require.Positive(t, got.Queue.Pending)
	require.Equal(t, "added", got.Events[0].Name)
	require.NotEmpty(t, got.Events[0].Job)

	// A claim and a failure are pushed with the counts after them.
	jobs, err := mail.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	next(t, pushes, "queue", func(p queuePush) bool {
		return p.Queue.Active == 1 && len(p.Events) > 0 && p.Events[len(p.Events)-1].Name == "claimed"
	})
	_, err = jobs[0].Fail(ctx, errTest, false)
	require.NoError(t, err)
	dead := next(t, pushes, "queue", func(p queuePush) bool { return p.Queue.Dead == 1 })
	require.Equal(t, "dead", dead.Events[len(dead.Events)-1].Name)
	require.Equal(t, jobs[0].ID, dead.Events[len(dead.Events)-1].Job)
	require.Contains(t, dead.Events[len(dead.Events)-1].Error, "boom")

	// The overview knows which queues are watched.
	_, body, _ := get(t, srv, "/api/queues")
	require.Contains(t, body, `"name":"mail"`)
	var ov overview
	require.NoError(t, json.Unmarshal([]byte(body), &ov))
	for _, q := range ov.Queues {
		require.Equal(t, q.Name == "mail", q.Live, q.Name)
	}

	// Events turned off: the watch stops at the next discovery, which an
	// action's sample makes; the sample is pushed as an uncharted tick.
	require.NoError(t, mail.Admin().SetEvents(ctx, 0))
	time.Sleep(250 * time.Millisecond) // DiscoverEvery of startDash
	code, _ := post(t, srv, "/api/queues/quiet/pause", true)
	require.Equal(t, http.StatusOK, code)
	tick := next(t, pushes, "tick", func(tickPush) bool { return true })
	require.False(t, tick.Charted)
	_, body, _ = get(t, srv, "/api/queues")
	require.Contains(t, body, `"name":"mail"`)
	require.NotContains(t, body, `"live":true`)
}

var errTest = errString("boom")

type errString string

func (e errString) Error() string { return string(e) }
