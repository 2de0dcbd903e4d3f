package admin

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/trafikey/trafikey"
)

// QueueView is the JSON form of a queue's STATS.
type QueueView struct {
	Name        string `json:"name"`
	Paused      bool   `json:"paused"`
	Pending     int    `json:"pending"`
	Delayed     int    `json:"delayed"`
	Active      int    `json:"active"`
	Dead        int    `json:"dead"`
	Lanes       int    `json:"lanes"`
	LaneWaiting int    `json:"lane_waiting"`
	// RateLimit is the most claims per RateWindowMS; 0 for no limit.
	RateLimit    int   `json:"rate_limit"`
	RateWindowMS int64 `json:"rate_window_ms"`
	// Waiting counts the parents waiting for their children; Retained the
	// completed jobs the retention policy keeps.
	Waiting  int    `json:"waiting"`
	Retained int    `json:"retained"`
	Totals   Totals `json:"totals"`
	// Partitions is how many partitions a partitioned queue has (its
	// counts above are theirs summed); 0 for a queue never partitioned.
	// PartitionList breaks its counts down by partition, Shards by the
	// node serving them (see Slots.Place); the overview leaves both out.
	Partitions    int             `json:"partitions,omitempty"`
	PartitionList []PartitionView `json:"partition_list,omitempty"`
	Shards        []ShardView     `json:"shards,omitempty"`
}

// Totals are a queue's lifetime counters.
type Totals struct {
	Added     int `json:"added"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Retried   int `json:"retried"`
	Dead      int `json:"dead"`
	Recovered int `json:"recovered"`
	Removed   int `json:"removed"`
	Requeued  int `json:"requeued"`
	Cancelled int `json:"cancelled"`
	Trimmed   int `json:"trimmed"`
}

// ViewOfStats is the JSON form of queue name's stats s, with a
// partitioned queue's partitions (their nodes are set by Slots.Place).
func ViewOfStats(name string, s trafikey.Stats) QueueView {
	v := QueueView{
		Name: name, Paused: s.Paused,
		Pending: s.Pending, Delayed: s.Delayed, Active: s.Active, Dead: s.Dead,
		Lanes: s.Lanes, LaneWaiting: s.LaneWaiting,
		RateLimit: s.RateLimit, RateWindowMS: s.RateWindow.Milliseconds(),
		Waiting: s.Waiting, Retained: s.Retained,
		Totals: Totals{
			Added: s.TotalAdded, Completed: s.TotalCompleted, Failed: s.TotalFailed,
			Retried: s.TotalRetried, Dead: s.TotalDead, Recovered: s.TotalRecovered,
			Removed: s.TotalRemoved, Requeued: s.TotalRequeued, Cancelled: s.TotalCancelled,
			Trimmed: s.TotalTrimmed,
		},
	}
	if len(s.Partitions) > 0 {
		v.Partitions, v.PartitionList = len(s.Partitions), viewOfPartitions(s.Partitions)
	}
	return v
}

// LaneView is the JSON form of one lane.
type LaneView struct {
	Name    string `json:"name"`
	Waiting int    `json:"waiting"`
	Active  int    `json:"active"`
	// Cap is the most active at once; 0 for none.
	Cap    int  `json:"cap"`
	Paused bool `json:"paused"`
}

// ViewOfLane is the JSON form of l.
func ViewOfLane(l trafikey.LaneInfo) LaneView {
	return LaneView{Name: l.Name, Waiting: l.Waiting, Active: l.Active, Cap: l.Cap, Paused: l.Paused}
}

// ReadLanes lists up to max lanes of q (0: all) and whether more were left
// out.
func ReadLanes(ctx context.Context, q *trafikey.Queue, max int) ([]LaneView, bool, error) {
	out := []LaneView{}
	for l, err := range q.Lanes(ctx) {
		if err != nil {
			return nil, false, err
		}
		if max > 0 && len(out) == max {
			return out, true, nil
		}
		out = append(out, ViewOfLane(l))
	}
	return out, false, nil
}

// MaxPayloadView bounds the bytes of a payload that PayloadText renders.
const MaxPayloadView = 64 << 10

// Payload formats of JobView.PayloadFormat.
const (
	PayloadJSON   = "json"   // the payload parses as JSON; shown pretty-printed
	PayloadBinary = "binary" // anything else; shown as a hex dump
)

// JobView is the JSON form of what INSPECT reads of a job.
type JobView struct {
	Queue       string    `json:"queue"`
	ID          string    `json:"id"`
	State       string    `json:"state"`
	Attempts    int       `json:"attempts"`
	MaxAttempts int       `json:"max_attempts"`
	Priority    int       `json:"priority"`
	Backoff     string    `json:"backoff"`
	BackoffMS   int64     `json:"backoff_base_ms"`
	AddedAt     time.Time `json:"added_at"`
	LastError   string    `json:"last_error,omitempty"`
	Progress    string    `json:"progress,omitempty"`
	UniqueKey   string    `json:"unique_key,omitempty"`
	Lane        string    `json:"lane,omitempty"`
	// Kind, TimeoutMS and Headers are what it was added with; Cancelled
	// marks a dead job that Cancel ended.
	Kind      string            `json:"kind,omitempty"`
	TimeoutMS int64             `json:"timeout_ms,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Cancelled bool              `json:"cancelled,omitempty"`
	// Parent is its parent in a flow; Waiting, on a parent, its children
	// not finished; ChildFailed the first child that died and fails it.
	Parent      string `json:"parent,omitempty"`
	Waiting     int    `json:"waiting_children,omitempty"`
	ChildFailed string `json:"child_failed,omitempty"`
	// Result is a retained completed job's result (base64 in JSON);
	// ResultFormat and ResultText render it as PayloadText does.
	Result       []byte `json:"result,omitempty"`
	ResultFormat string `json:"result_format,omitempty"`
	ResultText   string `json:"result_text,omitempty"`
	// Schedule is the schedule that enqueued it, ScheduledAt the
	// occurrence's time.
	Schedule    string     `json:"schedule,omitempty"`
	ScheduledAt *time.Time `json:"scheduled_at,omitempty"`
	// Children are a parent's children, when read (Queue.Children).
	Children []ChildView `json:"children,omitempty"`
	Logs     []string    `json:"logs"`
	// Payload is the job's bytes (base64 in JSON).
	Payload []byte `json:"payload"`
	// PayloadSize is len(Payload).
	PayloadSize int `json:"payload_size"`
	// PayloadFormat is PayloadJSON or PayloadBinary; PayloadText the
	// payload pretty-printed or hex-dumped, of at most MaxPayloadView
	// bytes of it (PayloadCut when there were more).
	PayloadFormat string `json:"payload_format"`
	PayloadText   string `json:"payload_text"`
	PayloadCut    bool   `json:"payload_cut,omitempty"`
}

