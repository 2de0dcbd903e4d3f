package dash

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
	"github.com/trafikey/trafikey/internal/protocol"
)

// The job tables: a page of one state's jobs (Queue.Jobs), or the one job
// a search by id finds, with the queue's counts beside it.

// maxJobsPage bounds the rows of one page of a table.
const maxJobsPage = 100

// previewClip is how many bytes of a job's error, progress and payload a
// row of a table shows.
const previewClip = 160

// jobRowView is one row of a job table.
type jobRowView struct {
	ID string `json:"id"`
	// State is empty when the job's row is gone (a set member left
	// behind); every field but Score is then zero.
	State string `json:"state,omitempty"`
	// Score is the job's place in its set; At, for delayed, active, dead
	// and completed, the time it is.
	Score       int64      `json:"score"`
	At          *time.Time `json:"at,omitempty"`
	Attempts    int        `json:"attempts"`
	MaxAttempts int        `json:"max_attempts"`
	Priority    int        `json:"priority"`
	Lane        string     `json:"lane,omitempty"`
	Kind        string     `json:"kind,omitempty"`
	Parent      string     `json:"parent,omitempty"`
	Waiting     int        `json:"waiting_children,omitempty"`
	AddedAt     *time.Time `json:"added_at,omitempty"`
	// Error and Progress are cut to previewClip bytes; ErrorSize is the
	// whole error's.
	Error       string `json:"error,omitempty"`
	ErrorSize   int    `json:"error_size,omitempty"`
	Progress    string `json:"progress,omitempty"`
	PayloadSize int    `json:"payload_size"`
	// Preview is the payload's start as one line of text, hex when it is
	// not UTF-8 text; absent for a payload over 16 KiB.
	Preview       *string `json:"preview,omitempty"`
	PreviewFormat string  `json:"preview_format,omitempty"`
}

func rowView(r trafikey.JobRow) jobRowView {
	v := jobRowView{ID: r.ID, Score: r.Score}
	if !r.Exists {
		return v
	}
	v.State = string(r.State)
	if !r.At.IsZero() {
		at := r.At.UTC()
		v.At = &at
	}
	if !r.AddedAt.IsZero() {
		added := r.AddedAt.UTC()
		v.AddedAt = &added
	}
	v.Attempts, v.MaxAttempts, v.Priority = r.Attempts, r.MaxAttempts, r.Priority
	v.Lane, v.Kind, v.Parent, v.Waiting = r.Lane, r.Kind, r.Parent, r.Waiting
	v.Error, v.ErrorSize, v.Progress = oneLine(r.LastError), r.ErrorSize, oneLine(r.Progress)
	v.PayloadSize = r.PayloadSize
	if r.Preview != nil {
		p, f := previewText(r.Preview)
		v.Preview, v.PreviewFormat = &p, f
	}
	return v
}

// rowOfInfo is the row of a job found by id, in the table of its state.
func rowOfInfo(info *trafikey.JobInfo) jobRowView {
	r := trafikey.JobRow{
		ID: info.ID, Exists: true, State: info.State, Attempts: info.Attempts, MaxAttempts: info.MaxAttempts,
		Priority: info.Priority, Lane: info.Lane, Kind: info.Kind, Parent: info.Parent, Waiting: info.Waiting, AddedAt: info.AddedAt,
		LastError: clip(info.LastError), ErrorSize: len(info.LastError), Progress: clip(info.Progress),
		PayloadSize: len(info.Payload),
	}
	if len(info.Payload) <= protocol.MaxPreviewData {
		r.Preview = []byte(clip(string(info.Payload)))
	}
	return rowView(r)
}

// clip cuts s to previewClip bytes, as a table's page does.
func clip(s string) string {
	if len(s) > previewClip {
		return s[:previewClip]
	}
	return s
}

// oneLine puts a text on one line of a table cell: control characters
// (newlines among them) become spaces. A rune cut by the clip is dropped.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == utf8.RuneError:
			return -1
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
}

// previewText is a payload's start as a table shows it: text when it is
// UTF-8 (its last rune may be cut by the clip), else hex.
func previewText(p []byte) (text, format string) {
	trimmed := p
	// A clip may cut the last rune: up to 3 bytes of it are left over.
	for i := 0; i < 3 && len(trimmed) > 0 && !utf8.Valid(trimmed); i++ {
		trimmed = trimmed[:len(trimmed)-1]
	}
	if utf8.Valid(trimmed) && !strings.ContainsRune(string(trimmed), 0) {
		return oneLine(string(trimmed)), "text"
	}
	return fmt.Sprintf("% x", p), "hex"
}

