package trafikey

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// A cursor is a place in a listing of jobs (Queue.Jobs) or in a bulk walk
// of the dead jobs: the score and member of the last job a call went
// through, as "<score>:<id>", so a command line can print it and take it
// back. It holds its place whatever changes meanwhile, including the removal
// of that job. The empty cursor is the start.

// parseCursor splits c into its score and member; the empty cursor is two
// empty strings.
func parseCursor(op, c string) (score, member string, err error) {
	if c == "" {
		return "", "", nil
	}
	score, member, ok := strings.Cut(string(c), ":")
	n, perr := strconv.ParseInt(score, 10, 64)
	if !ok || perr != nil || n < 0 || n > protocol.MaxScore || protocol.FormatInt(n) != score {
		return "", "", invalid(op, "cursor %s is not <score>:<member>", echo(string(c)))
	}
	return score, member, nil
}

func cursorOf(score, member valkey.ValkeyMessage) (string, error) {
	if score.IsNil() {
		return "", nil
	}
	n, err := score.AsInt64()
	if err != nil {
		return "", err
	}
	m, err := member.ToString()
	if err != nil {
		return "", err
	}
	return protocol.FormatInt(n) + ":" + m, nil
}

// defaultJobsLimit is how many rows a page of Queue.Jobs holds when
// JobsOptions.Limit is 0.
const defaultJobsLimit = 100

// defaultClip is how many bytes of a job's error, progress and payload a
// row carries when JobsOptions.Clip is 0.
const defaultClip = 256

// JobsOptions shape one page of Queue.Jobs.
type JobsOptions struct {
	// Lane, with StatePending, lists that lane's waiting jobs instead of
	// the jobs without a lane.
	Lane string
	// Newest lists the newest first (the latest death, the farthest due
	// time, the last in claim order) instead of the oldest.
	Newest bool
	// After continues the listing after a previous page's Next, a cursor
	// ("<score>:<id>"): it holds its place whatever changes meanwhile,
	// including the removal of that job.
	After string
	// Limit is the most rows of the page, 1..1000; 0 is 100.
	Limit int
	// Clip is the most bytes of each row's error, progress and payload
	// preview, 1..1024; 0 is 256, and -1 leaves the texts empty and the
	// preview out (rows then carry only their sizes). A payload over 16 KiB
	// has no preview, whatever the clip.
	Clip int
}

// JobRow is one job of a listing: what a table row of it shows, with the
// error and progress texts and a preview of the payload cut to the page's
// clip.
type JobRow struct {
	ID string
	// Exists is false for a set member whose job row is gone; every other
	// field is then zero but Score.
	Exists bool
	State  JobState
	// Score is the job's place in its set: a time in ms for delayed (due),
	// active (lease deadline), dead (time of death) and completed (time of
	// completion); the claim order for pending; the id for waiting.
	Score int64
	// At is Score as a time for the listings whose score is one: delayed,
	// active, dead and completed; zero for pending and waiting.
	At time.Time
	// Attempts counts its claims; MaxAttempts is how many it may have.
	Attempts, MaxAttempts int
	Priority              int
	Lane, Parent          string
	// Waiting, on a parent, counts its children not finished yet.
	Waiting int
	// AddedAt is when the job was added (server clock).
	AddedAt time.Time
	// LastError is the start of the last failure's text, ErrorSize its
	// whole length.
	LastError string
	ErrorSize int
	// Progress is the start of the last progress value.
	Progress string
	// PayloadSize is the payload's length; Preview its start, nil when the
	// payload is over 16 KiB or the page has no clip.
	PayloadSize int
	Preview     []byte
	// Kind is the job's kind (JobOptions.Kind); empty for a job added
	// without one.
	Kind string
}

// JobsPage is one page of Queue.Jobs.
type JobsPage struct {
	// Rows are the page's jobs in listing order.
	Rows []JobRow
	// Total is how many jobs the state's set holds now.
	Total int
	// Next continues after the last row; empty when the listing is done.
	Next string
}