// ChildView is one child of a parent, as Queue.Children reads it.
type ChildView struct {
	ID    string `json:"id"`
	State string `json:"state,omitempty"`
	// Result is its result when it completed with one (base64 in JSON),
	// ResultText that result as PayloadText renders it.
	Result     []byte `json:"result,omitempty"`
	ResultText string `json:"result_text,omitempty"`
	Err        string `json:"error,omitempty"`
	// Completed reports that it completed with a result recorded.
	Completed bool `json:"completed,omitempty"`
}

// ViewOfChildren is the JSON form of a parent's children.
func ViewOfChildren(children []trafikey.ChildResult) []ChildView {
	out := make([]ChildView, len(children))
	for i, c := range children {
		out[i] = ChildView{ID: c.ID, State: string(c.State), Result: c.Result, Err: c.Err, Completed: c.Completed}
		if c.Result != nil {
			_, out[i].ResultText, _ = PayloadText(c.Result)
		}
	}
	return out
}

// ViewOfJob is the JSON form of job info of queue.
func ViewOfJob(queue string, info *trafikey.JobInfo) JobView {
	v := JobView{
		Queue: queue, ID: info.ID, State: string(info.State),
		Attempts: info.Attempts, MaxAttempts: info.MaxAttempts, Priority: info.Priority,
		Backoff: string(info.Backoff), BackoffMS: info.BackoffBase.Milliseconds(),
		AddedAt: info.AddedAt.UTC(), LastError: info.LastError, Progress: info.Progress,
		UniqueKey: info.UniqueKey, Lane: info.Lane, Logs: info.Logs,
		Kind: info.Kind, TimeoutMS: info.Timeout.Milliseconds(), Headers: info.Headers, Cancelled: info.Cancelled,
		Parent: info.Parent, Waiting: info.Waiting, ChildFailed: info.ChildFailed, Result: info.Result,
		Payload: info.Payload, PayloadSize: len(info.Payload),
	}
	if info.Schedule != "" {
		v.Schedule = info.Schedule
		at := info.ScheduledAt.UTC()
		v.ScheduledAt = &at
	}
	if v.Logs == nil {
		v.Logs = []string{}
	}
	if v.Payload == nil {
		v.Payload = []byte{}
	}
	v.PayloadFormat, v.PayloadText, v.PayloadCut = PayloadText(info.Payload)
	if info.Result != nil {
		v.ResultFormat, v.ResultText, _ = PayloadText(info.Result)
	}
	return v
}

// PayloadText renders a payload for a person: pretty-printed JSON when the
// whole payload parses as JSON and is at most MaxPayloadView bytes, else a
// hex dump (offsets, bytes, and their printable ASCII) of its first
// MaxPayloadView bytes. The text is plain: a page shows it escaped.
func PayloadText(p []byte) (format, text string, cut bool) {
	if len(p) <= MaxPayloadView && json.Valid(p) {
		var b bytes.Buffer
		if err := json.Indent(&b, p, "", "  "); err == nil {
			return PayloadJSON, b.String(), false
		}
	}
	if len(p) > MaxPayloadView {
		p, cut = p[:MaxPayloadView], true
	}
	return PayloadBinary, hex.Dump(p), cut
}