// jobsReply is GET /api/queues/{queue}/jobs.
type jobsReply struct {
	State string          `json:"state"`
	Queue admin.QueueView `json:"queue"`
	// Total is how many jobs the state's set holds; Next the cursor of
	// the next page, empty on the last.
	Total int          `json:"total"`
	Next  string       `json:"next"`
	Jobs  []jobRowView `json:"jobs"`
	// FoundState, for a search by id, is the state of the job found when
	// it is not the table's; empty when none was found.
	FoundState string `json:"found_state,omitempty"`
	// Lanes, for pending, are the lanes with waiting or active jobs (the
	// first maxLanesShown; LanesCut when more were left out), with their
	// counts: the queue's pending count is the jobs without a lane
	// (NoLane) plus the lanes' waiting jobs. The pending table lists the
	// jobs without a lane, or one lane's (?lane=).
	Lanes    []admin.LaneView `json:"lanes,omitempty"`
	LanesCut bool             `json:"lanes_cut,omitempty"`
	NoLane   *int             `json:"no_lane,omitempty"`
}

func (s *Server) jobs(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error) {
	in := r.URL.Query()
	state := trafikey.JobState(in.Get("state"))
	o := trafikey.JobsOptions{Lane: in.Get("lane"), Newest: in.Get("newest") == "1", After: in.Get("after"), Clip: previewClip, Limit: 25}
	if c := in.Get("count"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 || n > maxJobsPage {
			return nil, fmt.Errorf("count %q outside 1..%d: %w", c, maxJobsPage, trafikey.ErrInvalid)
		}
		o.Limit = n
	}
	reply := jobsReply{State: string(state), Jobs: []jobRowView{}}
	if id := in.Get("id"); id != "" {
		// A search: the job, when it is in this state.
		info, err := q.Inspect(ctx, id)
		switch {
		case errors.Is(err, trafikey.ErrNotFound):
		case err != nil:
			return nil, err
		case info.State == state:
			reply.Jobs = append(reply.Jobs, rowOfInfo(info))
		default:
			reply.FoundState = string(info.State)
		}
	} else {
		var page trafikey.JobsPage
		var err error
		if kind := in.Get("kind"); kind != "" {
			var kp admin.KindPage
			kp, err = admin.JobsOfKind(ctx, q, state, o, kind)
			page = kp.JobsPage
		} else {
			page, err = q.Jobs(ctx, state, o)
		}
		if err != nil {
			return nil, err
		}
		reply.Total, reply.Next = page.Total, string(page.Next)
		for _, row := range page.Rows {
			reply.Jobs = append(reply.Jobs, rowView(row))
		}
	}
	st, err := q.Stats(ctx)
	if err != nil {
		return nil, err
	}
	reply.Queue = s.sampler.view(ctx, q.Name(), st)
	if state == trafikey.StatePending && st.Lanes > 0 {
		if reply.Lanes, reply.LanesCut, err = admin.ReadLanes(ctx, q, maxLanesShown); err != nil {
			return nil, err
		}
		if o.Lane == "" && in.Get("id") == "" {
			n := reply.Total
			reply.NoLane = &n
		}
	}
	if in.Get("id") != "" {
		reply.Total = countOfState(reply.Queue, state)
	}
	return reply, nil
}

// countOfState is how many jobs of the queue are in state.
func countOfState(v admin.QueueView, state trafikey.JobState) int {
	switch state {
	case trafikey.StatePending:
		return v.Pending
	case trafikey.StateDelayed:
		return v.Delayed
	case trafikey.StateActive:
		return v.Active
	case trafikey.StateDead:
		return v.Dead
	case trafikey.StateCompleted:
		return v.Retained
	case trafikey.StateWaiting:
		return v.Waiting
	}
	return 0
}

// bulkTimeout bounds a bulk action: each of its calls to the server is
// bounded, and a million dead jobs take a thousand of them.
const bulkTimeout = 5 * time.Minute

// bulkActions are the queue actions that act on many jobs.
var bulkActions = map[string]bool{"requeue-dead": true, "remove-dead": true, "promote-all": true}

// bulkAction is POST /api/queues/{queue}/{requeue-dead,remove-dead,promote-all}.
// A bulk action stopped part way (its time ran out, the page went) keeps
// what it did, and its error says how much that was.
func (s *Server) bulkAction(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error) {
	in := r.URL.Query()
	var f trafikey.DeadFilter
	if v := in.Get("older_than_ms"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("older_than_ms %q is not a count of ms: %w", v, trafikey.ErrInvalid)
		}
		f.OlderThan = time.Duration(n) * time.Millisecond
	}
	f.Lane, f.ErrorContains = in.Get("lane"), in.Get("error")
	var (
		key string
		n   int
		err error
	)
	switch r.PathValue("action") {
	case "requeue-dead":
		key = "requeued"
		n, err = q.Admin().RequeueDead(ctx, f, nil)
	case "remove-dead":
		key = "removed"
		n, err = q.Admin().RemoveDead(ctx, f, nil)
	case "promote-all":
		key = "promoted"
		n, err = q.Admin().PromoteAll(ctx, nil)
	default:
		return nil, errUnknownAction
	}
	if err != nil && n > 0 {
		err = fmt.Errorf("%s %d jobs, then: %w", key, n, err)
	}
	return map[string]any{key: n}, err
}
