package trafikey

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/trafikey/trafikey/internal/groupcommit"
	"github.com/trafikey/trafikey/internal/protocol"
)

// MaxBatch is the most jobs one ADD call carries; AddBatch splits larger
// batches into calls of this size.
const MaxBatch = protocol.MaxCount

// JobSpec is a job to add: its payload and options, and in a flow (AddFlow)
// what its death does to its parent and the jobs it waits for. AddBatch
// takes jobs without children.
type JobSpec struct {
	// Payload is stored and handed to the worker byte for byte.
	Payload []byte
	// Options configure the job as they do for Add.
	Options JobOptions
	// OnFail is what this job's death does to its parent in a flow; the
	// root's is not used. Empty is ChildFailsParent.
	OnFail ChildPolicy
	// Children are the jobs this one waits for, in a flow: a job with
	// children waits, in StateWaiting, until every child has finished,
	// then becomes pending.
	Children []JobSpec
}

// maxPayload bounds a job's payload, and maxCallPayload the payloads of one
// ADD call together: 256 MiB, half of the server's default
// proto-max-bulk-len (512 MB), which refuses a larger argument by closing
// the connection, and a quarter of its client-query-buffer-limit (1 GB),
// which bounds a whole command. A server configured lower refuses less.
const (
	maxPayload     = 256 << 20
	maxCallPayload = maxPayload
)

// Add adds one job and returns its id. The payload is any bytes, at most
// 256 MiB (and at most the server's proto-max-bulk-len, 512 MB unless
// configured otherwise); a larger one is ErrInvalid before any I/O. opts may be
// nil for every default. With a UniqueKey, a key held by another job is
// refused with an ErrDuplicate, whose *Error names the holder (JobID).
//
// Concurrent Add calls of jobs without a unique key are coalesced (see
// QueueOptions.SeparateAdds): a job is sent at once when no earlier Add is on the
// wire, else with the others that wait, in one ADD of up to MaxBatch jobs.
// Each job's options are checked before it joins, so only a refusal of the
// whole call (a fence, writes paused, a transport error) reaches several
// callers, each with the same error. A job with a unique key is always sent
// alone, since its key could refuse the jobs it shares a call with. When
// ctx ends before the job is sent, it is taken out and Add returns
// ctx.Err(); when it ends later, the job may have been added, as with any
// call abandoned in flight.
//
// With a durability (QueueOptions.Durability) that the server does not
// confirm in time, the id comes back with an error matching
// ErrNotDurable: the job was added.
func (q *Queue) Add(ctx context.Context, payload []byte, opts *JobOptions) (string, error) {
	if p := q.parts.Load(); p != nil && opts != nil && (opts.UniqueKey != "" || opts.Lane != "") {
		return p.route(opts).Add(ctx, payload, opts)
	}
	o := opts.resolve()
	// A job with a unique key is sent alone.
	if q.adder == nil || o.unique {
		j := JobSpec{Payload: payload}
		if opts != nil {
			j.Options = *opts
		}
		ids, err := q.AddBatch(ctx, []JobSpec{j})
		if len(ids) == 0 {
			return "", err
		}
		return ids[0], err // err: added, not confirmed durable
	}
	args, err := o.args("add", make([]string, 0, jobArgs), payload)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	deadline, _ := ctx.Deadline()
	p := &pendingAdd{ctx: ctx, args: args, size: len(payload), deadline: deadline, done: make(chan addResult, 1)}
	if opts != nil {
		p.lane = opts.Lane
	}
	q.adder.Push(p)
	select {
	case r := <-p.done:
		return r.id, r.err
	case <-ctx.Done():
	}
	q.adder.Locked(func() { p.gone = true })
	select {
	case r := <-p.done:
		// The call's answer came in as ctx ended: it holds the truth.
		return r.id, r.err
	default:
		return "", ctx.Err()
	}
}

// pendingAdd is an Add waiting for its batch.
type pendingAdd struct {
	ctx      context.Context
	args     []string // the job's ADD argument group
	size     int      // payload bytes
	lane     string   // the job's lane, routed by it if the queue is partitioned meanwhile
	deadline time.Time
	// gone marks a caller that left before its job was taken; guarded by
	// the adder's lock.
	gone bool
	done chan addResult
}

type addResult struct {
	id  string
	err error
}

// addSenders is how many coalesced ADD calls are in flight at once.
const addSenders = 2

// maxCoalescedBytes stops a coalesced ADD from growing past about this many
// payload bytes: big payloads gain little from sharing a call, and one huge
// command would hold up the server's other clients.
const maxCoalescedBytes = 1 << 20

func newAdder(q *Queue) *groupcommit.Queue[*pendingAdd] {
	return groupcommit.New(addSenders, takeAdds, q.sendAdds)
}

// takeAdds takes the next coalesced batch, dropping callers that left: one
// whose ctx ended gets ctx.Err() here, before its job is sent.
func takeAdds(queue []*pendingAdd) (batch, rest []*pendingAdd) {
	size := 0
	for k, p := range queue {
		if !p.gone && p.ctx.Err() != nil {
			p.gone = true
			p.done <- addResult{err: p.ctx.Err()}
		}
		if p.gone {
			continue
		}
		if len(batch) == MaxBatch || (len(batch) > 0 && size+p.size > maxCoalescedBytes) {
			return batch, queue[k:]
		}
		batch = append(batch, p)
		size += p.size
	}
	return batch, nil
}

