package main

import (
	"context"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/bench/internal/noop"
)

// trafikey through its Go client, emq, on one valkey-go client (which
// pipelines concurrent calls on its own), with the executor forced so both
// run on the same server: the native module's EMQ.* commands, or the Lua
// scripts with EVALSHA. Jobs are added with default options (single Adds
// coalesced by the client, its default); the worker is trafikey.Worker with the
// workload's concurrency and its defaults otherwise (completions batched
// into COMPLETEMANY calls). The trafikey-native-single row turns the
// coalescing off (QueueOptions.SeparateAdds): one ADD call per Add.

type executorKind int

const (
	executorNative executorKind = iota
	executorLua
)

type trafikeyQueue struct {
	c valkey.Client
	q *trafikey.Queue
}

func openTrafikey(kind executorKind, opts trafikey.QueueOptions) func(ctx context.Context, env Env, w Workload) (goQueue, error) {
	return func(ctx context.Context, env Env, w Workload) (goQueue, error) {
		c, err := newValkeyClient(env.Addr)
		if err != nil {
			return nil, err
		}
		opts.Executor = trafikey.ExecutorLua
		if kind == executorNative {
			opts.Executor = trafikey.ExecutorNative
		}
		q, err := trafikey.Open(ctx, c, env.Queue, &opts)
		if err != nil {
			c.Close()
			return nil, err
		}
		return &trafikeyQueue{c: c, q: q}, nil
	}
}

func (t *trafikeyQueue) batch() bool { return true }

func (t *trafikeyQueue) add(ctx context.Context, payload []byte) error {
	_, err := t.q.Add(ctx, payload, nil)
	return err
}

func (t *trafikeyQueue) addBatch(ctx context.Context, payloads [][]byte) error {
	jobs := make([]trafikey.JobSpec, len(payloads))
	for i, p := range payloads {
		jobs[i] = trafikey.JobSpec{Payload: p}
	}
	_, err := t.q.AddBatch(ctx, jobs)
	return err
}

func (t *trafikeyQueue) work(ctx context.Context, concurrency int, done func([]byte)) (func() error, error) {
	// done is called once the job's completion was accepted
	return noop.Workers(ctx, t.q, 1, concurrency, func(j *trafikey.Job) { done(j.Payload) })
}

func (t *trafikeyQueue) completed(ctx context.Context) (int64, error) {
	st, err := t.q.Stats(ctx)
	return int64(st.TotalCompleted), err
}

func (t *trafikeyQueue) pending(ctx context.Context) (int64, error) {
	st, err := t.q.Stats(ctx)
	return int64(st.Pending), err
}

func (t *trafikeyQueue) close() error {
	t.c.Close()
	return nil
}
