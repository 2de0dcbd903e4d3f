package trafikey

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/protocol"
)

// Durability asks the server to confirm that a write survives a crash
// before the call that made it returns. Without it, an acknowledged write
// lives in the primary's memory until replication and the AOF catch up, so
// a primary that crashes in between can lose it (a replica promoted in its
// place never saw it).
//
// It applies to the writes that matter for a job's life: ADD (Add,
// AddBatch), COMPLETE and COMPLETEMANY (Job.Complete, Queue.CompleteMany,
// the Worker's completions) and FAIL (Job.Fail, the Worker's failures).
// Set it for a queue with QueueOptions.Durability.
type Durability struct {
	// Replicas is how many replicas must have received the write (WAIT,
	// or WAITAOF's numreplicas with AOF).
	Replicas int
	// AOF requires the write fsynced to the append-only file of the
	// primary, and of each of the Replicas replicas counted (WAITAOF). The
	// servers need appendonly yes.
	AOF bool
	// Timeout bounds the wait (default 1 s). When it
	// passes first, the call returns an error matching ErrNotDurable.
	Timeout time.Duration
}

// defaultDurabilityTimeout is how long a durable write waits for its
// confirmation unless Durability.Timeout says otherwise.
const defaultDurabilityTimeout = time.Second

// ErrNotDurable reports a write the server applied but could not confirm
// durable within the timeout: too few replicas acknowledged it, the AOF was
// not fsynced in time, or the wait was refused (appendonly off). The write
// is not undone. The error's text says what was missing: the replicas that
// confirmed it, whether the primary fsynced it, or why the wait failed.
var ErrNotDurable = errors.New("trafikey: write not confirmed durable")

// durabilityError is the detail of an ErrNotDurable.
type durabilityError struct {
	verb     string
	want     Durability
	replicas int   // how many replicas confirmed the write
	localAOF bool  // whether the primary fsynced it (with want.AOF)
	err      error // the wait's own error, when it failed rather than timed out
}

func (e *durabilityError) Error() string {
	if e.err != nil {
		return "trafikey: " + e.verb + ": durability not confirmed: " + e.err.Error()
	}
	msg := "trafikey: " + e.verb + ": durability not confirmed within " + e.want.timeout().String() +
		": " + strconv.Itoa(e.replicas) + " of " + strconv.Itoa(e.want.Replicas) + " replicas"
	if e.want.AOF {
		msg += ", primary AOF " + map[bool]string{true: "fsynced", false: "not fsynced"}[e.localAOF]
	}
	return msg
}

func (e *durabilityError) Unwrap() []error {
	if e.err != nil {
		return []error{ErrNotDurable, e.err}
	}
	return []error{ErrNotDurable}
}

func (d Durability) on() bool { return d.Replicas > 0 || d.AOF }

func (d Durability) timeout() time.Duration {
	if d.Timeout == 0 {
		return defaultDurabilityTimeout
	}
	return d.Timeout
}

// check refuses a durability no server could give.
func (d Durability) check(op string) error {
	switch {
	case d.Replicas < 0:
		return invalid(op, "durability replicas %d is negative", d.Replicas)
	case d.Timeout < 0:
		return invalid(op, "durability timeout %v is negative", d.Timeout)
	}
	return nil
}

// durableVerb reports whether v's writes wait for the queue's durability.
func durableVerb(v *protocol.Verb) bool {
	return v == protocol.Add || v == protocol.Complete || v == protocol.CompleteMany || v == protocol.Fail
}

// durabilityOf is the durability of a call of v.
func (q *Queue) durabilityOf(v *protocol.Verb) Durability {
	if !durableVerb(v) {
		return Durability{}
	}
	return q.durability
}

// callDurable runs v, then on the same connection WAIT or WAITAOF for d,
// in one round trip, and checks the confirmation. The verb's reply is
// returned whatever the confirmation.
func (q *Queue) callDurable(ctx context.Context, v *protocol.Verb, d Durability, args []string) (valkey.ValkeyMessage, error) {
	ms := d.timeout().Milliseconds()
	then := executor.Then(func(b valkey.Builder) []valkey.Completed {
		if d.AOF {
			return []valkey.Completed{b.Waitaof().Numlocal(1).Numreplicas(int64(d.Replicas)).Timeout(ms).Build()}
		}
		return []valkey.Completed{b.Wait().Numreplicas(int64(d.Replicas)).Timeout(ms).Build()}
	})
	res, waits := q.exec.ExecThen(ctx, v, q.verbKeys[v], args, then)
	msg, err := q.reply(ctx, v, res)
	if err != nil {
		return msg, err
	}
	de := &durabilityError{verb: v.Name, want: d}
	if len(waits) == 0 {
		de.err = errors.New("no connection for the wait")
		return msg, de
	}
	if d.AOF {
		counts, err := waits[0].AsIntSlice()
		switch {
		case err != nil:
			de.err = err
		case len(counts) != 2:
			de.err = fmt.Errorf("WAITAOF replied %v", counts)
		default:
			de.localAOF, de.replicas = counts[0] >= 1, int(counts[1])
		}
		if de.err == nil && de.localAOF && de.replicas >= d.Replicas {
			return msg, nil
		}
		return msg, de
	}
	n, err := waits[0].AsInt64()
	if err != nil {
		de.err = err
		return msg, de
	}
	if de.replicas = int(n); de.replicas >= d.Replicas {
		return msg, nil
	}
	return msg, de
}
