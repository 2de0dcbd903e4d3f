package trafikey

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Pause stops claims on the queue: Claim returns no jobs until Resume.
// Adding, completing and failing go on. Pausing a paused queue is a no-op.
func (a Admin) Pause(ctx context.Context) error {
	q := a.q
	if q.parts.Load() != nil {
		return q.eachPart(func(_ int, p *Queue) error { return p.Admin().Pause(ctx) })
	}
	_, err := q.callInt(ctx, protocol.Pause)
	return err
}

// Resume lets workers claim again and wakes idle ones when jobs are
// pending. Resuming a running queue is a no-op.
func (a Admin) Resume(ctx context.Context) error {
	q := a.q
	if q.parts.Load() != nil {
		return q.eachPart(func(_ int, p *Queue) error { return p.Admin().Resume(ctx) })
	}
	_, err := q.callInt(ctx, protocol.Resume)
	return err
}

// Remove deletes a pending, delayed, dead or retained completed job with its
// logs and releases its unique key; a parent waiting for it is told, as if
// it had finished. A parent still waiting for children is removed with
// every descendant (at most 1000 jobs in all), all or none. A claimed job,
// or one among the descendants, refuses the removal with ErrState; a job
// that does not exist is ErrNotFound.
func (a Admin) Remove(ctx context.Context, id string) error {
	q, err := a.q.partOf("remove", id)
	if err != nil {
		return err
	}
	return q.byID(ctx, protocol.Remove, id, "1")
}

// Requeue moves a dead job back to pending with a fresh set of attempts
// (its attempt counter keeps counting, so old tokens stay stale). A job
// that is not dead is refused with ErrState.
func (a Admin) Requeue(ctx context.Context, id string) error {
	q, err := a.q.partOf("requeue", id)
	if err != nil {
		return err
	}
	return q.byID(ctx, protocol.Requeue, id)
}

func (q *Queue) byID(ctx context.Context, v *protocol.Verb, id string, more ...string) error {
	raw, err := q.rawID(v.Name, id)
	if err != nil {
		return err
	}
	n, err := q.callInt(ctx, v, append([]string{raw}, more...)...)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("trafikey: %s job %s: %w", v.Name, id, ErrNotFound)
	}
	return nil
}

// Maintenance counts what one Maintain step did.
type Maintenance struct {
	// Promoted counts the delayed jobs whose time had come, now pending.
	Promoted int
	// Recovered counts the expired leases whose jobs went back to pending;
	// Expired those whose jobs had no attempt left and were dead-lettered
	// with the error "lease expired".
	Recovered, Expired int
	// TrimmedCompleted and TrimmedDead count the finished jobs deleted
	// because the retention policy no longer keeps them.
	TrimmedCompleted, TrimmedDead int
	// Scheduled counts the jobs the queue's schedules enqueued.
	Scheduled int
}

// Maintain runs once the upkeep that Workers run on their timers: it
// promotes up to limit (1..1000) delayed jobs whose time has come, takes up
// to limit claimed jobs whose lease has expired back from their workers
// (those with attempts left go back to pending, the others are
// dead-lettered), deletes up to limit finished jobs the retention policy no
// longer keeps, and runs the schedule step (each schedule's due occurrences
// enqueued exactly once, however many callers run it at the same time). A
// queue served by Workers needs no call of it; call it to drive a queue from
// a loop of your own over Claim, or to do at once what the workers would do
// on their next tick. Each part runs even when one before it failed; the
// error joins their errors.
func (a Admin) Maintain(ctx context.Context, limit int) (Maintenance, error) {
	q := a.q
	var m Maintenance
	if limit < 1 || limit > protocol.MaxCount {
		return m, invalid("maintain", "limit %d outside 1..%d", limit, protocol.MaxCount)
	}
	if q.parts.Load() != nil {
		return q.maintainParts(ctx, limit)
	}
	var errs [4]error
	m.Promoted, errs[0] = q.promote(ctx, limit)
	m.Recovered, m.Expired, errs[1] = q.recover(ctx, limit, q.call)
	m.TrimmedCompleted, m.TrimmedDead, errs[2] = q.trim(ctx, limit)
	m.Scheduled, errs[3] = q.runSchedules(ctx)
	return m, errors.Join(errs[:]...)
}

// promote moves up to limit delayed jobs whose time has come to pending.
func (q *Queue) promote(ctx context.Context, limit int) (int, error) {
	if limit < 1 || limit > protocol.MaxCount {
		return 0, invalid("promote", "limit %d outside 1..%d", limit, protocol.MaxCount)
	}
	n, err := q.callInt(ctx, protocol.Promote, protocol.FormatInt(int64(limit)))
	return int(n), err
}

