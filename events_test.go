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
		require.NoError(t, q.Admin().SetEvents(ctx, 1000))
		before := time.Now().Add(-time.Second)
		ok, err := q.Add(ctx, []byte("ok"), nil)
		require.NoError(t, err)
		bad, err := q.Add(ctx, []byte("bad"), &trafikey.JobOptions{MaxAttempts: 1})
		require.NoError(t, err)
		jobs, err := q.Claim(ctx, time.Minute, 2)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		require.NoError(t, jobs[0].Progress(ctx, "50%"))
		require.NoError(t, jobs[0].Complete(ctx))
		_, err = jobs[1].Fail(ctx, errors.New("boom"), true)
		require.NoError(t, err)
		require.NoError(t, q.Admin().Requeue(ctx, bad))

		evs := collect(t, q, "0", 8)
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

// Every event of a job with a kind carries it in Fields; a job without one
// has none.
func TestEventsKind(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		require.NoError(t, q.Admin().SetEvents(ctx, 1000))
		mail, err := q.Add(ctx, []byte("a"), &trafikey.JobOptions{Kind: "email.send"})
		require.NoError(t, err)
		plain, err := q.Add(ctx, []byte("b"), nil)
		require.NoError(t, err)
		jobs, err := q.Claim(ctx, time.Minute, 2)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		require.Equal(t, "email.send", jobs[0].Kind)
		for _, j := range jobs {
			require.NoError(t, j.Complete(ctx))
		}
		evs := collect(t, q, "0", 6)
		require.Equal(t, []string{
			"added " + mail, "added " + plain, "claimed " + mail, "claimed " + plain, "completed " + mail, "completed " + plain,
		}, names(evs))
		require.Equal(t, map[string]string{"state": "pending", "kind": "email.send"}, evs[0].Fields)
		require.Equal(t, map[string]string{"state": "pending"}, evs[1].Fields)
		require.Equal(t, map[string]string{"att": "1", "kind": "email.send"}, evs[2].Fields)
		require.Equal(t, map[string]string{"att": "1"}, evs[3].Fields)
		require.Equal(t, map[string]string{"kind": "email.send"}, evs[4].Fields)
		require.Empty(t, evs[5].Fields)
	})
}

func TestEventsOff(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		_, err := b.q.Add(ctx, []byte("a"), nil)
		require.NoError(t, err)
		require.NoError(t, b.q.Admin().SetEvents(ctx, 1000))
		require.NoError(t, b.q.Admin().SetEvents(ctx, 0))
		_, err = b.q.Add(ctx, []byte("b"), nil)
		require.NoError(t, err)
		require.EqualValues(t, 0, b.do(t, "EXISTS", "emq:{test}:events"))
		require.Error(t, b.q.Admin().SetEvents(ctx, -1))
		require.Error(t, b.q.Admin().SetEvents(ctx, 1_000_001))
	})
}

// A subscriber that stops and resumes from the last id it saw misses none
// of the events still in the stream, and sees none twice.
func TestEventsResume(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		require.NoError(t, q.Admin().SetEvents(ctx, 100000))
		add := func(n int) {
			for i := range n {
				_, err := q.Add(ctx, []byte(strconv.Itoa(i)), nil)
				require.NoError(t, err)
			}
		}
		add(10)
		first := collect(t, q, "0", 4)
		add(10)
		rest := collect(t, q, first[len(first)-1].ID, 16)
		all := append(first, rest...)
		for i, ev := range all {
			require.Equal(t, strconv.Itoa(i+1), ev.JobID, "event %d", i)
			require.Equal(t, "added", ev.Name)
		}
	})
}

// From now: only what is published after the call.
func TestEventsFromNow(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		require.NoError(t, q.Admin().SetEvents(ctx, 1000))
		_, err := q.Add(ctx, []byte("old"), nil)
		require.NoError(t, err)
		got := make(chan trafikey.Event, 1)
		sub, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			for ev, err := range q.Events(sub, "") {
				if err == nil {
					got <- ev
				}
				return
			}
		}()
		// subscribed: the iterator has read the stream's top and blocks in
		// an XREAD after it
		require.Eventually(t, func() bool { return blockedIn(t, b, "xread") == 1 }, eventually, time.Millisecond)
		id, err := q.Add(ctx, []byte("new"), nil)
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
		require.NoError(t, q.Admin().SetEvents(ctx, 100000))
		const n = 200
		done := make(chan []trafikey.Event, 1)
		go func() {
			sub, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			var out []trafikey.Event
			for ev, err := range q.Events(sub, "0") {
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
			_, err := q.Add(ctx, []byte(strconv.Itoa(i)), nil)
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

// A call of several transitions publishes one entry: Events yields its
// events in order, each with its own position, and resuming from any of
// them yields the rest of the entry, then what follows, none twice.
func TestEventsBatchEntry(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		require.NoError(t, q.Admin().SetEvents(ctx, 1000))
		jobs := make([]trafikey.JobSpec, 4)
		for i := range jobs {
			jobs[i] = trafikey.JobSpec{Payload: []byte(strconv.Itoa(i))}
		}
		ids, err := q.AddBatch(ctx, jobs)
		require.NoError(t, err)
		claimed, err := q.Claim(ctx, time.Minute, 4)
		require.NoError(t, err)
		require.Len(t, claimed, 4)
		require.NoError(t, claimed[0].Complete(ctx))
		require.EqualValues(t, 3, b.do(t, "XLEN", "emq:{test}:events"), "one entry per call")

		all := collect(t, q, "0", 9)
		var want []string
		for _, id := range ids {
			want = append(want, "added "+id)
		}
		for _, j := range claimed {
			want = append(want, "claimed "+j.ID)
		}
		want = append(want, "completed "+claimed[0].ID)
		require.Equal(t, want, names(all))
		for i, ev := range all[:4] {
			require.Equal(t, all[0].Entry, ev.Entry)
			require.Equal(t, i, ev.Index)
			require.Equal(t, ev.Entry+"."+strconv.Itoa(i), ev.ID)
			require.Equal(t, map[string]string{"state": "pending"}, ev.Fields)
		}
		require.Equal(t, map[string]string{"att": "1"}, all[4].Fields)
		require.NotEqual(t, all[0].Entry, all[4].Entry)
		last := all[8]
		require.Equal(t, last.Entry, last.ID, "an entry of one event: its stream id")
		require.Equal(t, 0, last.Index)

		// from every event's position: exactly the events after it
		for i, ev := range all[:8] {
			rest := collect(t, q, ev.ID, 8-i)
			require.Equal(t, names(all[i+1:]), names(rest), "after %s", ev.ID)
			require.Equal(t, all[i+1].ID, rest[0].ID)
		}
		// a plain stream id: after its whole entry
		require.Equal(t, names(all[4:]), names(collect(t, q, all[0].Entry, 5)))
	})
}

