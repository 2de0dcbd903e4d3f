// Package trafikey is the Go client of trafikey, a job queue that lives inside
// Valkey: producers add jobs, workers claim them under a lease and complete
// or fail them. Every state change is one server-side command, so a job is
// never half-moved, never lost when a worker dies, and never completed by a
// worker that lost its claim.
//
// # The shape of the API
//
// The package is read by role. A producer needs Open, Queue.Add (or AddBatch,
// AddFlow, AddAndWait) and JobOptions; a handler author needs Handler, Job,
// Mux and WorkerOptions; an operator reaches the rest through small handles
// that group one resource each: q.Admin() (pausing, rates, retention, events,
// moving and removing jobs), q.Lane(name) and q.Schedules(). A handle holds
// only the queue (and a name), so calling q.Admin() each time costs nothing.
//
// # Compared with River and asynq
//
// River's root package puts every verb on its Client (Insert, JobCancel,
// JobRetry, QueuePause, ...) and groups a few resources behind accessors
// (PeriodicJobs, Queues); asynq splits the roles into types: a Client that
// enqueues, a Server and ServeMux that run handlers, an Inspector for
// operators and a Scheduler for periodic tasks. trafikey keeps one Queue
// value, because a queue is one set of keys on one server and every role
// talks to it with the same commands, and moves the operator's and the
// schedules' verbs behind handles so that the Queue's own methods are those
// of producers and handlers, as River's accessors do for a few resources.
//
// Job options are a plain struct passed by pointer, as River's InsertOpts,
// rather than asynq's option functions: a schedule stores the options of the
// jobs it adds and hands them back unchanged (Schedules.Get), which an
// opaque function cannot do. Delays count on the server's clock only (no
// absolute run-at time, which would compare a producer's clock with the
// server's). The queue's own options are a struct too (QueueOptions).
// Counts are int throughout, and one sentinel names each refusal
// (ErrLeaseLost for a job its caller no longer holds, however the server
// found out); one error type, *Error, carries the details of any of them,
// where River and asynq have a type per case.
//
// # Opening a queue
//
// A Queue is a handle on one named queue, opened on a valkey-go client:
//
//	client, _ := valkey.NewClient(valkey.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
//	q, err := trafikey.Open(ctx, client, "emails")
//
// Open picks the executor that runs the verbs: the native trafikey module
// when the server has it loaded (EMQ.* commands), else the Lua scripts run
// with EVALSHA, which need nothing on the server. Both take the same keys
// and arguments and give the same replies (docs/PROTOCOL.md);
// QueueOptions.Executor (ExecutorLua or ExecutorNative) overrides the
// choice.
//
// # Adding jobs
//
// A job is an opaque payload plus options:
//
//	id, err := q.Add(ctx, payload, &trafikey.JobOptions{Priority: 10, Delay: time.Minute, MaxAttempts: 5})
//
// AddBatch adds many jobs in calls of up to MaxBatch jobs, each call all or
// none. A UniqueKey refuses a job while another holds the same key; the error
// then is an ErrDuplicate whose *Error names the holder (JobID).
//
// Concurrent Add calls are coalesced by default (group commit): an Add made
// while no other is on the wire is sent at once, and the Adds that arrive
// while calls are in flight leave together in the next ADD, up to MaxBatch
// jobs. Nothing waits on a timer, so a lone Add costs no latency, and a
// busy producer side costs the server one call per batch instead of one per
// job. Each job's options are checked before it joins; a job with a unique
// key is sent alone. QueueOptions.SeparateAdds sends every Add by itself.
//
// # Running jobs
//
// A Worker runs a Handler with a bounded concurrency. Claim loops
// (two) claim jobs in batches as
// slots free up, each asking for the free slots only, so one CLAIM is on
// its way while another's jobs run; a heartbeat extends the leases of running
// jobs; timers move due delayed jobs to pending and take back jobs whose
// workers died. An idle worker sleeps on the queue's signal list (BLPOP) and
// wakes as soon as a job is pending, without polling; on the native
// executor a worker of one queue waits in a blocking CLAIM instead, which
// the ADD answers with the job, one round trip sooner.
//
//	w, err := trafikey.NewWorker(q, func(ctx context.Context, job *trafikey.Job) error {
//		return send(ctx, job.Payload)
//	}, trafikey.WorkerOptions{Concurrency: 50})
//	err = w.Run(ctx) // until ctx ends, then a graceful shutdown
//
// The jobs whose handlers return nil are completed the same way: a
// completion made while none is in flight is sent at once, and those that
// finish meanwhile share the next COMPLETEMANY call, each with its own
// outcome, so a lost claim costs only its own job (OutcomeLeaseLost).
//
// A handler error fails the attempt: the job waits its backoff and runs
// again while attempts remain, then is dead-lettered. SkipRetry
// dead-letters at once. A panic fails the attempt with its stack.
//
// Claim, Queue.CompleteMany, Job.Complete, Job.Fail and Job.Extend are the
// primitives the Worker is built from, exported for callers with their own
// loop.
//
// # Kinds, timeouts, cancellation and tracing
//
// A job can carry a kind, a timeout per attempt (over WorkerOptions.Timeout)
// and headers (JobOptions.Kind, Timeout, Headers); a worker's Job has them,
// with MaxAttempts. A Mux routes jobs to handlers by kind
// and dead-letters a job of an unknown kind without retries; a JobType ties
// a kind to a Go payload type encoded as JSON, for adding and handling.
//
// JobOptions.Delay counts from the server's clock; Admin.Reschedule moves a
// pending or delayed job to another time.
// Queue.Cancel ends a pending, delayed or running job in the dead set (err
// "cancelled"): a running job's worker hears of it at once from the
// queue's cancel notices (or at its next heartbeat, which is refused),
// cancels the handler's context with cause ErrCancelled and reports
// OutcomeCancelled. The trafikeyotel module carries OpenTelemetry trace
// context in a job's headers from Add to the handler's span.
//
// # Periodic jobs
//
// Schedules.Set defines a schedule: a cron expression (the crontab's five
// fields, or six with seconds first, in a time zone) or a fixed interval, with a jitter, start
// and end times, a cap on occurrences and the job each occurrence enqueues.
// Every Worker runs the schedule step on its timer (WorkerOptions.
// ScheduleEvery); the server's clock decides when an occurrence is due, and
// the server enqueues each occurrence once however many workers step at
// once, restart or disagree about the time. Schedule.Grace and CatchUp catch up or
// skips the occurrences of a downtime. Queue.Schedules lists, pauses,
// resumes and removes them; a job's JobInfo names its schedule and
// scheduled time.
//
// # Downstreams and idempotency
//
// Queue.Breaker is a circuit breaker over a downstream's failures, counted
// on the server (EMQ.FAILURES.INCR) so every worker of the queue shares
// it: open while a window's count is above its threshold, closed again when
// the window ends. Breaker.Middleware fails jobs with ErrBreakerOpen without
// running their handler while it is open, and counts the handler's
// failures. Queue.Once is a "seen" bitmap over job ids (one bit per id, ids
// up to 2^32 − 1, max id / 8 bytes of memory), set with the module's
// TRA.SETBIT, for handlers whose side effect must not run twice when a
// completion was lost; Once.Middleware skips jobs already marked.
//
// # Leases and attempt tokens
//
// A claim holds a job under a lease. Each claim increments the job's
// attempt counter, and the job's later calls carry that attempt as a token.
// When a lease expires (the worker died or stalled), RECOVER puts the job
// back to pending and the next claim gets a new token; the old worker's
// Complete is then refused with ErrLeaseLost. A job is completed at most once
// per claim and, as long as handlers return before their lease is lost,
// runs to completion exactly once.
//
// # Errors
//
// Refusals from the server are *Error values that keep the server's exact
// text and wrap a sentinel of the text's class: ErrLeaseLost, ErrState (and
// ErrCancelled), ErrDuplicate, ErrRateLimited, ErrWire and ErrWritePaused.
// One error type serves every detail: the holder of a unique key, the wait
// of a rate limit, the job that died while waited. A job that no longer
// exists is ErrNotFound. Test with errors.Is and errors.As.
//
// Every argument is checked before any I/O: a bad queue name, job id,
// priority, delay, lease, count, limit or an empty unique key is an error
// matching ErrInvalid, whose text starts "trafikey: <operation>: " and
// quotes at most 64 bytes of the offending input.
//
// # Observing and testing
//
// Admin.SetEvents turns a queue's job events on: each transition of a job
// added from then on (added, claimed, completed, retrying, dead, …) is
// written to the queue's bounded events stream by the same command that
// makes it, so the stream never shows a transition that did not happen and
// never misses one. Queue.Events iterates over them from any entry id and
// resumes after the last one it yielded across reconnects.
//
// QueueOptions.Observer reports what a queue and its workers do to an Observer; the
// trafikeyprom module exports it as Prometheus series. The trafikeytest
// package starts a throwaway valkey-server for tests and runs a handler on
// one job exactly as a Worker would.
package trafikey