// recover takes up to limit claimed jobs whose lease has expired back from
// their workers, through call: Queue.call, or Queue.callOnce for a worker,
// whose RECOVER may run only right after it renewed its own leases.
func (q *Queue) recover(ctx context.Context, limit int, call func(context.Context, *protocol.Verb, ...string) (valkey.ValkeyMessage, error)) (requeued, dead int, err error) {
	if limit < 1 || limit > protocol.MaxCount {
		return 0, 0, invalid("recover", "limit %d outside 1..%d", limit, protocol.MaxCount)
	}
	msg, err := call(ctx, protocol.Recover, protocol.FormatInt(int64(limit)))
	if err != nil {
		return 0, 0, err
	}
	n, err := msg.AsIntSlice()
	if err != nil || len(n) != 2 {
		return 0, 0, fmt.Errorf("trafikey: recover: unexpected reply %v", msg)
	}
	q.observer.leasesRecovered(q.name, int(n[0]), int(n[1]))
	return int(n[0]), int(n[1]), nil
}

// Stats is a snapshot of a queue: how many jobs are in each state now, and
// the lifetime counters since the queue was created.
type Stats struct {
	// Jobs by state. Pending counts every ready job, in a lane or not
	// (LaneWaiting of them in lanes); Active every claimed one.
	Pending, Delayed, Active, Dead int
	// Paused reports whether claims are paused.
	Paused bool
	// Lanes counts the lanes with waiting or active jobs (Queue.Lanes lists
	// them); LaneWaiting the jobs waiting in them.
	Lanes, LaneWaiting int
	// RateLimit is the most jobs claimed per RateWindow (SetRate); 0 when
	// the queue has no rate limit.
	RateLimit  int
	RateWindow time.Duration
	// Waiting counts the parents waiting for their children (AddFlow);
	// Retained the completed jobs kept by the retention policy.
	Waiting, Retained int

	// Lifetime counters.
	TotalAdded     int // jobs added
	TotalCompleted int // jobs completed
	TotalFailed    int // failed attempts (retried or dead-lettered)
	TotalRetried   int // failed attempts scheduled to run again
	TotalDead      int // jobs dead-lettered, by failure or lease expiry
	TotalRecovered int // expired leases put back to pending
	TotalRemoved   int // jobs removed
	TotalRequeued  int // dead jobs requeued
	TotalTrimmed   int // dead jobs deleted by the retention policy
	TotalCancelled int // jobs ended by Cancel (they are among the dead ones)

	// Partitions breaks a partitioned queue's counts down (QueueOptions.Partitions):
	// each partition's, in partition order; nil for a queue of one. The
	// counts above are their sums (RateLimit too: the partitions share the
	// queue's limit), and Paused is whether every partition is paused.
	Partitions []Stats
	// Partition is, in an entry of Partitions, the partition's hash tag:
	// its keys are emq:{<Partition>}:..., in that tag's cluster slot.
	Partition string
}

// Stats reads the queue's counts and counters in one call.
func (q *Queue) Stats(ctx context.Context) (Stats, error) {
	if q.parts.Load() != nil {
		return q.statsParts(ctx)
	}
	var s Stats
	msg, err := q.call(ctx, protocol.Stats)
	if err != nil {
		return s, err
	}
	pairs, err := msg.ToArray()
	if err != nil || len(pairs)%2 != 0 {
		return s, fmt.Errorf("trafikey: stats: unexpected reply %v", msg)
	}
	fields := map[string]*int{
		"pending": &s.Pending, "delayed": &s.Delayed, "active": &s.Active, "dead": &s.Dead,
	}
	totals := []*int{
		&s.TotalAdded, &s.TotalCompleted, &s.TotalFailed, &s.TotalRetried,
		&s.TotalDead, &s.TotalRecovered, &s.TotalRemoved, &s.TotalRequeued, &s.TotalTrimmed,
		&s.TotalCancelled,
	}
	for i, name := range protocol.StatsCounters {
		fields["total_"+name] = totals[i]
	}
	var paused, window int
	fields["paused"] = &paused
	fields["lanes"], fields["lane_waiting"] = &s.Lanes, &s.LaneWaiting
	fields["rate_max"], fields["rate_window"] = &s.RateLimit, &window
	fields["waiting"], fields["retained"] = &s.Waiting, &s.Retained
	for i := 0; i < len(pairs); i += 2 {
		name, err := pairs[i].ToString()
		if err != nil {
			return s, fmt.Errorf("trafikey: stats: unexpected reply %v", msg)
		}
		dst, ok := fields[name]
		if !ok {
			continue // a field of a later release
		}
		n, err := pairs[i+1].AsInt64()
		if err != nil {
			return s, fmt.Errorf("trafikey: stats: field %s: %w", name, err)
		}
		*dst = int(n)
	}
	s.Paused = paused == 1
	s.Pending += s.LaneWaiting // STATS counts the pending set apart from the lanes
	s.RateWindow = time.Duration(window) * time.Millisecond
	return s, nil
}

