package trafikey

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// ChildPolicy is what a child's death does to its parent in a flow.
type ChildPolicy string

// Child policies.
const (
	// ChildFailsParent: once every child has finished, the parent dies
	// with "child <id> failed" instead of running (the default).
	ChildFailsParent ChildPolicy = protocol.OnFailFail
	// ChildIgnored: the parent runs as if the child had completed, and
	// nothing of the failure is kept.
	ChildIgnored ChildPolicy = protocol.OnFailIgnore
	// ChildRecorded: the parent runs, and Queue.Children gives it the
	// child's error.
	ChildRecorded ChildPolicy = protocol.OnFailContinue
)

// FlowIDs are the ids a flow's jobs were given, in the shape of the flow.
type FlowIDs struct {
	ID       string
	Children []FlowIDs
}

// AddFlow adds a tree of jobs in one call, all of them or none: every job
// with children waits until each of them has finished (completed, died or
// been removed), then runs, its handler reading their results with
// Queue.Children. A flow holds at most MaxBatch jobs, at most 15 levels
// deep, with at most 256 MiB of payloads in all, all in this queue. The tree
// is validated before any I/O.
func (q *Queue) AddFlow(ctx context.Context, root JobSpec) (FlowIDs, error) {
	if p := q.parts.Load(); p != nil {
		// a flow lives in one partition: its root's
		return p.route(&root.Options).AddFlow(ctx, root)
	}
	var flat []string
	var build func(j *JobSpec, parent, depth int, path string) error
	build = func(j *JobSpec, parent, depth int, path string) error {
		n := len(flat) / jobArgs
		if n >= MaxBatch {
			return invalid("add flow", "more than %d jobs", MaxBatch)
		}
		if depth > protocol.MaxFlowDepth {
			return invalid("add flow", "job %s is deeper than %d levels", path, protocol.MaxFlowDepth)
		}
		o := j.Options.resolve()
		if len(j.Children) > 0 && o.delay != 0 {
			return invalid("add flow", "job %s has children and a delay", path)
		}
		var err error
		if flat, err = o.args("add flow job "+path, flat, j.Payload); err != nil {
			return err
		}
		if parent > 0 {
			flat[n*jobArgs+colParent] = strconv.Itoa(parent)
			switch j.OnFail {
			case "", ChildFailsParent:
			case ChildIgnored, ChildRecorded:
				flat[n*jobArgs+colOnFail] = string(j.OnFail)
			default:
				return invalid("add flow", "job %s: child policy %s", path, echo(string(j.OnFail)))
			}
		}
		for i := range j.Children {
			if err := build(&j.Children[i], n+1, depth+1, path+"."+strconv.Itoa(i)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := build(&root, 0, 1, "0"); err != nil {
		return FlowIDs{}, err
	}
	if size := flowPayload(&root); size > maxCallPayload {
		return FlowIDs{}, invalid("add flow", "payloads of %d bytes in all, at most %d in one flow", size, maxCallPayload)
	}
	msg, err := q.call(ctx, protocol.Add, addCall(flat)...)
	if err != nil && !errors.Is(err, ErrNotDurable) {
		return FlowIDs{}, err
	}
	ids, rerr := msg.AsStrSlice()
	if rerr != nil || len(ids) != len(flat)/jobArgs {
		return FlowIDs{}, fmt.Errorf("trafikey: add flow: unexpected reply %v", msg)
	}
	q.observer.jobsAdded(q.name, flat)
	// the ids come in the order the tree was walked: depth first
	next := 0
	var shape func(j *JobSpec) FlowIDs
	shape = func(j *JobSpec) FlowIDs {
		out := FlowIDs{ID: q.outID(ids[next])}
		next++
		for i := range j.Children {
			out.Children = append(out.Children, shape(&j.Children[i]))
		}
		return out
	}
	return shape(&root), err
}

// ChildResult is what a parent reads of one of its children.
type ChildResult struct {
	ID string
	// State is the child's state now; empty when its row is gone
	// (completed and not retained, or removed).
	State JobState
	// Result is the result its completion carried, when not empty.
	Result []byte
	// Err is its error when it died with policy ChildRecorded.
	Err string
	// Completed reports whether it completed with a result recorded.
	Completed bool
}

// childrenPage is how many children one CHILDREN call reads.
const childrenPage = 100

// Children reads the children of job id in id order, with their results and
// the errors recorded for them, a page of 100 per call.
func (q *Queue) Children(ctx context.Context, id string) ([]ChildResult, error) {
	if q.parts.Load() != nil {
		p, err := q.partOf("children", id)
		if err != nil {
			return nil, err
		}
		return p.Children(ctx, id)
	}
	raw, err := q.rawID("children", id)
	if err != nil {
		return nil, err
	}
	var out []ChildResult
	after := "0"
	for {
		msg, err := q.call(ctx, protocol.Children, raw, after, strconv.Itoa(childrenPage))
		if err != nil {
			return out, err
		}
		rows, err := msg.ToArray()
		if err != nil {
			return out, fmt.Errorf("trafikey: children: unexpected reply %v", msg)
		}
		for _, r := range rows {
			f, err := r.ToArray()
			if err != nil || len(f) != 4 {
				return out, fmt.Errorf("trafikey: children: unexpected reply %v", msg)
			}
			var c ChildResult
			if c.ID, err = f[0].ToString(); err != nil {
				return out, fmt.Errorf("trafikey: children: unexpected reply %v", msg)
			}
			after = c.ID
			c.ID = q.outID(c.ID)
			if s, err := f[1].ToString(); err == nil {
				c.State = JobState(s)
			}
			if s, err := f[2].ToString(); err == nil {
				c.Result, c.Completed = []byte(s), true
			}
			if s, err := f[3].ToString(); err == nil {
				c.Err = s
			}
			out = append(out, c)
		}
		if len(rows) < childrenPage {
			return out, nil
		}
	}
}

// defaultWaitTTL is how long AddAndWait keeps a job's outcome when ctx has
// no deadline.
const defaultWaitTTL = time.Hour

// AddAndWait adds a job and waits until it completes, returning its result,
// or dies (an error matching ErrJobDead), or is removed (ErrNotFound), or
// ctx ends. Waiting blocks in the server on the job's outcome list, without
// polling. The outcome is kept until ctx's deadline (defaultWaitTTL without
// one, at most 24 h), so a caller that reconnects can Wait again.
func (q *Queue) AddAndWait(ctx context.Context, payload []byte, opts *JobOptions) ([]byte, error) {
	ttl := defaultWaitTTL
	if d, ok := ctx.Deadline(); ok {
		ttl = min(max(time.Until(d), time.Millisecond), time.Duration(protocol.MaxWaitMS)*time.Millisecond)
	}
	var o JobOptions
	if opts != nil {
		o = *opts
	}
	o.KeepOutcome = ttl
	id, err := q.Add(ctx, payload, &o)
	if err != nil {
		return nil, err
	}
	return q.Wait(ctx, id)
}

// waitStep bounds one blocking wait, so that ctx is looked at again.
const waitStep = time.Second

// Wait waits for the outcome of job id, added with KeepOutcome (or by
// AddAndWait): its result when it completed, an error matching ErrJobDead
// when it died, ErrNotFound when it was removed. It returns at once when the
// job already finished and its outcome is still kept; a job added without
// KeepOutcome never has one, and Wait runs until ctx ends.
func (q *Queue) Wait(ctx context.Context, id string) ([]byte, error) {
	if q.parts.Load() != nil {
		p, err := q.partOf("wait", id)
		if err != nil {
			return nil, err
		}
		return p.Wait(ctx, id)
	}
	raw, err := q.rawID("wait", id)
	if err != nil {
		return nil, err
	}
	key := q.keys.Done(raw)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		step := waitStep
		if d, ok := ctx.Deadline(); ok {
			step = min(step, max(time.Until(d), time.Millisecond))
		}
		// BLMOVE onto the same list leaves the outcome for other waiters.
		cmd := q.client.B().Blmove().Source(key).Destination(key).Left().Right().Timeout(step.Seconds()).Build()
		out, err := q.client.Do(ctx, cmd).ToString()
		switch {
		case valkey.IsValkeyNil(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("trafikey: wait for job %s: %w", id, err)
		case out == "":
			return nil, fmt.Errorf("trafikey: wait for job %s: empty outcome", id)
		}
		switch out[0] {
		case 'c':
			return []byte(out[1:]), nil
		case 'd':
			return nil, jobDead(id, out[1:])
		case 'r':
			return nil, fmt.Errorf("trafikey: wait for job %s: removed before it finished: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("trafikey: wait for job %s: unknown outcome %q", id, out[:1])
	}
}

// RetentionPolicy is how long and how many finished jobs a queue keeps.
// Zero values mean: completed jobs are deleted at once (as without a
// policy), dead jobs are kept without an age bound, at most
// 100,000 of them.
type RetentionPolicy struct {
	// KeepCompleted keeps completed jobs, with their results, for this
	// long; KeepCompletedMax keeps at most this many (the oldest go
	// first). Either set retains the jobs added from then on.
	KeepCompleted    time.Duration
	KeepCompletedMax int
	// KeepDead bounds how long dead jobs are kept (0: no bound);
	// KeepDeadMax how many (0: 100,000; -1: no bound).
	KeepDead    time.Duration
	KeepDeadMax int
	// ResultMax bounds a result in bytes (0: 256 KiB; at most
	// 1 MiB).
	ResultMax int
}

// Retention defaults.
const (
	defaultKeepDead  = protocol.DefaultKeepDead
	defaultResultMax = protocol.DefaultResult
)

// SetRetention sets the queue's retention policy. Workers trim what it no
// longer keeps, in bounded steps on their maintenance timer (or Admin.Maintain).
func (a Admin) SetRetention(ctx context.Context, p RetentionPolicy) error {
	q := a.q
	if q.parts.Load() != nil {
		return q.eachPart(func(_ int, part *Queue) error { return part.Admin().SetRetention(ctx, p) })
	}
	done, dead := ceilMS(p.KeepCompleted), ceilMS(p.KeepDead)
	switch {
	case p.KeepCompleted < 0 || done > protocol.MaxDelayMS:
		return invalid("set retention", "keep completed %v outside 0..%dms", p.KeepCompleted, int64(protocol.MaxDelayMS))
	case p.KeepDead < 0 || dead > protocol.MaxDelayMS:
		return invalid("set retention", "keep dead %v outside 0..%dms", p.KeepDead, int64(protocol.MaxDelayMS))
	case p.KeepCompletedMax < 0 || p.KeepCompletedMax > protocol.MaxKeepCount:
		return invalid("set retention", "keep completed max %d outside 0..%d", p.KeepCompletedMax, protocol.MaxKeepCount)
	case p.KeepDeadMax < -1 || p.KeepDeadMax > protocol.MaxKeepCount:
		return invalid("set retention", "keep dead max %d outside 0..%d (or -1)", p.KeepDeadMax, protocol.MaxKeepCount)
	case p.ResultMax < 0 || p.ResultMax > protocol.MaxResult:
		return invalid("set retention", "result max %d outside 0..%d", p.ResultMax, protocol.MaxResult)
	}
	deadMax := p.KeepDeadMax
	switch deadMax {
	case 0:
		deadMax = defaultKeepDead
	case -1: // no bound
		deadMax = 0 // the protocol's "no bound"
	}
	_, err := q.callInt(ctx, protocol.Retain, protocol.FormatInt(done), strconv.Itoa(p.KeepCompletedMax),
		protocol.FormatInt(dead), strconv.Itoa(deadMax), strconv.Itoa(p.ResultMax))
	return err
}

// trim deletes up to limit finished jobs that the retention policy no
// longer keeps, and returns how many completed and dead jobs it deleted.
func (q *Queue) trim(ctx context.Context, limit int) (completed, dead int, err error) {
	if limit < 1 || limit > protocol.MaxCount {
		return 0, 0, invalid("trim", "limit %d outside 1..%d", limit, protocol.MaxCount)
	}
	msg, err := q.call(ctx, protocol.Trim, strconv.Itoa(limit))
	if err != nil {
		return 0, 0, err
	}
	n, err := msg.AsIntSlice()
	if err != nil || len(n) != 2 {
		return 0, 0, fmt.Errorf("trafikey: trim: unexpected reply %v", msg)
	}
	return int(n[0]), int(n[1]), nil
}

// flowPayload is the bytes of the payloads of j and its descendants.
func flowPayload(j *JobSpec) int {
	n := len(j.Payload)
	for i := range j.Children {
		n += flowPayload(&j.Children[i])
	}
	return n
}
