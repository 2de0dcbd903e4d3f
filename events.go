package trafikey

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Event is one event of a queue's events stream: a job's transition, or an
// event a caller published on the same stream. A call that makes several
// transitions publishes them in one stream entry, in order; Events yields
// them one by one, each with its own position.
type Event struct {
	// ID is the event's position, to resume after (Queue.Events): the
	// stream id (ms-seq) of its entry when the entry holds one event, and
	// "<ms-seq>.<index>" (index from 0, see Index) for each event of an
	// entry holding several.
	ID string
	// Entry is the stream id (ms-seq) of the entry holding the event.
	Entry string
	// Index is the event's place in its entry, from 0.
	Index int
	// Name is the event. A job's transitions are (docs/PROTOCOL.md, "Job
	// events"):
	//
	//   - "added": a job was added; field "state": pending, delayed or
	//     waiting
	//   - "claimed": a worker claimed it; field "att": the attempt
	//   - "completed": it completed
	//   - "retrying": it failed and will be retried; field "error"
	//   - "dead": it died (failed, lease expired, a child failed it); field
	//     "error"
	//   - "recovered": its lease expired and it is ready again
	//   - "promoted": its delay passed and it is ready
	//   - "removed": it was removed
	//   - "requeued": a dead job was requeued
	//   - "progress": its handler reported progress; field "value"
	//   - "released": a parent's children all finished: it is ready
	//   - "rescheduled": Reschedule moved it; field "state": pending or
	//     delayed
	//   - "cancelled": Cancel ended it; field "state": the state it left
	Name string
	// JobID is the job's id.
	JobID string
	// Fields holds the event's other fields (state, att, error, value; a
	// published event's own fields). A job event of a job with a kind
	// (JobOptions.Kind) holds it as "kind": the kind its row holds, on
	// every event of the job, absent for a job without one.
	Fields map[string]string
	// Time is when the server published it (the entry id's milliseconds).
	Time time.Time
}

// SetEvents turns the queue's job events on, with the events stream bounded
// to about maxLen entries (1..1000000; the server trims whole nodes, so a
// few more may stay), or off with 0. It applies to the jobs added
// afterwards: a job added while events were on publishes every transition
// (added, claimed, completed, …) in the same command that makes it, and one
// added while they were off publishes none. Turning events off keeps the
// stream's entries.
func (a Admin) SetEvents(ctx context.Context, maxLen int) error {
	q := a.q
	if maxLen < 0 || maxLen > protocol.MaxEventsLen {
		return invalid("set events", "max length %d outside 0..%d", maxLen, protocol.MaxEventsLen)
	}
	if q.parts.Load() != nil {
		return q.eachPart(func(_ int, p *Queue) error { return p.Admin().SetEvents(ctx, maxLen) })
	}
	_, err := q.callInt(ctx, protocol.Events, protocol.FormatInt(int64(maxLen)))
	return err
}

// eventsBlock is how long one XREAD of Events blocks before it reads again.
const eventsBlock = 5 * time.Second

// eventsBatch is the most entries one XREAD of Events takes. An entry holds
// up to protocol.MaxEntryEvents events (a call's), so 100 entries bound one
// reply at 100 000 events while a stream of one-event entries still
// catches up 100 at a time.
const eventsBatch = 100

// Events yields the queue's events after the position from, in order, for
// as long as ctx lasts: "0" reads every entry still in the stream, "" (or
// "$") those published after the call, a stream id (ms-seq, or ms alone)
// those of the entries after it, and an Event's ID the events
// after that event, even within the entry that holds it. So a subscriber
// that stops resumes from the ID of the last event it handled and neither
// misses nor repeats one the stream still holds (it is bounded by
// SetEvents, in entries: a subscriber that falls behind by more loses the
// oldest). A from that is neither is yielded as an error wrapping
// ErrInvalid, before any I/O.
//
// The iterator reads with XREAD BLOCK on a connection of its own and
// survives a lost connection or a restarting server: it tries again, from
// 50 ms doubling to 2 s, after the last entry it yielded (a LOADING reply
// of a server loading its data valkey-go retries itself, as it does for
// any read-only command). Any other error
// (a key of another type, a denied key, a bad id) is yielded once and ends
// the iteration; ctx ending ends it without an error. An iterator started
// before the queue was first partitioned reads the queue's own stream,
// partition 0's, to its end (docs/PARTITIONS.md, "Growing").
func (q *Queue) Events(ctx context.Context, from string) iter.Seq2[Event, error] {
	if q.parts.Load() != nil {
		return q.eventsParts(ctx, from)
	}
	return func(yield func(Event, error) bool) {
		key := q.keys.Fixed(protocol.SuffixEvents)
		last, after, err := parseEventsFrom(from)
		if err != nil {
			yield(Event{}, err)
			return
		}
		fail := func(err error) {
			if ctx.Err() == nil {
				yield(Event{}, err)
			}
		}
		if last == "" || last == "$" {
			if last, err = q.eventsTop(ctx, key); err != nil {
				fail(err)
				return
			}
		}
		// Resuming within an entry: the rest of its events first.
		if after >= 0 {
			var entries []valkey.XRangeSlice
			if err := untilReachable(ctx, func() error {
				var err error
				entries, err = q.eventEntry(ctx, key, last)
				return err
			}); err != nil {
				fail(err)
				return
			}
			for _, e := range entries {
				for _, ev := range eventsOf(e) {
					if ev.Index > after && !yield(ev, nil) {
						return
					}
				}
			}
		}
		for ctx.Err() == nil {
			var entries []valkey.XRangeSlice
			err := retryTransient(ctx, 2*time.Second, func() error {
				var err error
				entries, err = q.readEvents(ctx, key, last)
				return err
			}, nil)
			if err != nil {
				fail(err)
				return
			}
			for _, e := range entries {
				last = e.ID
				for _, ev := range eventsOf(e) {
					if !yield(ev, nil) {
						return
					}
				}
			}
		}
	}
}