// JobState is where a job is in its life.
type JobState string

// Job states.
const (
	StatePending JobState = protocol.StatePending
	StateDelayed JobState = protocol.StateDelayed
	StateActive  JobState = protocol.StateActive
	StateDead    JobState = protocol.StateDead
	// StateWaiting is a parent waiting for its children (AddFlow).
	StateWaiting JobState = protocol.StateWaiting
	// StateCompleted is a completed job kept by the retention policy.
	StateCompleted JobState = protocol.StateCompleted
)

// JobInfo is what Inspect reads of a job.
type JobInfo struct {
	ID      string
	State   JobState
	Payload []byte
	// Attempts counts the job's claims so far; MaxAttempts is how many it
	// may have.
	Attempts, MaxAttempts int
	Priority              int
	Backoff               BackoffKind
	BackoffBase           time.Duration
	// AddedAt is when the job was added (server clock).
	AddedAt time.Time
	// LastError is the text of the last failure, "lease expired" when its
	// last worker lost the lease; empty before any.
	LastError string
	// Progress is the last value given to Job.Progress.
	Progress string
	// UniqueKey is the key it was added with by Unique.
	UniqueKey string
	// Lane is the lane it was added to by Lane; empty for none.
	Lane string
	// Parent is its parent's id in a flow; empty for none. Waiting, on a
	// parent, counts its children not finished yet; ChildFailed is the
	// first child that died and fails it.
	Parent      string
	Waiting     int
	ChildFailed string
	// Result is a retained completed job's result.
	Result []byte
	// Kind, Timeout and Headers are what it was added with (Kind, Timeout,
	// Headers); empty, 0 and nil for none.
	Kind    string
	Timeout time.Duration
	Headers map[string]string
	// Cancelled reports a dead job that Cancel ended.
	Cancelled bool
	// Schedule is the schedule that enqueued the job, ScheduledAt the
	// occurrence's time (server clock): the pair is the occurrence's
	// dedupe key. Empty and zero for a job added otherwise.
	Schedule    string
	ScheduledAt time.Time
	// Logs are the lines given to Job.Log, oldest first.
	Logs []string
}

// Inspect reads a job. A job that does not exist (completed, removed or
// never added) is ErrNotFound.
func (q *Queue) Inspect(ctx context.Context, id string) (*JobInfo, error) {
	if q.parts.Load() != nil {
		p, err := q.partOf("inspect", id)
		if err != nil {
			return nil, err
		}
		return p.Inspect(ctx, id)
	}
	raw, err := q.rawID("inspect", id)
	if err != nil {
		return nil, err
	}
	msg, err := q.call(ctx, protocol.Inspect, raw)
	if err != nil {
		return nil, err
	}
	if msg.IsNil() {
		return nil, fmt.Errorf("trafikey: inspect job %s: %w", id, ErrNotFound)
	}
	pairs, err := msg.ToArray()
	if err != nil || len(pairs)%2 != 0 {
		return nil, fmt.Errorf("trafikey: inspect: unexpected reply %v", msg)
	}
	info := &JobInfo{ID: id}
	defer func() {
		if info.Parent != "" {
			info.Parent = q.outID(info.Parent)
		}
	}()
	for i := 0; i < len(pairs); i += 2 {
		name, err := pairs[i].ToString()
		if err != nil {
			return nil, fmt.Errorf("trafikey: inspect: unexpected reply %v", msg)
		}
		if err := info.set(name, pairs[i+1]); err != nil {
			return nil, fmt.Errorf("trafikey: inspect: field %s: %w", name, err)
		}
	}
	return info, nil
}