// sendAdds runs one ADD for a coalesced batch and gives each caller its id,
// or the call's error. The call ends at the latest of the callers'
// deadlines, so that one caller's short deadline does not fail the others.
func (q *Queue) sendAdds(batch []*pendingAdd) {
	if p := q.parts.Load(); p != nil {
		// the queue is partitioned: since Open, or since a growth this
		// handle saw (partitionsSoon), which may have come after these
		// jobs were taken, lanes with them
		p.sendRouted(batch)
		return
	}
	jobs, ctx, cancel := addsOf(batch)
	defer cancel()
	ids, err := q.addJobs(ctx, jobs, len(batch), q.call)
	deliverAdds(batch, ids, err)
}

// addsOf is the ADD argument groups of a coalesced batch, and the context
// of its call: it ends at the latest of the callers' deadlines.
func addsOf(batch []*pendingAdd) ([]string, context.Context, context.CancelFunc) {
	jobs := make([]string, 0, jobArgs*len(batch))
	deadlines := make([]time.Time, len(batch))
	for i, p := range batch {
		jobs = append(jobs, p.args...)
		deadlines[i] = p.deadline
	}
	ctx, cancel := sharedDeadline(deadlines)
	return jobs, ctx, cancel
}

// addJobs runs one ADD of n jobs' argument groups through call (q.call, or
// q.callOnce), and returns their ids.
func (q *Queue) addJobs(ctx context.Context, jobs []string, n int, call verbCall) ([]string, error) {
	msg, err := call(ctx, protocol.Add, addCall(jobs)...)
	var ids []string
	if err == nil || errors.Is(err, ErrNotDurable) {
		var rerr error
		ids, rerr = msg.AsStrSlice()
		if rerr == nil && len(ids) != n {
			rerr = fmt.Errorf("%d ids for %d jobs", len(ids), n)
		}
		if rerr != nil {
			err, ids = fmt.Errorf("trafikey: add: unexpected reply: %w", rerr), nil
		} else {
			q.outIDs(ids)
			q.observer.jobsAdded(q.name, jobs)
		}
	}
	return ids, err
}

// deliverAdds gives each caller of batch its id, or the call's error.
func deliverAdds(batch []*pendingAdd, ids []string, err error) {
	for i, p := range batch {
		// A job added but not confirmed durable gets its id and the error.
		if ids != nil {
			p.done <- addResult{id: ids[i], err: err}
		} else {
			p.done <- addResult{err: err}
		}
	}
}

// AddBatch adds jobs and returns their ids in the same order. Jobs are sent
// in calls of at most MaxBatch jobs and 256 MiB of payloads; each call is
// all-or-none (a duplicate
// unique key refuses the whole call and adds none of its jobs), but calls
// that succeeded before a refused one stay added. On error the ids of those
// earlier calls are returned with it.
//
// Every job is validated before the first call, so a bad option adds
// nothing at all.
func (q *Queue) AddBatch(ctx context.Context, jobs []JobSpec) ([]string, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	if q.parts.Load() != nil {
		return q.addBatchParts(ctx, jobs)
	}
	return q.addBatch(ctx, jobs, q.call)
}

// addBatch is AddBatch on one queue or partition, its first call made
// through call (q.call, or q.callOnce: see partitions.addAnywhere) and the
// others through q.call.
func (q *Queue) addBatch(ctx context.Context, jobs []JobSpec, call verbCall) ([]string, error) {
	groups := make([][]string, 0, (len(jobs)+MaxBatch-1)/MaxBatch)
	flats := make([][]string, 0, cap(groups))
	for start, end := range batchCalls(jobs) {
		chunk := jobs[start:end]
		flat := make([]string, 0, jobArgs*len(chunk))
		for i := range chunk {
			j := &chunk[i]
			op := "add job " + strconv.Itoa(start+i)
			if len(j.Children) > 0 || j.OnFail != "" {
				return nil, invalid(op, "children and a child policy are for AddFlow")
			}
			o := j.Options.resolve()
			var err error
			if flat, err = o.args(op, flat, j.Payload); err != nil {
				return nil, err
			}
		}
		groups, flats = append(groups, addCall(flat)), append(flats, flat)
	}
	ids := make([]string, 0, len(jobs))
	for g, args := range groups {
		if g > 0 {
			call = q.call
		}
		msg, err := call(ctx, protocol.Add, args...)
		if err != nil && !errors.Is(err, ErrNotDurable) {
			return ids, err
		}
		got, rerr := msg.AsStrSlice()
		if rerr != nil {
			return ids, fmt.Errorf("trafikey: add: unexpected reply: %w", rerr)
		}
		ids = append(ids, q.outIDs(got)...)
		q.observer.jobsAdded(q.name, flats[g])
		if err != nil {
			// Added, not confirmed durable: the ids go with the error, and
			// the calls after it are not made.
			return ids, err
		}
	}
	return ids, nil
}

// batchCalls splits jobs into the calls of AddBatch, in order: each of at
// most MaxBatch jobs and maxCallPayload payload bytes (a job alone may
// reach maxPayload).
func batchCalls(jobs []JobSpec) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		start, size := 0, 0
		for i := range jobs {
			n := len(jobs[i].Payload)
			if i > start && (i-start == MaxBatch || size+n > maxCallPayload) {
				if !yield(start, i) {
					return
				}
				start, size = i, 0
			}
			size += n
		}
		if start < len(jobs) {
			yield(start, len(jobs))
		}
	}
}
