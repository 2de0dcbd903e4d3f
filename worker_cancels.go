package trafikey

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Cancel notices (and, for a partition, signal announcements: channels):
// CANCEL of an active job publishes "<id> <token>" on the queue's sharded
// channel emq:{q}:cancels (docs/PROTOCOL.md, CANCEL). A
// worker keeps one subscription per queue, on the client's connection to
// the queue's slot (valkey-go's Receive; RESP3 carries the messages on the
// connection the commands use), and cancels the handler of a matching job
// at once. The heartbeat stays the fallback: a notice sent while the
// subscription was down, or not sent (the canceller's ACL may not publish
// it), is learnt from the job's next EXTEND.
//
// The workers of a queue handle share one server-side subscription: the
// client sends SSUBSCRIBE and SUNSUBSCRIBE of a channel on one connection
// per node, and a server's sunsubscribe (the slot moved, or a SUNSUBSCRIBE
// on the connection) ends every Receive of the channel there. Ending a
// Receive (its context) sends nothing, so the handle counts its watchers,
// and the last one to stop sends SUNSUBSCRIBE; until then the others keep
// the subscription.

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
// queue's cancels subscription until ctx ends, and ends it then unless
// another worker of the queue handle still runs (cancelWatchers). The
// channel it returns is closed once every queue's first subscription was
// confirmed or failed, so Run claims its first jobs with the subscriptions
// in place.
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
// loss, until ctx ends; tried is called once, after the first attempt. It
// counts as one of q's watchers while it runs (cancelWatchers).
func (w *Worker) watchQueueCancels(ctx context.Context, q *Queue, tried func()) {
	q.watchers.join()
	defer q.watchers.leave(ctx, q, w.log)
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
				if s.Channel == q.keys.Signal {
					// a push made while the channel was not subscribed
					// was not seen: the partition is tried once
					w.readied(q)
				}
			}
		})
		cmd := q.client.B().Ssubscribe().Channel(q.channels()...).Build()
		err := q.client.Receive(hooked, cmd, func(m valkey.PubSubMessage) {
			if m.Channel == q.keys.Signal {
				w.readied(q)
				return
			}
			w.noticed(q, m.Message)
		})
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
			w.log.warn("trafikey: cancel notices: subscription lost; cancelled jobs are seen at their heartbeat until it is back"+q.signalsLost(), "queue", q.name, "err", err)
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

// channels are the sharded channels a worker subscribes to for q: its
// cancels, and for a partition its signal too (docs/PROTOCOL.md, keys), on
// which the verbs announce what they push to the signal list. A worker of
// a partitioned queue waits for these announcements when idle, rather than
// in a BLPOP per partition: the client carries every channel of a node on
// one connection, however many partitions the node holds. Both channels
// are in q's slot, so one SSUBSCRIBE takes them.
func (q *Queue) channels() []string {
	if q.of != nil {
		return []string{q.keys.Cancels(), q.keys.Signal}
	}
	return []string{q.keys.Cancels()}
}

// readied is told that partition q has jobs now (an announcement on its
// signal channel): an idle wait ends, and the claims try q.
func (w *Worker) readied(q *Queue) {
	w.parts.readied(q)
	w.waits.announced()
}

// signalsLost is what a lost subscription of q also costs, for its log:
// a partition's idle waits then find its jobs by the sweep alone.
func (q *Queue) signalsLost() string {
	if q.of == nil {
		return ""
	}
	return "; an idle worker finds the partition's jobs only by its sweep until then"
}

// cancelWatchers counts the watchers of a queue handle's cancels channel,
// the workers' loops that subscribe to it through the handle's client.
type cancelWatchers struct {
	// mu is held by a watcher joining and by the last one leaving until its
	// SUNSUBSCRIBE is answered: the server's sunsubscribe, which would end
	// a joiner's Receive as well, is then past before it subscribes.
	mu sync.Mutex
	n  int
}

// unsubscribeTimeout bounds the SUNSUBSCRIBE of a stopping worker's last
// watcher; Run waits for it.
const unsubscribeTimeout = time.Second

func (c *cancelWatchers) join() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

// leave ends a watcher of q's channel; the last one unsubscribes the
// connection that carried the channel. A SUNSUBSCRIBE that fails leaves
// the connection subscribed (valkey-go drops the messages nobody
// receives) unless the connection was lost, which ended the subscription.
func (c *cancelWatchers) leave(ctx context.Context, q *Queue, log *throttledLog) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n--; c.n > 0 {
		return
	}
	bye, cancel := context.WithTimeout(context.WithoutCancel(ctx), unsubscribeTimeout)
	defer cancel()
	// SSUBSCRIBE and SUNSUBSCRIBE go on the same connection of the node
	// the client maps the slot to; a MOVED is followed to the new owner.
	err := q.client.Do(bye, q.client.B().Sunsubscribe().Channel(q.channels()...).Build()).Error()
	if ve, ok := valkey.IsValkeyErr(err); ok && strings.HasPrefix(ve.Error(), "NOSUB") {
		// the connection holds no subscription any more: another handle
		// on the same channel (a handle partitioned while it ran and its
		// partition 0) left first
		err = nil
	}
	if err != nil && !errors.Is(err, valkey.ErrClosing) {
		log.warn("trafikey: cancel notices: unsubscribing failed", "queue", q.name, "err", err)
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