func (o JobsOptions) args(op string, state JobState) ([]string, error) {
	switch state {
	case StatePending, StateDelayed, StateActive, StateDead, StateCompleted, StateWaiting:
	default:
		return nil, invalid(op, "state %s is not one of %s", echo(string(state)), strings.Join(protocol.JobsStates, ", "))
	}
	if o.Lane != "" {
		if state != StatePending {
			return nil, invalid(op, "a lane lists pending jobs only, not %s", state)
		}
		if err := checkLane(op, o.Lane); err != nil {
			return nil, err
		}
	}
	limit := o.Limit
	if limit == 0 {
		limit = defaultJobsLimit
	}
	if limit < 1 || limit > protocol.MaxCount {
		return nil, invalid(op, "limit %d outside 1..%d", o.Limit, protocol.MaxCount)
	}
	clip := o.Clip
	switch {
	case clip == 0:
		clip = defaultClip
	case clip == -1:
		clip = 0
	case clip < 0 || clip > protocol.MaxClip:
		return nil, invalid(op, "clip %d outside 1..%d", o.Clip, protocol.MaxClip)
	}
	score, member, err := parseCursor(op, o.After)
	if err != nil {
		return nil, err
	}
	newest := "0"
	if o.Newest {
		newest = "1"
	}
	return []string{string(state), o.Lane, newest, score, member, strconv.Itoa(limit), strconv.Itoa(clip)}, nil
}

// Jobs reads one page of the jobs in state: pending in claim order (of the
// jobs without a lane, or of Lane's), delayed by due time, active by lease
// deadline, dead by time of death, completed (kept by the retention
// policy) by time of completion, waiting parents by id; the oldest first
// unless Newest. Each call reads at most Limit jobs and never whole large
// payloads. Pass the page's Next as After to read on.
func (q *Queue) Jobs(ctx context.Context, state JobState, opts JobsOptions) (JobsPage, error) {
	if q.parts.Load() != nil {
		return q.jobsParts(ctx, state, opts)
	}
	args, err := opts.args("jobs", state)
	if err != nil {
		return JobsPage{}, err
	}
	msg, err := q.call(ctx, protocol.Jobs, args...)
	if err != nil {
		return JobsPage{}, err
	}
	p, err := parseJobsPage(msg)
	if err != nil {
		return JobsPage{}, fmt.Errorf("trafikey: jobs: unexpected reply %v: %w", msg, err)
	}
	switch state {
	case StateDelayed, StateActive, StateDead, StateCompleted:
		for i := range p.Rows {
			p.Rows[i].At = time.UnixMilli(p.Rows[i].Score)
		}
	}
	return p, nil
}

func parseJobsPage(msg valkey.ValkeyMessage) (JobsPage, error) {
	var p JobsPage
	top, err := msg.ToArray()
	if err != nil || len(top) != 4 {
		return p, fmt.Errorf("want 4 entries")
	}
	total, err := top[0].AsInt64()
	p.Total = int(total)
	if err != nil {
		return p, err
	}
	if p.Next, err = cursorOf(top[1], top[2]); err != nil {
		return p, err
	}
	rows, err := top[3].ToArray()
	if err != nil {
		return p, err
	}
	p.Rows = make([]JobRow, 0, len(rows))
	for _, r := range rows {
		row, err := parseJobRow(r)
		if err != nil {
			return p, err
		}
		p.Rows = append(p.Rows, row)
	}
	return p, nil
}

// parseJobRow reads one JOBS row, its entries named by
// protocol.JobsRowFields.
func parseJobRow(m valkey.ValkeyMessage) (JobRow, error) {
	var r JobRow
	f, err := m.ToArray()
	if err != nil || len(f) != len(protocol.JobsRowFields) {
		return r, fmt.Errorf("a row of %d entries", len(f))
	}
	if r.ID, err = f[0].ToString(); err != nil {
		return r, err
	}
	var n [8]int64
	for i, at := range []int{1, 3, 4, 5, 8, 9, 11, 13} {
		if n[i], err = f[at].AsInt64(); err != nil {
			return r, err
		}
	}
	r.Score, r.Attempts, r.MaxAttempts, r.Priority, r.Waiting = n[0], int(n[1]), int(n[2]), int(n[3]), int(n[4])
	r.ErrorSize, r.PayloadSize = int(n[6]), int(n[7])
	if f[2].IsNil() {
		return r, nil
	}
	r.Exists = true
	if n[5] > 0 {
		r.AddedAt = time.UnixMilli(n[5])
	}
	text := func(m valkey.ValkeyMessage) string {
		s, _ := m.ToString() // null: empty
		return s
	}
	r.State = JobState(text(f[2]))
	r.Lane, r.Parent = text(f[6]), text(f[7])
	r.LastError, r.Progress = text(f[10]), text(f[12])
	if !f[14].IsNil() {
		r.Preview = []byte(text(f[14]))
	}
	r.Kind = text(f[15])
	return r, nil
}

