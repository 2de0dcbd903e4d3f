package dash

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
)

// The live updates: every queue with job events on is watched with
// Queue.Events, and an event makes the dashboard read that queue's STATS
// again at once (at most every liveEvery) and push the new counts, with the
// events, to every open page over server-sent events (GET /api/live). The
// sampler's ticks are pushed too, so a page needs no polling while its
// stream is up; a queue without events changes on the pages at each tick.

// liveEvery bounds how often a watched queue's STATS is read again: a busy
// queue publishes thousands of events a second, and its counts on a page
// need not move faster than a person reads them.
const liveEvery = 200 * time.Millisecond

// liveEventsKept is the most events of one queue a push carries; the
// others are counted.
const liveEventsKept = 20

// liveBuffer is how many pushes a slow page may fall behind by; past it
// its pushes are dropped until it catches up, and the next tick shows the
// counts again.
const liveBuffer = 64

// liveHeartbeat keeps a quiet stream's connection from being closed by a
// proxy.
const liveHeartbeat = 15 * time.Second

// eventView is one job event, as a push carries it.
type eventView struct {
	ID    string    `json:"id"`
	Name  string    `json:"name"`
	Job   string    `json:"job"`
	At    time.Time `json:"at"`
	Error string    `json:"error,omitempty"`
	Value string    `json:"value,omitempty"`
}

// queuePush is a "queue" push: a watched queue's counts after events.
type queuePush struct {
	Queue  overviewRow `json:"queue"`
	Events []eventView `json:"events"`
	// More counts the events since the last push that Events leaves out.
	More int `json:"more"`
}

// tickPush is a "tick" push: the sampler read every queue.
type tickPush struct {
	SampledAt time.Time `json:"sampled_at"`
	Charted   bool      `json:"charted"`
}

// hub fans pushes out to the open streams.
type hub struct {
	mu   sync.Mutex
	subs map[chan []byte]struct{}
}

func (h *hub) subscribe() chan []byte {
	ch := make(chan []byte, liveBuffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[chan []byte]struct{}{}
	}
	h.subs[ch] = struct{}{}
	return ch
}

func (h *hub) unsubscribe(ch chan []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, ch)
}

// publish sends one server-sent event to every stream that has room.
func (h *hub) publish(event string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	frame := fmt.Appendf(nil, "event: %s\ndata: %s\n\n", event, data)
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- frame:
		default:
		}
	}
}

// watcher is one queue's Events subscription, on handle q.
type watcher struct {
	q      *trafikey.Queue
	cancel context.CancelFunc
}

// live watches the queues with events on, up to max of them.
type live struct {
	hub     *hub
	sampler *sampler
	max     int
	log     *slog.Logger

	mu       sync.Mutex
	base     context.Context // the dashboard's run; nil before it
	watching map[string]*watcher
	pending  map[string][]eventView // events not pushed yet, by queue
	more     map[string]int
	wake     chan struct{}
	wg       sync.WaitGroup
}

func newLive(h *hub, s *sampler, max int, log *slog.Logger) *live {
	return &live{
		hub: h, sampler: s, max: max, log: log,
		watching: map[string]*watcher{}, pending: map[string][]eventView{}, more: map[string]int{},
		wake: make(chan struct{}, 1),
	}
}

// watched reports whether queue is watched.
func (l *live) watched(queue string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.watching[queue]
	return ok
}

// discovered reads which of queues have events on, and watches them.
func (l *live) discovered(ctx context.Context, queues []*trafikey.Queue) {
	names := make([]string, len(queues))
	for i, q := range queues {
		names[i] = q.Name()
	}
	on, err := admin.EventsOn(ctx, l.sampler.cat.Client(), names)
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("dash: read which queues have events on", "err", err)
		}
		return
	}
	l.sync(queues, on)
}

