package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey"
)

// eventJSON is one line of `trafikey events --json`.
type eventJSON struct {
	ID     string            `json:"id"`
	Event  string            `json:"event"`
	Job    string            `json:"job"`
	Time   time.Time         `json:"time"`
	Fields map[string]string `json:"fields,omitempty"`
}

// streamFrom is what --from takes besides "$": a stream id, ms or ms-seq,
// or an event's id within an entry of several, ms-seq.index.
var streamFrom = regexp.MustCompile(`^\d{1,20}(-\d{1,20}(\.\d{1,9})?)?$`)

func (a *app) newEventsCmd() *cobra.Command {
	var from string
	var count int
	cmd := &cobra.Command{
		Use:   "events <queue>",
		Short: "Tail a queue's job events",
		Long: `events prints a queue's job events as they are published, until interrupted
(or --count of them). The queue publishes them once its events are on
(Admin.SetEvents); each line is the event's id, time, event, job id and its
other fields. A call that makes several transitions publishes them in one
entry: their ids are the entry's id, a dot and their index (ms-seq.0,
ms-seq.1, ...). --from $ (the default) starts with the events published
from now, 0 with the oldest the stream still holds, and an id with the
events after it: pass the last id printed to resume without a gap or a
repeat. A lost
connection is retried. With --json, one JSON object per line. It never
writes.`,
		Args: args(cobra.ExactArgs(1)),
	}
	cmd.Flags().StringVar(&from, "from", "$", "start after this event id ($: from now, 0: the oldest)")
	cmd.Flags().IntVar(&count, "count", 0, "stop after this many events (0: until interrupted)")
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		if from != "$" && !streamFrom.MatchString(from) {
			return usageErrorf("--from %q is not $, 0, a stream id (ms or ms-seq) or an event id (ms-seq.index)", from)
		}
		if count < 0 {
			return usageErrorf("--count %d is negative", count)
		}
		open, cancel := s.bound(ctx)
		q, err := s.queue(open, args[0])
		cancel()
		if err != nil {
			return err
		}
		n := 0
		for ev, err := range q.Events(ctx, from) {
			if err != nil {
				return s.explain(q, err)
			}
			if err := s.printEvent(ev); err != nil {
				return err
			}
			if n++; count > 0 && n == count {
				return nil
			}
		}
		if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil // interrupted: a tail stops cleanly
	})
}

// printEvent prints one event as a line of text or JSON.
func (s *session) printEvent(ev trafikey.Event) error {
	if s.json {
		enc := eventJSON{ID: ev.ID, Event: ev.Name, Job: ev.JobID, Time: ev.Time.UTC(), Fields: ev.Fields}
		if len(enc.Fields) == 0 {
			enc.Fields = nil
		}
		return json.NewEncoder(s.out()).Encode(enc) // one compact object per line
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  %s  %s", ev.ID, ev.Time.UTC().Format("2006-01-02T15:04:05.000Z"), shown([]byte(ev.Name)), shown([]byte(ev.JobID)))
	keys := make([]string, 0, len(ev.Fields))
	for k := range ev.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s=%s", shown([]byte(k)), shown([]byte(clip(ev.Fields[k]))))
	}
	_, err := fmt.Fprintln(s.out(), b.String())
	return err
}