// DeadFilter chooses the dead jobs a bulk operation takes. The zero filter
// takes every job dead when the operation starts.
type DeadFilter struct {
	// DiedAfter and DiedBefore bound the time of death (server clock):
	// at or after DiedAfter, before DiedBefore; zero is no bound.
	DiedAfter, DiedBefore time.Time
	// OlderThan takes the jobs that died at least this long ago, by the
	// server's clock when the operation starts; 0 is no bound.
	OlderThan time.Duration
	// Lane takes the jobs of that lane only; empty is any.
	Lane string
	// ErrorContains takes the jobs whose last error contains it, as bytes;
	// empty is any.
	ErrorContains string
}

// BulkProgress is how far a bulk operation has come, reported after each
// call.
type BulkProgress struct {
	// Done counts the jobs acted on so far; Examined the jobs looked at.
	Done, Examined int
	// Total is how many jobs the set held when the operation started: an
	// upper bound of Examined for a filter over the dead jobs.
	Total int
}

// bulkLimit is how many jobs one call of a bulk operation examines. The
// verbs take up to protocol.MaxCount, but calls of 1000 hold the server for
// several milliseconds each: over a million dead jobs, other clients' PING
// p99 was 53 ms at 1000 per call and 2.5 ms at 100, and the walk ended
// sooner (docs/BENCHMARKS.md, "Operations on a million dead jobs").
const bulkLimit = 100

func (f DeadFilter) check(op string) error {
	if f.OlderThan < 0 {
		return invalid(op, "older than %v is negative", f.OlderThan)
	}
	if !f.DiedAfter.IsZero() && !f.DiedBefore.IsZero() && !f.DiedBefore.After(f.DiedAfter) {
		return invalid(op, "died before %v is not after died after %v", f.DiedBefore, f.DiedAfter)
	}
	if f.Lane != "" {
		if err := checkLane(op, f.Lane); err != nil {
			return err
		}
	}
	if len(f.ErrorContains) > protocol.MaxText {
		return invalid(op, "error text of %d bytes, want at most %d", len(f.ErrorContains), protocol.MaxText)
	}
	return nil
}

// bounds are the filter's times of death as scores, min and max
// inclusive, with now the server's clock: an open walk ends at now, so a
// job that dies again meanwhile is not taken twice.
func (f DeadFilter) bounds(now int64) (lo, hi int64) {
	hi = now
	if f.OlderThan > 0 {
		hi = min(hi, now-f.OlderThan.Milliseconds())
	}
	if !f.DiedBefore.IsZero() {
		hi = min(hi, f.DiedBefore.UnixMilli()-1)
	}
	if !f.DiedAfter.IsZero() {
		lo = max(0, f.DiedAfter.UnixMilli())
	}
	return lo, max(hi, -1)
}