// sync watches the queues of on (by name: events on) not yet watched, up
// to max, and stops watching the others.
func (l *live) sync(queues []*trafikey.Queue, on []bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.base == nil || l.base.Err() != nil {
		return
	}
	// A queue opened again (its partitions grew) is watched through its
	// new handle, which reads the new partitions' events too.
	want := map[string]*trafikey.Queue{}
	for i, q := range queues {
		if on[i] {
			want[q.Name()] = q
		}
	}
	for name, w := range l.watching {
		if want[name] != w.q {
			w.cancel()
			delete(l.watching, name)
		}
	}
	for i, q := range queues {
		if !on[i] || l.watching[q.Name()] != nil || len(l.watching) >= l.max {
			continue
		}
		wctx, cancel := context.WithCancel(l.base)
		w := &watcher{q: q, cancel: cancel}
		l.watching[q.Name()] = w
		l.wg.Go(func() { l.watch(wctx, q, w) })
	}
}

// watch reads q's events until ctx ends or the stream fails.
func (l *live) watch(ctx context.Context, q *trafikey.Queue, w *watcher) {
	defer func() {
		l.mu.Lock()
		if l.watching[q.Name()] == w {
			delete(l.watching, q.Name()) // the next discovery tries again
		}
		l.mu.Unlock()
	}()
	for ev, err := range q.Events(ctx, "") {
		if err != nil {
			l.log.Warn("dash: queue events", "queue", q.Name(), "err", err)
			return
		}
		l.mu.Lock()
		kept := l.pending[q.Name()]
		if len(kept) == liveEventsKept {
			kept = append(kept[:0], kept[1:]...)
			l.more[q.Name()]++
		}
		l.pending[q.Name()] = append(kept, eventView{
			ID: ev.ID, Name: ev.Name, Job: ev.JobID, At: ev.Time,
			Error: ev.Fields["error"], Value: ev.Fields["value"],
		})
		l.mu.Unlock()
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// run pushes the watched queues' changes until ctx ends: on a wake, it
// reads STATS of every queue with events not pushed yet, and pushes them.
// start lets sync watch queues for as long as ctx lasts; it comes before
// the first discovery.
func (l *live) start(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.base = ctx
}

func (l *live) run(ctx context.Context) {
	defer l.wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		}
		l.mu.Lock()
		batch, more := l.pending, l.more
		l.pending, l.more = map[string][]eventView{}, map[string]int{}
		l.mu.Unlock()
		l.flush(ctx, batch, more)
		select {
		case <-ctx.Done():
			return
		case <-time.After(liveEvery):
		}
	}
}

func (l *live) flush(ctx context.Context, batch map[string][]eventView, more map[string]int) {
	ctx, cancel := context.WithTimeout(ctx, l.sampler.timeout)
	defer cancel()
	var wg sync.WaitGroup
	for name, events := range batch {
		q, err := l.sampler.cat.Queue(ctx, name)
		if err != nil {
			continue // gone since
		}
		wg.Go(func() {
			smp := sample{at: time.Now(), stats: admin.QueueView{Name: name}}
			st, err := q.Stats(ctx)
			if err != nil {
				smp.err = err.Error()
			} else {
				smp.stats = l.sampler.view(ctx, name, st)
			}
			row, ok := l.sampler.refresh(smp)
			if !ok {
				return
			}
			row.Live = true
			l.hub.publish("queue", queuePush{Queue: row, Events: events, More: more[name]})
		})
	}
	wg.Wait()
}

// stream is GET /api/live: the pushes, as server-sent events, until the
// page goes or the dashboard stops.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no") // a proxy that buffers would hold the pushes back
	ch := s.hub.subscribe()
	defer s.hub.unsubscribe(ch)
	w.WriteHeader(http.StatusOK)
	// retry: how long the browser waits before it connects again.
	if _, err := fmt.Fprintf(w, "retry: 2000\n\nevent: hello\ndata: {}\n\n"); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	beat := time.NewTicker(liveHeartbeat)
	defer beat.Stop()
	for {
		var frame []byte
		select {
		case <-r.Context().Done():
			return
		case <-s.stopped:
			return
		case <-beat.C:
			frame = []byte(": beat\n\n")
		case frame = <-ch:
		}
		if _, err := w.Write(frame); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}
