package trafikey

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Cancel notices: CANCEL of an active job publishes "<id> <token>" on the
// queue's sharded channel emq:{q}:cancels (docs/PROTOCOL.md, CANCEL). A
// worker keeps one subscription per queue, on the client's connection to
// the queue's slot (valkey-go's Receive; RESP3 carries the messages on the
// connection the commands use), and cancels the handler of a matching job
// at once. The heartbeat stays the fallback: a notice sent while the
// subscription was down, or not sent (the canceller's ACL may not publish
// it), is learnt from the job's next EXTEND.

const (
	// noticeRetryMax is the longest wait before subscribing again after a
	// transport error.
	noticeRetryMax = 5 * time.Second
	// noticeRefusedMax is the longest wait before subscribing again after
	// the server refused the subscription (an ACL without the channel):
	// retried, as the rules may change, but seldom.
	noticeRefusedMax = 30 * time.Second
)

// watchCancels starts a goroutine per queue, in group, that keeps the
// queue's cancels subscription until ctx ends. The channel it returns is
// closed once every queue's first subscription was confirmed or failed, so
// Run claims its first jobs with the subscriptions in place.
func (w *Worker) watchCancels(ctx context.Context, group *sync.WaitGroup) <-chan struct{} {
	ready := make(chan struct{})
	var first sync.WaitGroup
	for _, qw := range w.set.Load().queues {
		first.Add(1)
		group.Go(func() { w.watchQueueCancels(ctx, qw.Queue, first.Done) })
	}
	go func() {
		first.Wait()
		close(ready)
	}()
	return ready
}

// watchQueueCancels subscribes to q's cancels channel, again after each
// loss, until ctx ends; tried is called once, after the first attempt.
// When ctx ends, valkey-go stops delivering the channel's messages to this
// subscription without sending SUNSUBSCRIBE: the shared connection stays
// subscribed (another worker of the queue in this process may use the same
// subscription), and a later message is dropped by the client.
func (w *Worker) watchQueueCancels(ctx context.Context, q *Queue, tried func()) {
	var once sync.Once
	defer once.Do(tried)
	var wait time.Duration
	for ctx.Err() == nil {
		var subscribed atomic.Bool
		// The hook runs in the connection's reader: it only marks.
		hooked := valkey.WithOnSubscriptionHook(ctx, func(s valkey.PubSubSubscription) {
			if s.Kind == "ssubscribe" {
				subscribed.Store(true)
				once.Do(tried)
			}
		})
		cmd := q.client.B().Ssubscribe().Channel(q.keys.Cancels()).Build()
		err := q.client.Receive(hooked, cmd, func(m valkey.PubSubMessage) { w.noticed(q, m.Message) })
		once.Do(tried)
		if ctx.Err() != nil {
			return
		}
		limit := noticeRetryMax
		if subscribed.Load() {
			wait = 0 // it held: the backoff starts again
		}
		if err != nil {
			if _, refused := valkey.IsValkeyErr(err); refused {
				limit = noticeRefusedMax
			}
			w.log.warn("trafikey: cancel notices: subscription lost; cancelled jobs are seen at their heartbeat until it is back", "queue", q.name, "err", err)
		}
		// A subscription that ended (the server's sunsubscribe when the
		// slot moved, or a failure) is made again after a backoff from
		// 50 ms, so one the server keeps ending costs no busy loop.
		wait = min(max(2*wait, 50*time.Millisecond), limit)
		if !sleep(ctx, wait) {
			return
		}
	}
}

// noticed handles a message of q's cancels channel: the jobs of q running
// here under the notice's id and attempt token are cancelled.
func (w *Worker) noticed(q *Queue, msg string) {
	id, token, ok := protocol.ParseCancelNotice(msg)
	if !ok {
		return
	}
	var hit []*runningJob
	w.mu.Lock()
	for r := range w.jobs {
		if r.job.q == q && r.job.raw() == id && r.job.token == token {
			hit = append(hit, r)
		}
	}
	w.mu.Unlock()
	for _, r := range hit {
		w.jobCancelled(r)
	}
}

// jobCancelled records that Queue.Cancel ended r's claim, learnt from a
// notice or a refused heartbeat, whichever comes first: the handler's
// context is cancelled with cause ErrCancelled, the job is no longer
// extended, and its outcome is OutcomeCancelled. It acts and logs once per
// job.
func (w *Worker) jobCancelled(r *runningJob) {
	if !r.cancelled.CompareAndSwap(false, true) {
		return
	}
	r.lost.Store(true)
	r.cancel(ErrCancelled)
	w.log.l.Info("trafikey: job cancelled", "job", r.job.ID, "attempt", r.job.Attempt)
}
