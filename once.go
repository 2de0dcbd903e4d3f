package trafikey

import (
	"context"
	"fmt"
	"strconv"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Once is a compact per-queue "seen" set over job ids: one bit per id in a
// string of the queue (emq:{q}:once:<name>), set with TRA.SETBIT on the
// native executor. A handler uses it as an idempotency marker: a job whose
// side effect ran but whose completion was lost (the worker crashed, the
// lease expired) is run again, and finds its id already marked.
//
// Limits: ids up to 2^32 − 1 (protocol.MaxBitOffset; larger ones are
// refused with ErrInvalid), and the string is as long as the largest id
// marked needs: max id / 8 bytes (1.25 MB for ten million ids), whatever
// how few are marked. Marks do not expire; Reset deletes them all.
//
// On the Lua executor Once uses the server's own SETBIT and GETBIT, which
// reply the same bits and leave the same string; TRA.SETBIT differs only in
// how it replicates (verbatim, and not at all when nothing changed).
type Once struct {
	q      *Queue
	name   string
	key    string
	native bool
}

// Once returns the "seen" set name (a bus name: 1..128 bytes of letters,
// digits and - _ . : / @) of the queue.
func (q *Queue) Once(name string) (*Once, error) {
	if !protocol.ValidBusName([]byte(name)) {
		return nil, invalid("once", "name %s must be 1..%d bytes of letters, digits and - _ . : / @", echo(name), protocol.MaxBusName)
	}
	return &Once{q: q, name: name, key: q.keys.Base + protocol.SuffixOnce + name, native: q.exec.Name() == string(ExecutorNative)}, nil
}

// offset checks a job id for the bitmap.
func (o *Once) offset(op, id string) error {
	if err := checkJobID(op, id); err != nil {
		return err
	}
	if n, _ := strconv.ParseInt(id, 10, 64); n > protocol.MaxBitOffset {
		return invalid(op, "job id %s is past the bitmap's last id %d", echo(id), int64(protocol.MaxBitOffset))
	}
	return nil
}

// Mark marks job id as seen and reports whether this call marked it first.
func (o *Once) Mark(ctx context.Context, id string) (first bool, err error) {
	if err := o.offset("once mark", id); err != nil {
		return false, err
	}
	cmd := "SETBIT"
	if o.native {
		cmd = protocol.TRASetBit
	}
	prev, err := o.do(ctx, cmd, id, "1")
	return prev == 0, err
}

// Seen reports whether job id was marked.
func (o *Once) Seen(ctx context.Context, id string) (bool, error) {
	if err := o.offset("once seen", id); err != nil {
		return false, err
	}
	cmd := "GETBIT"
	if o.native {
		cmd = protocol.TRAGetBit
	}
	bit, err := o.do(ctx, cmd, id)
	return bit == 1, err
}

// Reset forgets every mark.
func (o *Once) Reset(ctx context.Context) error {
	c := o.q.client
	if err := c.Do(ctx, c.B().Del().Key(o.key).Build()).Error(); err != nil {
		return fmt.Errorf("trafikey: once %s: %w", o.name, err)
	}
	return nil
}

// do runs one bit command on the bitmap and reads its integer reply.
func (o *Once) do(ctx context.Context, cmd string, args ...string) (int64, error) {
	c := o.q.client
	n, err := c.Do(ctx, c.B().Arbitrary(cmd).Keys(o.key).Args(args...).Build()).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("trafikey: once %s: %s: %w", o.name, cmd, err)
	}
	return n, nil
}

// Middleware skips the handler of a job already marked (the job completes
// without running again) and marks each job whose handler succeeded. A job
// that fails is not marked, so its retry runs.
func (o *Once) Middleware() Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, job *Job) error {
			seen, err := o.Seen(ctx, job.ID)
			if err != nil || seen {
				return err
			}
			if err := next(ctx, job); err != nil {
				return err
			}
			_, err = o.Mark(ctx, job.ID)
			return err
		}
	}
}
