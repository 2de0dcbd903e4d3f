package trafikey

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/protocol"
)

// The job events a queue publishes once SetEvents turned them on, by the
// name Event.Name carries (docs/PROTOCOL.md, "Job events").
const (
	EventAdded     = protocol.EventAdded     // a job was added; field "state": pending, delayed or waiting
	EventClaimed   = protocol.EventClaimed   // a worker claimed it; field "att": the attempt
	EventCompleted = protocol.EventCompleted // it completed
	EventRetrying  = protocol.EventRetrying  // it failed and will be retried; field "error"
	EventDead      = protocol.EventDead      // it died (failed, lease expired, a child failed it); field "error"
	EventRecovered = protocol.EventRecovered // its lease expired and it is ready again
	EventPromoted  = protocol.EventPromoted  // its delay passed and it is ready
	EventRemoved   = protocol.EventRemoved   // it was removed
	EventRequeued  = protocol.EventRequeued  // a dead job was requeued
	EventProgress  = protocol.EventProgress  // its handler reported progress; field "value"
	EventReleased  = protocol.EventReleased  // a parent's children all finished: it is ready
	// EventRescheduled: Reschedule moved it; field "state": pending or delayed.
	EventRescheduled = protocol.EventRescheduled
	// EventCancelled: Cancel ended it; field "state": the state it left.
	EventCancelled = protocol.EventCancelled
)

// EventsFromStart and EventsFromNow are the from values of Queue.Events
// that read the whole stream, or only the events published after the call.
const (
	EventsFromStart = "0-0"
	EventsFromNow   = "$"
)

// Event is one entry of a queue's events stream: a job's transition, or an
// event a caller published on the same stream.
type Event struct {
	// ID is the entry's stream id (ms-seq), increasing: resume after it.
	ID string
	// Name is the event (EventAdded, …).
	Name string
	// JobID is the job's id.
	JobID string
	// Fields holds the entry's other fields (state, att, error, value).
	Fields map[string]string
	// Time is when the server published it (the id's milliseconds).
	Time time.Time
}

// SetEvents turns the queue's job events on, with the events stream bounded
// to about maxLen entries (1..1000000; the server trims whole nodes, so a
// few more may stay), or off with 0. It applies to the jobs added
// afterwards: a job added while events were on publishes every transition
// (added, claimed, completed, …) in the same command that makes it, and one
// added while they were off publishes none. Turning events off keeps the
// stream's entries.
func (q *Queue) SetEvents(ctx context.Context, maxLen int) error {
	if maxLen < 0 || maxLen > protocol.MaxEventsLen {
		return invalid("set events", "max length %d outside 0..%d", maxLen, protocol.MaxEventsLen)
	}
	_, err := q.callInt(ctx, protocol.Events, protocol.FormatInt(int64(maxLen)))
	return err
}

// eventsBlock is how long one XREAD of Events blocks before it reads again.
const eventsBlock = 5 * time.Second

// eventsBatch is the most entries one XREAD of Events takes.
const eventsBatch = 1000

// Events yields the queue's events after the stream id from, in order, for
// as long as ctx lasts: EventsFromStart reads every entry still in the
// stream, EventsFromNow (or "") those published after the call, and an
// entry's ID those after it, so a subscriber that stops resumes from the
// last ID it saw and misses none the stream still holds (it is bounded by
// SetEvents: a subscriber that falls behind by more loses the oldest).
//
// The iterator reads with XREAD BLOCK on a connection of its own and
// survives a lost connection or a restarting server: it tries again, from
// 50 ms doubling to 2 s, after the last ID it yielded. Any other error
// (a key of another type, a denied key, a bad id) is yielded once and ends
// the iteration; ctx ending ends it without an error.
func (q *Queue) Events(ctx context.Context, from string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		key := q.keys.Fixed(protocol.SuffixEvents)
		last := from
		if last == "" || last == EventsFromNow {
			top, err := q.eventsTop(ctx, key)
			if err != nil {
				if ctx.Err() == nil {
					yield(Event{}, err)
				}
				return
			}
			last = top
		}
		for ctx.Err() == nil {
			var entries []valkey.XRangeEntry
			err := retryTransient(ctx, 2*time.Second, func() error {
				var err error
				entries, err = q.readEvents(ctx, key, last)
				return err
			}, nil)
			if err != nil {
				if ctx.Err() == nil {
					yield(Event{}, err)
				}
				return
			}
			for _, e := range entries {
				last = e.ID
				if !yield(eventOf(e), nil) {
					return
				}
			}
		}
	}
}

// eventsTop is the id of the stream's newest entry, "0-0" when it has none:
// Events from now reads after it, so an entry published while it
// reconnects is not skipped as "$" would.
func (q *Queue) eventsTop(ctx context.Context, key string) (string, error) {
	var top string
	err := untilReachable(ctx, func() error {
		res := q.client.Do(ctx, q.client.B().Xrevrange().Key(key).End("+").Start("-").Count(1).Build())
		if err := res.NonValkeyError(); err != nil {
			if ctx.Err() == nil {
				err = &transportError{err: err}
			}
			return fmt.Errorf("trafikey: events: %w", err)
		}
		entries, err := res.AsXRange()
		if err != nil {
			return fmt.Errorf("trafikey: events: %w", err)
		}
		top = EventsFromStart
		if len(entries) > 0 {
			top = entries[0].ID
		}
		return nil
	})
	return top, err
}

// readEvents is one XREAD BLOCK of the stream after id last: nil when none
// came in eventsBlock.
func (q *Queue) readEvents(ctx context.Context, key, last string) ([]valkey.XRangeEntry, error) {
	cmd := q.client.B().Xread().Count(eventsBatch).Block(eventsBlock.Milliseconds()).Streams().Key(key).Id(last).Build()
	res := q.client.Do(ctx, cmd)
	if err := res.NonValkeyError(); err != nil {
		if ctx.Err() == nil {
			err = &transportError{err: err}
		}
		return nil, fmt.Errorf("trafikey: events: %w", err)
	}
	streams, err := res.AsXRead()
	if valkey.IsValkeyNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trafikey: events: %w", err)
	}
	return streams[key], nil
}

// eventOf reads an entry as an Event.
func eventOf(e valkey.XRangeEntry) Event {
	ev := Event{ID: e.ID, Fields: map[string]string{}}
	for f, v := range e.FieldValues {
		switch f {
		case protocol.EventBrandField:
		case protocol.EventNameField:
			ev.Name = v
		case protocol.EventIDField:
			ev.JobID = v
		default:
			ev.Fields[f] = v
		}
	}
	if ms, _, ok := strings.Cut(e.ID, "-"); ok {
		if n, err := strconv.ParseInt(ms, 10, 64); err == nil {
			ev.Time = time.UnixMilli(n)
		}
	}
	return ev
}
