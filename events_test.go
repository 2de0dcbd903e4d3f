package trafikey_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
)

// collect reads n events of q from id from, failing the test on an error or
// when they do not come within 10 s.
func collect(t *testing.T, q *trafikey.Queue, from string, n int) []trafikey.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var out []trafikey.Event
	for ev, err := range q.Events(ctx, from) {
		require.NoError(t, err)
		out = append(out, ev)
		if len(out) == n {
			return out
		}
	}
	t.Fatalf("got %d events of %d", len(out), n)
	return nil
}

// names is each event's name and job id.
func names(evs []trafikey.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Name + " " + ev.JobID
	}
	return out
}

func TestEventsLifecycle(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		require.NoError(t, q.SetEvents(ctx, 1000))
		before := time.Now().Add(-time.Second)
		ok, err := q.Add(ctx, []byte("ok"))
		require.NoError(t, err)
		bad, err := q.Add(ctx, []byte("bad"), trafikey.MaxAttempts(1))
		require.NoError(t, err)
		jobs, err := q.Claim(ctx, time.Minute, 2)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		require.NoError(t, jobs[0].Progress(ctx, "50%"))
		require.NoError(t, jobs[0].Complete(ctx))
		_, err = jobs[1].Fail(ctx, errors.New("boom"), true)
		require.NoError(t, err)
		require.NoError(t, q.Requeue(ctx, bad))

		evs := collect(t, q, trafikey.EventsFromStart, 8)
		require.Equal(t, []string{
			"added " + ok, "added " + bad, "claimed " + ok, "claimed " + bad,
			"progress " + ok, "completed " + ok, "dead " + bad, "requeued " + bad,
		}, names(evs))
		require.Equal(t, map[string]string{"state": "pending"}, evs[0].Fields)
		require.Equal(t, map[string]string{"att": "1"}, evs[2].Fields)
		require.Equal(t, map[string]string{"value": "50%"}, evs[4].Fields)
		require.Equal(t, "boom", evs[6].Fields["error"])
		for i, ev := range evs {
			require.WithinRange(t, ev.Time, before, time.Now().Add(time.Second))
			if i > 0 {
				require.NotEqual(t, evs[i-1].ID, ev.ID)
			}
		}
	})
}

func TestEventsOff(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		_, err := b.q.Add(ctx, []byte("a"))
		require.NoError(t, err)
		require.NoError(t, b.q.SetEvents(ctx, 1000))
		require.NoError(t, b.q.SetEvents(ctx, 0))
		_, err = b.q.Add(ctx, []byte("b"))
		require.NoError(t, err)
		require.EqualValues(t, 0, b.do(t, "EXISTS", "emq:{test}:events"))
		require.Error(t, b.q.SetEvents(ctx, -1))
		require.Error(t, b.q.SetEvents(ctx, 1_000_001))
	})
}

// A subscriber that stops and resumes from the last id it saw misses none
// of the events still in the stream, and sees none twice.
func TestEventsResume(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		require.NoError(t, q.SetEvents(ctx, 100000))
		add := func(n int) {
			for i := range n {
				_, err := q.Add(ctx, []byte(strconv.Itoa(i)))
				require.NoError(t, err)
			}
		}
		add(10)
		first := collect(t, q, trafikey.EventsFromStart, 4)
		add(10)
		rest := collect(t, q, first[len(first)-1].ID, 16)
		all := append(first, rest...)
		for i, ev := range all {
			require.Equal(t, strconv.Itoa(i+1), ev.JobID, "event %d", i)
			require.Equal(t, trafikey.EventAdded, ev.Name)
		}
	})
}

// From now: only what is published after the call.
func TestEventsFromNow(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		require.NoError(t, q.SetEvents(ctx, 1000))
		_, err := q.Add(ctx, []byte("old"))
		require.NoError(t, err)
		got := make(chan trafikey.Event, 1)
		sub, cancel := context.WithCancel(ctx)
		defer cancel()
		ready := make(chan struct{})
		go func() {
			close(ready)
			for ev, err := range q.Events(sub, trafikey.EventsFromNow) {
				if err == nil {
					got <- ev
				}
				return
			}
		}()
		<-ready
		time.Sleep(200 * time.Millisecond) // the subscriber has read the top
		id, err := q.Add(ctx, []byte("new"))
		require.NoError(t, err)
		select {
		case ev := <-got:
			require.Equal(t, id, ev.JobID)
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
	})
}

// The subscriber's connections are killed while events flow: it reconnects
// and yields every event once, in order.
func TestEventsReconnect(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		require.NoError(t, q.SetEvents(ctx, 100000))
		const n = 200
		done := make(chan []trafikey.Event, 1)
		go func() {
			sub, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			var out []trafikey.Event
			for ev, err := range q.Events(sub, trafikey.EventsFromStart) {
				if err != nil {
					break
				}
				out = append(out, ev)
				if len(out) == n {
					break
				}
			}
			done <- out
		}()
		killer, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{b.server.Addr()}, DisableCache: true})
		require.NoError(t, err)
		defer killer.Close()
		for i := range n {
			_, err := q.Add(ctx, []byte(strconv.Itoa(i)))
			require.NoError(t, err)
			if i%40 == 20 {
				// every connection but the killer's own
				require.NoError(t, killer.Do(ctx, killer.B().Arbitrary("CLIENT", "KILL").Args("SKIPME", "yes").Build()).Error())
				time.Sleep(20 * time.Millisecond)
			}
		}
		out := <-done
		require.Len(t, out, n)
		for i, ev := range out {
			require.Equal(t, strconv.Itoa(i+1), ev.JobID)
		}
	})
}

func TestEventsWrongType(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		b.do(t, "SET", "emq:{test}:events", "x")
		for _, err := range b.q.Events(t.Context(), trafikey.EventsFromStart) {
			require.ErrorContains(t, err, "WRONGTYPE")
		}
	})
}

// Watch a queue's jobs: turn its events on, then read them from the start
// of the stream (or from the last id seen, to resume).
func ExampleQueue_Events() {
	q, done := exampleQueue("emails")
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if err := q.SetEvents(ctx, 10000); err != nil {
		log.Fatal(err)
	}
	id, _ := q.Add(ctx, []byte("hello"))
	jobs, _ := q.Claim(ctx, time.Minute, 1)
	_ = jobs[0].Complete(ctx)

	n := 0
	for ev, err := range q.Events(ctx, trafikey.EventsFromStart) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ev.Name, ev.JobID == id, ev.Fields)
		if n++; n == 3 {
			break
		}
	}
	// Output:
	// added true map[state:pending]
	// claimed true map[att:1]
	// completed true map[]
}