// Resuming mid-entry after the entry was trimmed away goes on with the
// entries after it; a position that is not one is refused before any I/O.
func TestEventsPositions(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		q := b.q
		require.NoError(t, q.Admin().SetEvents(ctx, 1000))
		_, err := q.AddBatch(ctx, []trafikey.JobSpec{{Payload: []byte("a")}, {Payload: []byte("b")}})
		require.NoError(t, err)
		first := collect(t, q, "0", 2)
		_, err = q.Add(ctx, []byte("c"), nil)
		require.NoError(t, err)
		b.do(t, "XDEL", "emq:{test}:events", first[0].Entry)
		require.Equal(t, []string{"added 3"}, names(collect(t, q, first[0].ID, 1)))

		for _, from := range []string{"1-0.", "1-0.x", "1-0.-1", "1-0.01", "x.1", "1.1", "1-0.1.2"} {
			n := 0
			for _, err := range q.Events(ctx, from) {
				require.ErrorIs(t, err, trafikey.ErrInvalid, from)
				n++
			}
			require.Equal(t, 1, n, from)
		}
	})
}

// An entry PUBLISH writes is one event, whatever its fields are named: a
// field named event (or n, or id) after the first ones is one of its fields.
func TestEventsPublished(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		b.do(t, "XADD", "emq:{test}:events", "*", "brand", "emq", "event", "custom", "id", "7",
			"event", "other", "n", "2", "id", "8")
		evs := collect(t, b.q, "0", 1)
		require.Equal(t, "custom", evs[0].Name)
		require.Equal(t, "7", evs[0].JobID)
		require.Equal(t, map[string]string{"event": "other", "n": "2", "id": "8"}, evs[0].Fields)
		require.Equal(t, evs[0].Entry, evs[0].ID)
	})
}

func TestEventsWrongType(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, b *testBundle) {
		b.do(t, "SET", "emq:{test}:events", "x")
		for _, err := range b.q.Events(t.Context(), "0") {
			require.ErrorContains(t, err, "WRONGTYPE")
		}
	})
}

// Watch a queue's jobs: turn its events on, then read them from the start
// of the stream (or from the last id seen, to resume).
func ExampleQueue_Events() {
	q, done := exampleQueue("emails", nil)
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if err := q.Admin().SetEvents(ctx, 10000); err != nil {
		log.Fatal(err)
	}
	id, _ := q.Add(ctx, []byte("hello"), nil)
	jobs, _ := q.Claim(ctx, time.Minute, 1)
	_ = jobs[0].Complete(ctx)

	n := 0
	for ev, err := range q.Events(ctx, "0") {
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

// Resume a subscriber exactly: an event's ID is its position, even within
// an entry holding several events (a call that added, claimed or completed
// several jobs at once).
func ExampleQueue_Events_resume() {
	q, done := exampleQueue("reports", nil)
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if err := q.Admin().SetEvents(ctx, 10000); err != nil {
		log.Fatal(err)
	}
	_, _ = q.AddBatch(ctx, []trafikey.JobSpec{{Payload: []byte("a")}, {Payload: []byte("b")}, {Payload: []byte("c")}})

	var last string // what a subscriber would store after each event
	for ev, err := range q.Events(ctx, "0") {
		if err != nil {
			log.Fatal(err)
		}
		last = ev.ID
		fmt.Println("first run:", ev.Name, ev.JobID, ev.Index)
		break // stops after the first event of the entry
	}
	n := 0
	for ev, err := range q.Events(ctx, last) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("resumed:", ev.Name, ev.JobID, ev.Index)
		if n++; n == 2 {
			break
		}
	}
	// Output:
	// first run: added 1 0
	// resumed: added 2 1
	// resumed: added 3 2
}
