package main

import (
	"context"
	"time"

	"github.com/hibiken/asynq"
)

// asynq (github.com/hibiken/asynq, go-redis underneath), with its defaults
// except for what the workload sets: the server's Concurrency, and a
// connection pool as large as the number of concurrent producers. asynq has
// no batch enqueue; its best practice for many tasks is concurrent Enqueue
// calls, so the batch workload is concurrent single adds for asynq. The
// asynq-10ms row sets TaskCheckInterval, how long an idle worker waits
// before it looks for tasks again, to 10 ms (the default is 1 s).

const asynqQueue = "default"

type asynqQueueSys struct {
	poll      time.Duration // TaskCheckInterval; 0 leaves asynq's default
	opt       asynq.RedisClientOpt
	client    *asynq.Client
	inspector *asynq.Inspector
}

// openAsynq opens asynq with TaskCheckInterval poll (0: asynq's default).
func openAsynq(poll time.Duration) func(ctx context.Context, env Env, w Workload) (goQueue, error) {
	return func(ctx context.Context, env Env, w Workload) (goQueue, error) {
		return newAsynq(env, w, poll), nil
	}
}

func newAsynq(env Env, w Workload, poll time.Duration) *asynqQueueSys {
	opt := asynq.RedisClientOpt{Addr: env.Addr, PoolSize: max(w.Producers, 10)}
	return &asynqQueueSys{
		poll:      poll,
		opt:       opt,
		client:    asynq.NewClient(opt),
		inspector: asynq.NewInspector(opt),
	}
}

func (a *asynqQueueSys) batch() bool { return false }

func (a *asynqQueueSys) add(ctx context.Context, payload []byte) error {
	_, err := a.client.EnqueueContext(ctx, asynq.NewTask("bench", payload), asynq.Queue(asynqQueue))
	return err
}

func (a *asynqQueueSys) addBatch(ctx context.Context, payloads [][]byte) error {
	for _, p := range payloads {
		if err := a.add(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// asynq acknowledges a task (its Done script) after the handler returns and
// offers no hook after that, so done is called when the handler returns:
// asynq's add → complete latency leaves out that last round trip.
func (a *asynqQueueSys) work(ctx context.Context, concurrency int, done func([]byte)) (func() error, error) {
	opt := a.opt
	opt.PoolSize = max(concurrency, 10)
	srv := asynq.NewServer(opt, asynq.Config{
		Concurrency:       concurrency,
		TaskCheckInterval: a.poll,
		Queues:            map[string]int{asynqQueue: 1},
		Logger:            quietLogger{},
		LogLevel:          asynq.FatalLevel,
	})
	err := srv.Start(asynq.HandlerFunc(func(_ context.Context, t *asynq.Task) error {
		done(t.Payload())
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return func() error {
		srv.Shutdown()
		return nil
	}, nil
}

func (a *asynqQueueSys) completed(ctx context.Context) (int64, error) {
	info, err := a.inspector.GetQueueInfo(asynqQueue)
	if err != nil {
		return 0, err
	}
	return int64(info.Processed - info.Failed), nil
}

func (a *asynqQueueSys) pending(ctx context.Context) (int64, error) {
	info, err := a.inspector.GetQueueInfo(asynqQueue)
	if err != nil {
		return 0, err
	}
	return int64(info.Pending), nil
}

func (a *asynqQueueSys) close() error {
	err := a.client.Close()
	if e := a.inspector.Close(); err == nil {
		err = e
	}
	return err
}

// quietLogger drops asynq's log lines (they would tear the progress bar);
// Fatal still ends the process as asynq expects.
type quietLogger struct{}

func (quietLogger) Debug(...any) {}
func (quietLogger) Info(...any)  {}
func (quietLogger) Warn(...any)  {}
func (quietLogger) Error(...any) {}
func (quietLogger) Fatal(args ...any) {
	panic(append([]any{"asynq fatal:"}, args...))
}
