package trafikey

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/protocol"
)

// Job is a job claimed by a worker. Its methods report the claim's outcome
// to the server; each takes the attempt token, so a worker whose lease was
// lost and whose job was claimed again is refused with ErrLeaseLost instead of
// touching the new claim.
type Job struct {
	// ID is the job's id in its queue, a decimal string.
	ID string
	// Payload is the job's data, as added.
	Payload []byte
	// Attempt counts the job's claims, this one included (1 on the first
	// run). It is the attempt token the job's methods send.
	Attempt int
	// MaxAttempts is how many claims the job may have (MaxAttempts at
	// Add); when Attempt reaches it, a failure dead-letters the job.
	MaxAttempts int
	// Kind is the job's kind (Kind at Add), which a Mux routes on; empty
	// for none.
	Kind string
	// Timeout bounds this attempt (Timeout at Add); 0 leaves it to the
	// worker's WorkerOptions.Timeout.
	Timeout time.Duration
	// Headers are the headers added with the job (Headers at Add), e.g.
	// trace context; nil for none.
	Headers map[string]string
	// Lane is the lane the job was claimed from (Lane at Add); empty for
	// none.
	Lane string

	q      *Queue
	token  string
	result []byte
	// claimSent is when the CLAIM that granted this attempt's lease was
	// sent (zero for a job not claimed through Claim): the lease runs
	// from no earlier than that.
	claimSent time.Time
	// waited is how long the job waited before this claim, when waitKnown
	// (CLAIM's extended row's wait; Observer.JobWaited).
	waited    time.Duration
	waitKnown bool
}

// SetResult sets the result the job's completion carries (at most the
// queue's result bound, RetentionPolicy.ResultMax, 256 KiB by default; never
// more than 1 MiB). It is kept for whoever reads it: the job's parent in
// a flow (Queue.Children), a retained job's row (Inspect), a waiter
// (AddAndWait). A Worker's handler sets it before it returns nil.
func (j *Job) SetResult(result []byte) { j.result = result }

// Queue returns the queue the job was claimed from.
func (j *Job) Queue() *Queue { return j.q.logical() }

// Claim claims up to count (1..1000) pending jobs, highest priority first,
// holding each under a lease of the given length (rounded up to a
// millisecond, at most 24 h). It returns no jobs and no error when nothing is
// pending or the queue is paused. A job whose lease passes without Extend is
// moved back to pending by lease recovery (a Worker's timer, or Admin.Maintain).
//
// Claim is the primitive behind Worker, for callers with their own loop.
func (q *Queue) Claim(ctx context.Context, lease time.Duration, count int) ([]*Job, error) {
	if q.parts.Load() != nil {
		return q.claimParts(ctx, lease, count)
	}
	return q.claim(ctx, lease, count, 0)
}

// claim is Claim, with CLAIM's block time when block is above 0: the native
// executor then holds a call that finds nothing until a job is claimable or
// block passes (answering nothing), on a connection meant for blocking
// calls; see claimBlocks for when a queue may.
func (q *Queue) claim(ctx context.Context, lease time.Duration, count int, block time.Duration) ([]*Job, error) {
	leaseMS, err := leaseArg("claim", lease)
	if err != nil {
		return nil, err
	}
	if count < 1 || count > protocol.MaxCount {
		return nil, invalid("claim", "count %d outside 1..%d", count, protocol.MaxCount)
	}
	countArg := protocol.FormatInt(int64(count))
	ext := !q.noClaimExt.Load()
	// the extended rows; with each job's wait only when an observer takes
	// it, as reading it costs every claim
	extArg := protocol.ClaimExtended
	if q.observer.JobWaited != nil {
		extArg = protocol.ClaimWaits
	}
	sent := time.Now()
	var msg valkey.ValkeyMessage
	if block > 0 {
		if !ext {
			extArg = "0"
		}
		native := q.exec.(*executor.Native)
		args := []string{leaseMS, countArg, extArg, protocol.FormatInt(ceilMS(block))}
		msg, err = q.untilRun(ctx, func() (valkey.ValkeyMessage, error) {
			return q.reply(ctx, protocol.Claim, native.ExecBlocking(ctx, protocol.Claim, q.verbKeys[protocol.Claim], args))
		})
	} else if ext {
		msg, err = q.call(ctx, protocol.Claim, leaseMS, countArg, extArg)
	} else {
		msg, err = q.call(ctx, protocol.Claim, leaseMS, countArg)
	}
	if err != nil {
		return nil, err
	}
	rows, err := msg.ToArray()
	if err != nil {
		return nil, fmt.Errorf("trafikey: claim: unexpected reply: %w", err)
	}
	jobs := make([]*Job, 0, len(rows))
	for _, row := range rows {
		j, ok := claimedJob(q, row, ext)
		if !ok {
			return jobs, fmt.Errorf("trafikey: claim: unexpected reply entry %v", row)
		}
		j.claimSent = sent
		jobs = append(jobs, j)
	}
	if len(jobs) > 0 {
		q.observer.jobsClaimed(q.name, jobs)
		q.observer.jobsWaited(jobs)
	}
	return jobs, nil
}