// parseEventsFrom splits Events' from into the stream id to read after and
// the index of the last event already seen in that entry (-1: the whole
// entry, or none).
func parseEventsFrom(from string) (id string, after int, err error) {
	id, index, dotted := strings.Cut(from, ".")
	if !dotted {
		// a bare ms ("0" too) is a stream id as well: XREAD reads it as ms-0
		_, bareMS := strconv.ParseUint(from, 10, 64)
		if from == "" || from == "$" || streamID(from) || bareMS == nil {
			return from, -1, nil
		}
		return "", 0, invalid("events", "position %q is not a stream id or an event's ID", echo(from))
	}
	n, err := strconv.Atoi(index)
	if err != nil || n < 0 || index != strconv.Itoa(n) || !streamID(id) {
		return "", 0, invalid("events", "position %q is not a stream id or an event's ID", echo(from))
	}
	return id, n, nil
}

// streamID reports whether s spells a stream id, ms-seq in decimals.
func streamID(s string) bool {
	ms, seq, ok := strings.Cut(s, "-")
	_, err1 := strconv.ParseUint(ms, 10, 64)
	_, err2 := strconv.ParseUint(seq, 10, 64)
	return ok && err1 == nil && err2 == nil
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
		top = "0-0"
		if len(entries) > 0 {
			top = entries[0].ID
		}
		return nil
	})
	return top, err
}

// eventEntry is the entry of stream id id, or none when it is gone.
func (q *Queue) eventEntry(ctx context.Context, key, id string) ([]valkey.XRangeSlice, error) {
	res := q.client.Do(ctx, q.client.B().Xrange().Key(key).Start(id).End(id).Build())
	if err := res.NonValkeyError(); err != nil {
		if ctx.Err() == nil {
			err = &transportError{err: err}
		}
		return nil, fmt.Errorf("trafikey: events: %w", err)
	}
	entries, err := res.AsXRangeSlices()
	if err != nil {
		return nil, fmt.Errorf("trafikey: events: %w", err)
	}
	return entries, nil
}

// readEvents is one XREAD BLOCK of the stream after id last: nil when none
// came in eventsBlock. The slices keep an entry's pairs in order, repeated
// names included, as an entry of several events needs.
func (q *Queue) readEvents(ctx context.Context, key, last string) ([]valkey.XRangeSlice, error) {
	cmd := q.client.B().Xread().Count(eventsBatch).Block(eventsBlock.Milliseconds()).Streams().Key(key).Id(last).Build()
	res := q.client.Do(ctx, cmd)
	if err := res.NonValkeyError(); err != nil {
		if ctx.Err() == nil {
			err = &transportError{err: err}
		}
		return nil, fmt.Errorf("trafikey: events: %w", err)
	}
	streams, err := res.AsXReadSlices()
	if valkey.IsValkeyNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trafikey: events: %w", err)
	}
	return streams[key], nil
}

// eventsOf reads an entry as its events, in order. An entry whose second
// pair is n holds several (docs/PROTOCOL.md, "Job events"): its pairs after
// that one split at each event field, each event's id pair next, then its
// own fields. Any other entry is one event (a job's, or PUBLISH's, whose
// fields may have any name): its first event and id pairs name it, every
// other pair after the brand is a field.
func eventsOf(e valkey.XRangeSlice) []Event {
	var t time.Time
	if ms, _, ok := strings.Cut(e.ID, "-"); ok {
		if n, err := strconv.ParseInt(ms, 10, 64); err == nil {
			t = time.UnixMilli(n)
		}
	}
	fv := e.FieldValues
	if len(fv) > 0 && fv[0].Field == protocol.EventBrandField {
		fv = fv[1:]
	}
	if len(fv) == 0 || fv[0].Field != protocol.EventCountField {
		ev := Event{ID: e.ID, Entry: e.ID, Fields: map[string]string{}, Time: t}
		named, identified := false, false
		for _, p := range fv {
			switch {
			case p.Field == protocol.EventNameField && !named:
				ev.Name, named = p.Value, true
			case p.Field == protocol.EventIDField && !identified:
				ev.JobID, identified = p.Value, true
			default:
				ev.Fields[p.Field] = p.Value
			}
		}
		return []Event{ev}
	}
	n, _ := strconv.Atoi(fv[0].Value)
	out := make([]Event, 0, max(n, 0))
	for _, p := range fv[1:] {
		switch {
		case p.Field == protocol.EventNameField:
			i := len(out)
			out = append(out, Event{ID: e.ID + "." + strconv.Itoa(i), Entry: e.ID, Index: i, Name: p.Value,
				Fields: map[string]string{}, Time: t})
		case len(out) == 0: // nothing before the first event
		case p.Field == protocol.EventIDField && out[len(out)-1].JobID == "":
			out[len(out)-1].JobID = p.Value
		default:
			out[len(out)-1].Fields[p.Field] = p.Value
		}
	}
	return out
}
