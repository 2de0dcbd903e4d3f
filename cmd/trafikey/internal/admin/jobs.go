package admin

import (
	"time"

	"github.com/trafikey/trafikey"
)

// JobRowView is the JSON form of one row of a job listing (Queue.Jobs).
type JobRowView struct {
	ID string `json:"id"`
	// Exists is false for a member of the state's set whose job is gone.
	Exists bool   `json:"exists"`
	State  string `json:"state,omitempty"`
	// Score is the job's place in its set; At the same as a time, for the
	// states whose score is one (delayed: due, active: lease deadline,
	// dead: time of death, completed: time of completion).
	Score       int64      `json:"score"`
	At          *time.Time `json:"at,omitempty"`
	Attempts    int        `json:"attempts"`
	MaxAttempts int        `json:"max_attempts"`
	Priority    int        `json:"priority"`
	Lane        string     `json:"lane,omitempty"`
	Parent      string     `json:"parent,omitempty"`
	Waiting     int        `json:"waiting_children,omitempty"`
	AddedAt     *time.Time `json:"added_at,omitempty"`
	// LastError and Progress are cut to the listing's clip; ErrorSize is
	// the error's whole length.
	LastError string `json:"last_error,omitempty"`
	ErrorSize int    `json:"error_size,omitempty"`
	Progress  string `json:"progress,omitempty"`
	// PayloadSize is the payload's length; Preview its start (base64 in
	// JSON), absent for a payload over 16 KiB.
	PayloadSize int    `json:"payload_size"`
	Preview     []byte `json:"preview,omitempty"`
	// Kind is the job's kind (JobOptions.Kind), absent for none.
	Kind string `json:"kind,omitempty"`
}

// JobsPageView is the JSON form of one page of a job listing.
type JobsPageView struct {
	Queue string       `json:"queue"`
	State string       `json:"state"`
	Lane  string       `json:"lane,omitempty"`
	Total int          `json:"total"`
	Rows  []JobRowView `json:"rows"`
	// Next continues the listing (Queue.Jobs' After); empty when done.
	Next string `json:"next,omitempty"`
	// Kind, for a listing of one kind's jobs, is that kind, and Examined
	// counts the jobs read to fill the page.
	Kind     string `json:"kind,omitempty"`
	Examined int    `json:"examined,omitempty"`
}

// ViewOfJobRow is the JSON form of r.
func ViewOfJobRow(r trafikey.JobRow) JobRowView {
	v := JobRowView{
		ID: r.ID, Exists: r.Exists, State: string(r.State), Score: r.Score,
		Attempts: r.Attempts, MaxAttempts: r.MaxAttempts, Priority: r.Priority,
		Lane: r.Lane, Parent: r.Parent, Waiting: r.Waiting,
		LastError: r.LastError, ErrorSize: r.ErrorSize, Progress: r.Progress,
		PayloadSize: r.PayloadSize, Preview: r.Preview, Kind: r.Kind,
	}
	if !r.At.IsZero() {
		at := r.At.UTC()
		v.At = &at
	}
	if !r.AddedAt.IsZero() {
		added := r.AddedAt.UTC()
		v.AddedAt = &added
	}
	return v
}

// ViewOfJobsPage is the JSON form of page p of queue's jobs in state (of
// lane, for pending).
func ViewOfJobsPage(queue string, state trafikey.JobState, lane string, p trafikey.JobsPage) JobsPageView {
	v := JobsPageView{Queue: queue, State: string(state), Lane: lane, Total: p.Total, Rows: make([]JobRowView, len(p.Rows)), Next: string(p.Next)}
	for i, r := range p.Rows {
		v.Rows[i] = ViewOfJobRow(r)
	}
	return v
}