// claimBlocks reports whether a claim on q may carry a block time: on the
// native executor. (CLAIM is not one of the writes Durability confirms, so
// it holds no WAIT.)
func (q *Queue) claimBlocks() bool {
	_, ok := q.exec.(*executor.Native)
	return ok
}

// claimedJob reads one entry of CLAIM's reply: [id, data, attempt], with
// ext [.., max, kind, timeout, headers, lane] and, when asked for, wait. A
// null data, kind, headers or lane reads as empty, a null wait as not
// known.
func claimedJob(q *Queue, row valkey.ValkeyMessage, ext bool) (*Job, bool) {
	f, err := row.ToArray()
	want := 3
	if ext {
		want = protocol.ClaimExtendedReply
	}
	if err != nil || (len(f) != want && (!ext || len(f) != protocol.ClaimWaitsReply)) {
		return nil, false
	}
	id, err1 := f[0].ToString()
	data, _ := f[1].ToString()
	att, err3 := f[2].AsInt64()
	if err1 != nil || err3 != nil {
		return nil, false
	}
	j := &Job{ID: q.outID(id), Payload: []byte(data), Attempt: int(att), q: q, token: protocol.FormatInt(att)}
	if ext {
		maxAtt, err1 := f[3].AsInt64()
		timeout, err2 := f[5].AsInt64()
		if err1 != nil || err2 != nil {
			return nil, false
		}
		j.MaxAttempts = int(maxAtt)
		j.Kind, _ = f[4].ToString()
		j.Timeout = time.Duration(timeout) * time.Millisecond
		headers, _ := f[6].ToString()
		j.Headers = decodeHeaders(headers)
		j.Lane, _ = f[7].ToString()
		if len(f) == protocol.ClaimWaitsReply && !f[8].IsNil() {
			wait, err := f[8].AsInt64()
			if err != nil {
				return nil, false
			}
			j.waited, j.waitKnown = time.Duration(wait)*time.Millisecond, true
		}
	}
	return j, true
}

// checkResult refuses a result over protocol.MaxResult before any I/O.
func (j *Job) checkResult(op string) error {
	if len(j.result) > protocol.MaxResult {
		return invalid(op, "result of %d bytes, at most %d", len(j.result), protocol.MaxResult)
	}
	return nil
}

func leaseArg(op string, lease time.Duration) (string, error) {
	ms := ceilMS(lease)
	if lease <= 0 || ms > protocol.MaxLeaseMS {
		return "", invalid(op, "lease %v outside 1ms..%dms", lease, protocol.MaxLeaseMS)
	}
	return protocol.FormatInt(ms), nil
}

// Complete reports the job done, with the result SetResult gave: its row and
// logs are deleted (kept, with the result, when the queue retains completed
// jobs) and its unique key released; a parent waiting for it is told.
// It returns ErrLeaseLost when the job was claimed again since, or when its
// lease expired and it was recovered (then it is an ErrState too), and
// ErrNotFound when it no longer exists.
func (j *Job) Complete(ctx context.Context) error {
	if err := j.checkResult("complete"); err != nil {
		return err
	}
	n, err := j.q.callInt(ctx, protocol.Complete, j.raw(), j.token, string(j.result))
	if err != nil {
		return err
	}
	if n == 0 {
		return j.notFound(protocol.Complete)
	}
	return nil
}

