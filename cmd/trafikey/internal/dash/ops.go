package dash

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
)

// The operator's pages beyond the jobs: a queue's lanes (pause, resume,
// cap), its schedules (list with their next occurrences, pause, resume,
// remove), and deleting the queue.

// lane is GET /api/queues/{queue}/lanes/{lane}: one lane, listed or not
// (Queue.Lanes lists only the lanes with jobs; a paused lane without jobs
// is found by name).
func (s *Server) lane(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error) {
	info, err := q.Lane(r.PathValue("lane")).Info(ctx)
	if err != nil {
		return nil, err
	}
	return admin.ViewOfLane(info), nil
}

// laneAction is POST /api/queues/{queue}/lanes/{lane}/{pause,resume,cap};
// cap takes ?cap=N, 0 to remove it. It answers with the lane as it is
// after.
func (s *Server) laneAction(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error) {
	l := q.Lane(r.PathValue("lane"))
	var err error
	switch r.PathValue("action") {
	case "pause":
		err = l.Pause(ctx)
	case "resume":
		err = l.Resume(ctx)
	case "cap":
		v := r.URL.Query().Get("cap")
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 0 {
			return nil, fmt.Errorf("cap %q is not a count (0 removes the cap): %w", v, trafikey.ErrInvalid)
		}
		err = l.SetCap(ctx, n)
	default:
		return nil, errUnknownAction
	}
	if err != nil {
		return nil, err
	}
	info, err := l.Info(ctx)
	if err != nil {
		return nil, err
	}
	return admin.ViewOfLane(info), nil
}

// deleteQueue is POST /api/queues/{queue}/delete?confirm={queue}: the
// queue's name again, as the operator typed it, or nothing is deleted.
func (s *Server) deleteQueue(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error) {
	if got := r.URL.Query().Get("confirm"); got != q.Name() {
		return nil, fmt.Errorf("deleting queue %s asks for its name as confirm=, got %q: %w", strconv.Quote(q.Name()), got, trafikey.ErrInvalid)
	}
	keys, err := q.Admin().DeleteQueue(ctx)
	// Gone from the overview at once, not at the next discovery.
	s.sampler.rediscover()
	return map[string]any{"deleted": q.Name(), "keys": keys}, err
}

// maxSchedulesShown bounds the schedules page.
const maxSchedulesShown = 500

// nextRunsShown is how many next occurrences the schedules page shows.
const nextRunsShown = 5

// scheduleRow is one schedule of GET /api/queues/{queue}/schedules.
type scheduleRow struct {
	ID       string `json:"id"`
	Cron     string `json:"cron,omitempty"`
	TimeZone string `json:"time_zone,omitempty"`
	EveryMS  int64  `json:"every_ms,omitempty"`
	JitterMS int64  `json:"jitter_ms,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	Count    int    `json:"count"`
	Paused   bool   `json:"paused"`
	// Finished: past its end, or its limit reached.
	Finished bool       `json:"finished"`
	Last     *time.Time `json:"last,omitempty"`
	// Due is when the server has the schedule's next step due (zero
	// when paused or finished); at or before now, the next worker's
	// schedule step takes what is due.
	Due *time.Time `json:"due,omitempty"`
	// Next are its next occurrences after now, computed from its
	// definition as the schedule step does: none when paused or
	// finished. A job's jitter comes on top.
	Next []time.Time `json:"next"`
	// NextError says why they could not be computed.
	NextError string `json:"next_error,omitempty"`
}

type schedulesReply struct {
	Schedules []scheduleRow `json:"schedules"`
	// Cut reports schedules left out past maxSchedulesShown.
	Cut bool `json:"cut"`
}

func (s *Server) schedules(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error) {
	reply := schedulesReply{Schedules: []scheduleRow{}}
	for info, err := range q.Schedules().List(ctx) {
		if err != nil {
			return nil, err
		}
		if len(reply.Schedules) == maxSchedulesShown {
			reply.Cut = true
			break
		}
		reply.Schedules = append(reply.Schedules, scheduleRowOf(info, nextRunsShown))
	}
	return reply, nil
}

func scheduleRowOf(info trafikey.ScheduleInfo, n int) scheduleRow {
	row := scheduleRow{
		ID: info.ID, Cron: info.Cron, TimeZone: info.TimeZone, EveryMS: info.Every.Milliseconds(),
		JitterMS: info.Jitter.Milliseconds(), Limit: info.Limit, Count: info.Count, Paused: info.Paused,
		Finished: !info.Paused && info.Next.IsZero(), Last: timeOrNil(info.Last), Due: timeOrNil(info.Next), Next: []time.Time{},
	}
	next, err := admin.NextOccurrences(info, time.Now(), n)
	if err != nil {
		row.NextError = err.Error()
	}
	for _, t := range next {
		row.Next = append(row.Next, t.UTC())
	}
	return row
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// scheduleAction is POST /api/queues/{queue}/schedules/{id}/{pause,resume,remove}.
func (s *Server) scheduleAction(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error) {
	id, sc := r.PathValue("id"), q.Schedules()
	switch r.PathValue("action") {
	case "pause":
		return map[string]any{"paused": id}, sc.Pause(ctx, id)
	case "resume":
		return map[string]any{"resumed": id}, sc.Resume(ctx, id)
	case "remove":
		return map[string]any{"removed": id}, sc.Remove(ctx, id)
	}
	return nil, errUnknownAction
}
