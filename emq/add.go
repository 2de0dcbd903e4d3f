package emq

import (
	"context"
	"fmt"

	"trafikey/protocol"
)

// MaxBatch is the most jobs one ADD call carries; AddBatch splits larger
// batches into calls of this size.
const MaxBatch = protocol.MaxCount

// NewJob is one job of an AddBatch.
type NewJob struct {
	// Payload is stored and handed to the worker byte for byte.
	Payload []byte
	// Options configure the job as they would for Add.
	Options []AddOption
}

// Add adds one job and returns its id. The payload is any bytes. With
// Unique, a key held by another job is refused with an error for which
// errors.As gives a *DuplicateError.
func (q *Queue) Add(ctx context.Context, payload []byte, opts ...AddOption) (string, error) {
	ids, err := q.AddBatch(ctx, []NewJob{{Payload: payload, Options: opts}})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// AddBatch adds jobs and returns their ids in the same order. Jobs are sent
// in calls of at most MaxBatch; each call is all-or-none (a duplicate
// unique key refuses the whole call and adds none of its jobs), but calls
// that succeeded before a refused one stay added. On error the ids of those
// earlier calls are returned with it.
//
// Every job is validated before the first call, so a bad option adds
// nothing at all.
func (q *Queue) AddBatch(ctx context.Context, jobs []NewJob) ([]string, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	groups := make([][]string, 0, (len(jobs)+MaxBatch-1)/MaxBatch)
	for start := 0; start < len(jobs); start += MaxBatch {
		chunk := jobs[start:min(start+MaxBatch, len(jobs))]
		args := make([]string, 1, 1+protocol.AddArgsPerJob*len(chunk))
		args[0] = protocol.FormatInt(int64(len(chunk)))
		for i, j := range chunk {
			o := defaultAddOptions()
			for _, opt := range j.Options {
				opt(&o)
			}
			var err error
			if args, err = o.args(args, j.Payload); err != nil {
				return nil, fmt.Errorf("emq: add job %d: %w", start+i, err)
			}
		}
		groups = append(groups, args)
	}
	ids := make([]string, 0, len(jobs))
	for _, args := range groups {
		msg, err := q.call(ctx, protocol.Add, args...)
		if err != nil {
			return ids, err
		}
		got, err := msg.AsStrSlice()
		if err != nil {
			return ids, fmt.Errorf("emq: add: unexpected reply: %w", err)
		}
		ids = append(ids, got...)
		q.metrics.added(len(got))
	}
	return ids, nil
}