// serverNow reads the server's clock in ms.
func (q *Queue) serverNow(ctx context.Context) (int64, error) {
	t, err := q.client.Do(ctx, q.client.B().Time().Build()).AsStrSlice()
	if err != nil || len(t) != 2 {
		return 0, fmt.Errorf("trafikey: server time: %w", err)
	}
	s, err1 := strconv.ParseInt(t[0], 10, 64)
	us, err2 := strconv.ParseInt(t[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("trafikey: server time: unexpected reply %q", t)
	}
	return s*1000 + us/1000, nil
}

// RequeueDead sends the dead jobs f takes back to pending with a fresh set
// of attempts, as Requeue does one, and returns how many it requeued. It
// walks the dead jobs oldest first, at most 100 per call to the server,
// and calls progress (when not nil) after each call; a job that dies while
// it runs is not taken. Cancelling ctx stops it between calls: the jobs
// requeued so far stay requeued.
func (a Admin) RequeueDead(ctx context.Context, f DeadFilter, progress func(BulkProgress)) (int, error) {
	q := a.q
	if q.parts.Load() != nil {
		return q.sumParts(progress, func(p *Queue, progress func(BulkProgress)) (int, error) {
			return p.Admin().RequeueDead(ctx, f, progress)
		})
	}
	return q.deadWalk(ctx, protocol.RequeueDead, f, progress)
}

// RemoveDead deletes the dead jobs f takes, with their logs, as Remove
// does one, and returns how many it removed; e.g. DeadFilter{OlderThan:
// 7 * 24 * time.Hour} clears the dead jobs of more than a week ago. It
// walks as RequeueDead does.
func (a Admin) RemoveDead(ctx context.Context, f DeadFilter, progress func(BulkProgress)) (int, error) {
	q := a.q
	if q.parts.Load() != nil {
		return q.sumParts(progress, func(p *Queue, progress func(BulkProgress)) (int, error) {
			return p.Admin().RemoveDead(ctx, f, progress)
		})
	}
	return q.deadWalk(ctx, protocol.RemoveDead, f, progress)
}

func (q *Queue) deadWalk(ctx context.Context, v *protocol.Verb, f DeadFilter, progress func(BulkProgress)) (int, error) {
	op := v.Name
	if err := f.check(op); err != nil {
		return 0, err
	}
	now, err := q.serverNow(ctx)
	if err != nil {
		return 0, err
	}
	lo, hi := f.bounds(now)
	if hi < lo {
		return 0, nil
	}
	var p BulkProgress
	if progress != nil {
		s, err := q.Stats(ctx)
		if err != nil {
			return 0, err
		}
		p.Total = s.Dead
	}
	score, member := "", ""
	limit := strconv.Itoa(bulkLimit)
	for {
		if err := ctx.Err(); err != nil {
			return p.Done, err
		}
		msg, err := q.call(ctx, v, limit, score, member, protocol.FormatInt(lo), protocol.FormatInt(hi), f.Lane, f.ErrorContains)
		if err != nil {
			return p.Done, err
		}
		arr, err := msg.ToArray()
		if err != nil || len(arr) != 4 {
			return p.Done, fmt.Errorf("trafikey: %s: unexpected reply %v", op, msg)
		}
		taken, err1 := arr[0].AsInt64()
		examined, err2 := arr[1].AsInt64()
		next, err3 := cursorOf(arr[2], arr[3])
		if err1 != nil || err2 != nil || err3 != nil {
			return p.Done, fmt.Errorf("trafikey: %s: unexpected reply %v", op, msg)
		}
		p.Done += int(taken)
		p.Examined += int(examined)
		if progress != nil {
			progress(p)
		}
		if next == "" {
			return p.Done, nil
		}
		score, member, _ = parseCursor(op, next)
	}
}

// PromoteAll moves every delayed job to pending now, whether its time has
// come or not, and returns how many it moved. It calls the server for at
// most 100 jobs at a time and calls progress (when not nil) after each
// call; it stops once delayed is empty or it has moved as many jobs as
// delayed held at its start (failing jobs keep coming back to delayed).
func (a Admin) PromoteAll(ctx context.Context, progress func(BulkProgress)) (int, error) {
	q := a.q
	if q.parts.Load() != nil {
		return q.sumParts(progress, func(p *Queue, progress func(BulkProgress)) (int, error) {
			return p.Admin().PromoteAll(ctx, progress)
		})
	}
	var p BulkProgress
	limit := strconv.Itoa(bulkLimit)
	for first := true; ; first = false {
		if err := ctx.Err(); err != nil {
			return p.Done, err
		}
		msg, err := q.call(ctx, protocol.PromoteAll, limit)
		if err != nil {
			return p.Done, err
		}
		n, err := msg.AsIntSlice()
		if err != nil || len(n) != 2 {
			return p.Done, fmt.Errorf("trafikey: promoteall: unexpected reply %v", msg)
		}
		if first {
			p.Total = int(n[0] + n[1])
		}
		p.Done += int(n[0])
		p.Examined = p.Done
		if progress != nil {
			progress(p)
		}
		if n[1] == 0 || p.Done >= p.Total {
			return p.Done, nil
		}
	}
}