// Fail reports the attempt failed with cause's text (truncated to 64 KiB).
// With retry, the job waits its backoff and runs again while attempts
// remain; without, or when none remain, it is dead-lettered. retrying
// reports which happened. Errors are as for Complete; with a durability
// not confirmed in time, retrying is set and the error matches
// ErrNotDurable.
func (j *Job) Fail(ctx context.Context, cause error, retry bool) (retrying bool, err error) {
	text := ""
	if cause != nil {
		text = truncateText(cause.Error())
	}
	flag := "0"
	if retry {
		flag = "1"
	}
	msg, err := j.q.call(ctx, protocol.Fail, j.raw(), j.token, flag, text)
	if err != nil && !errors.Is(err, ErrNotDurable) {
		return false, err
	}
	// err is nil, or the outcome was applied but not confirmed durable.
	if msg.IsInt64() {
		if n, _ := msg.AsInt64(); n == 0 {
			return false, j.notFound(protocol.Fail)
		}
	}
	outcome, rerr := msg.ToString()
	switch {
	case rerr != nil:
		return false, fmt.Errorf("trafikey: fail: unexpected reply: %w", rerr)
	case outcome == protocol.FailRetry:
		return true, err
	case outcome == protocol.FailDead:
		return false, err
	default:
		return false, fmt.Errorf("trafikey: fail: unexpected reply %q", outcome)
	}
}

// Extend renews the job's lease to lease from now and returns the new
// deadline (server clock). Errors are as for Complete; any of them means the
// claim is lost and the work should stop.
func (j *Job) Extend(ctx context.Context, lease time.Duration) (time.Time, error) {
	leaseMS, err := leaseArg("extend", lease)
	if err != nil {
		return time.Time{}, err
	}
	deadline, err := j.q.callInt(ctx, protocol.Extend, j.raw(), j.token, leaseMS)
	if err != nil {
		return time.Time{}, err
	}
	if deadline == 0 {
		return time.Time{}, j.notFound(protocol.Extend)
	}
	return time.UnixMilli(deadline), nil
}

// Log appends a line (at most 64 KiB) to the job's log, which keeps the
// queue's log cap of newest lines (QueueOptions.LogCap). The log is deleted with the
// job when it completes.
func (j *Job) Log(ctx context.Context, line string) error {
	if len(line) > protocol.MaxText {
		return invalid("log", "line of %d bytes, at most %d", len(line), protocol.MaxText)
	}
	n, err := j.q.callInt(ctx, protocol.Log, j.raw(), j.token, line, j.q.logCap)
	if err != nil {
		return err
	}
	if n == 0 {
		return j.notFound(protocol.Log)
	}
	return nil
}

// Progress stores value (at most 64 KiB) as the job's progress, shown by
// Inspect. The format is the caller's, e.g. "42%".
func (j *Job) Progress(ctx context.Context, value string) error {
	if len(value) > protocol.MaxText {
		return invalid("progress", "value of %d bytes, at most %d", len(value), protocol.MaxText)
	}
	n, err := j.q.callInt(ctx, protocol.Progress, j.raw(), j.token, value)
	if err != nil {
		return err
	}
	if n == 0 {
		return j.notFound(protocol.Progress)
	}
	return nil
}

func (j *Job) notFound(v *protocol.Verb) error {
	return fmt.Errorf("trafikey: %s job %s: %w", v.Name, j.ID, ErrNotFound)
}

// truncateText cuts s to the protocol's MaxText bytes without splitting a
// UTF-8 sequence, so a long error text stays readable.
func truncateText(s string) string {
	if len(s) <= protocol.MaxText {
		return s
	}
	cut := protocol.MaxText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// raw is the id the server knows the job by: ID without its partition's
// suffix (Queue.outID).
func (j *Job) raw() string { return j.ID[:len(j.ID)-len(j.q.idSuffix)] }