func (info *JobInfo) set(name string, v valkey.ValkeyMessage) error {
	if name == "logs" {
		lines, err := v.AsStrSlice()
		info.Logs = lines
		return err
	}
	s, err := v.ToString()
	if err != nil {
		return err
	}
	switch name {
	case protocol.FieldState:
		info.State = JobState(s)
	case protocol.FieldData:
		info.Payload = []byte(s)
	case protocol.FieldAttempts:
		info.Attempts, err = strconv.Atoi(s)
	case protocol.FieldMax:
		info.MaxAttempts, err = strconv.Atoi(s)
	case protocol.FieldPriority:
		info.Priority, err = strconv.Atoi(s)
	case protocol.FieldBackoff:
		kind, ms, _ := strings.Cut(s, ":")
		info.Backoff = BackoffKind(kind)
		var n int64
		n, err = strconv.ParseInt(ms, 10, 64)
		info.BackoffBase = time.Duration(n) * time.Millisecond
	case protocol.FieldAdded:
		var ms int64
		ms, err = strconv.ParseInt(s, 10, 64)
		info.AddedAt = time.UnixMilli(ms)
	case protocol.FieldError:
		info.LastError = s
	case protocol.FieldProgress:
		info.Progress = s
	case protocol.FieldUnique:
		info.UniqueKey = s
	case protocol.FieldLane:
		info.Lane = s
	case protocol.FieldParent:
		info.Parent = s
	case protocol.FieldDeps:
		info.Waiting, err = strconv.Atoi(s)
	case protocol.FieldChildFail:
		info.ChildFailed = s
	case protocol.FieldResult:
		info.Result = []byte(s)
	case protocol.FieldKind:
		info.Kind = s
	case protocol.FieldTimeout:
		var ms int64
		ms, err = strconv.ParseInt(s, 10, 64)
		info.Timeout = time.Duration(ms) * time.Millisecond
	case protocol.FieldHeaders:
		info.Headers = decodeHeaders(s)
	case protocol.FieldCancelled:
		info.Cancelled = true
	case protocol.FieldSchedule:
		info.Schedule = s
	case protocol.FieldScheduledAt:
		var ms int64
		ms, err = strconv.ParseInt(s, 10, 64)
		info.ScheduledAt = time.UnixMilli(ms)
	}
	return err
}

// deleteStep is how many keys one SCAN step of DeleteQueue asks for and one
// UNLINK deletes at most: each call then holds the server well under a
// millisecond.
const deleteStep = 1000

// DeleteQueue deletes the queue and everything it holds: its jobs in every
// state with their logs and results, its lanes, schedules, settings,
// counters and events, and the circuit breakers and Once sets made on it.
// It deletes the queue's wire stamp first, so that from then on every verb
// on the queue (a worker's claim or completion, a producer's Add) is refused
// with ErrWire and nothing is written while the rest goes, in steps of at
// most 1000 keys (SCAN on each node, then UNLINK). Workers still running on
// it keep being refused until they stop. It returns how many keys it
// deleted; a queue that does not exist deletes nothing. Open stamps the
// name again as a new, empty queue; an Open made while DeleteQueue runs
// does so too, and the steps left then delete what it wrote.
func (a Admin) DeleteQueue(ctx context.Context) (int, error) {
	q := a.q
	if q.client == nil {
		return 0, invalid("delete queue", "the queue has no client")
	}
	if p := q.parts.Load(); p != nil {
		// partition 0 last: its keys hold the partitions hash
		total := 0
		list := p.list()
		for i := len(list) - 1; i >= 0; i-- {
			n, err := list[i].Admin().DeleteQueue(ctx)
			total += n
			if err != nil {
				return total, err
			}
		}
		return total, nil
	}
	c := q.client
	n, err := c.Do(ctx, c.B().Unlink().Key(q.keys.Version).Build()).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("trafikey: delete queue %s: %w", q.name, err)
	}
	deleted := int(n)
	match := globEscape(q.keys.Base) + "*"
	// A cluster's node that holds the queue's slot is not known here: every
	// node is scanned, and UNLINK goes through the client, to the slot's
	// primary. A standalone client's only node is itself.
	for addr, node := range c.Nodes() {
		var cursor uint64
		for {
			e, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(match).Count(deleteStep).Build()).AsScanEntry()
			if err != nil {
				return deleted, fmt.Errorf("trafikey: delete queue %s: scan %s: %w", q.name, addr, err)
			}
			if len(e.Elements) > 0 {
				n, err := c.Do(ctx, c.B().Unlink().Key(e.Elements...).Build()).AsInt64()
				if err != nil {
					return deleted, fmt.Errorf("trafikey: delete queue %s: %w", q.name, err)
				}
				deleted += int(n)
			}
			if cursor = e.Cursor; cursor == 0 {
				break
			}
		}
	}
	return deleted, nil
}

// globEscape quotes the characters a SCAN MATCH pattern reads as a glob.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
