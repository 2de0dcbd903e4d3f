package dash

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
)

// sample is what one tick read of one queue.
type sample struct {
	at    time.Time
	stats admin.QueueView
	err   string
}

// tally is what a chart keeps of a sample: the counters it takes rates of.
type tally struct {
	at                       time.Time
	completed, failed, added int
	failedRead               bool
}

func tallyOf(s sample) tally {
	t := s.stats.Totals
	return tally{at: s.at, completed: t.Completed, failed: t.Failed, added: t.Added, failedRead: s.err != ""}
}

// history is a queue's tallies, a ring of at most keep.
type history struct {
	points []tally
	next   int
	full   bool
}

func (h *history) add(s tally, keep int) {
	if len(h.points) < keep {
		h.points = append(h.points, s)
		return
	}
	h.points[h.next] = s
	h.next = (h.next + 1) % keep
	h.full = true
}

// ordered returns the tallies oldest first.
func (h *history) ordered() []tally {
	if !h.full {
		return append([]tally(nil), h.points...)
	}
	return append(append([]tally(nil), h.points[h.next:]...), h.points[:h.next]...)
}

// sampler reads every queue's STATS on a timer and keeps the last samples
// of each, for the overview and the charts. It finds the queues again
// every discoverEvery.
type sampler struct {
	cat           *admin.Catalog
	every         time.Duration
	discoverEvery time.Duration
	keep          int
	timeout       time.Duration
	log           *slog.Logger
	// onDiscover, when set, is told the queues of each discovery;
	// onTick, when set, is told of each tick's end.
	onDiscover func(ctx context.Context, queues []*trafikey.Queue)
	onTick     func(at time.Time, charted bool)
	// isLive, when set, tells which queues are watched for events.
	isLive func(queue string) bool

	mu         sync.Mutex
	queues     []*trafikey.Queue
	discovered time.Time
	listErr    string
	byQueue    map[string]*history
	latest     map[string]sample // the last read of each queue, charted or not
	lastTick   time.Time
}

func newSampler(cat *admin.Catalog, o Options, log *slog.Logger) *sampler {
	return &sampler{
		cat: cat, every: o.SampleEvery, discoverEvery: o.DiscoverEvery, keep: o.History,
		timeout: o.Timeout, log: log, byQueue: map[string]*history{}, latest: map[string]sample{},
	}
}

// run samples until ctx ends.
func (s *sampler) run(ctx context.Context) {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		s.tick(ctx, true)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tick reads every queue once, finding the queues again when the last
// discovery is older than discoverEvery. A charted tick (the timer's) adds
// its reads to the charts; an uncharted one (after an action) only
// refreshes the counts, so that the charts' steps stay even.
func (s *sampler) tick(ctx context.Context, charted bool) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	now := time.Now()
	s.mu.Lock()
	queues, due := s.queues, now.Sub(s.discovered) >= s.discoverEvery
	s.mu.Unlock()
	if due {
		found, err := s.cat.Queues(ctx)
		s.mu.Lock()
		switch {
		case err != nil && ctx.Err() != nil:
			// Stopping, or the tick ran out of time: the next one tries again.
		case err != nil:
			s.listErr = err.Error()
			s.log.Warn("dash: find queues", "err", err)
		default:
			s.listErr, s.queues, s.discovered, queues = "", found, now, found
		}
		s.mu.Unlock()
		if err == nil && s.onDiscover != nil {
			s.onDiscover(ctx, found)
		}
	}
	samples := make([]sample, len(queues))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 16)
	for i, q := range queues {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			samples[i] = sample{at: now, stats: admin.QueueView{Name: q.Name()}}
			st, err := q.Stats(ctx)
			if err != nil {
				samples[i].err = err.Error()
				return
			}
			samples[i].stats = admin.ViewOfStats(q.Name(), st)
		})
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	live := make(map[string]bool, len(samples))
	for _, smp := range samples {
		name := smp.stats.Name
		live[name] = true
		s.latest[name] = smp
		if !charted {
			continue
		}
		h := s.byQueue[name]
		if h == nil {
			h = &history{}
			s.byQueue[name] = h
		}
		h.add(tallyOf(smp), s.keep)
	}
	for name := range s.latest {
		if !live[name] {
			delete(s.latest, name)
			delete(s.byQueue, name)
		}
	}
	s.lastTick = now
	if s.onTick != nil {
		s.onTick(now, charted)
	}
}

// refresh keeps smp as its queue's last read (uncharted), and returns the
// queue's overview row; false when the queue is not known (any more).
func (s *sampler) refresh(smp sample) (overviewRow, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := smp.stats.Name
	if _, ok := s.latest[name]; !ok {
		return overviewRow{}, false
	}
	s.latest[name] = smp
	return s.rowOf(smp), true
}

// rowOf is the overview row of a queue's last read; s.mu is held.
func (s *sampler) rowOf(last sample) overviewRow {
	row := overviewRow{QueueView: last.stats, Error: last.err}
	if h := s.byQueue[last.stats.Name]; h != nil && len(h.points) > 1 {
		pts := h.ordered()
		r := rateBetween(pts[len(pts)-2], pts[len(pts)-1])
		row.CompletedPerSec, row.FailedPerSec = r.CompletedPerSec, r.FailedPerSec
	}
	if s.isLive != nil {
		row.Live = s.isLive(last.stats.Name)
	}
	return row
}

// known returns the queues of the last discovery.
func (s *sampler) known(context.Context) ([]*trafikey.Queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queues, nil
}

// overviewRow is one queue of the overview: its last sample and its rates
// over the last two.
type overviewRow struct {
	admin.QueueView
	Error string `json:"error,omitempty"`
	// CompletedPerSec and FailedPerSec are over the last two samples.
	CompletedPerSec float64 `json:"completed_per_sec"`
	FailedPerSec    float64 `json:"failed_per_sec"`
	// Live reports that the queue's events are watched: its counts change
	// on the pages as its jobs do, not only at each sample.
	Live bool `json:"live"`
}

// overview is GET /api/queues.
type overview struct {
	SampledAt time.Time     `json:"sampled_at"`
	SampleMS  int64         `json:"sample_ms"`
	Error     string        `json:"error,omitempty"`
	Queues    []overviewRow `json:"queues"`
}

func (s *sampler) overview() overview {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := overview{SampledAt: s.lastTick, SampleMS: s.every.Milliseconds(), Error: s.listErr, Queues: []overviewRow{}}
	for _, q := range s.queues {
		last, ok := s.latest[q.Name()]
		if !ok {
			continue
		}
		out.Queues = append(out.Queues, s.rowOf(last))
	}
	return out
}

// point is one step of a chart: rates between two samples, at the later.
type point struct {
	At              time.Time `json:"at"`
	CompletedPerSec float64   `json:"completed_per_sec"`
	FailedPerSec    float64   `json:"failed_per_sec"`
	AddedPerSec     float64   `json:"added_per_sec"`
}

func rateBetween(a, b tally) point {
	dt := b.at.Sub(a.at).Seconds()
	p := point{At: b.at}
	if dt <= 0 || a.failedRead || b.failedRead {
		return p
	}
	per := func(x, y int) float64 {
		if y < x {
			return 0 // the queue was deleted and made again
		}
		return float64(y-x) / dt
	}
	p.CompletedPerSec = per(a.completed, b.completed)
	p.FailedPerSec = per(a.failed, b.failed)
	p.AddedPerSec = per(a.added, b.added)
	return p
}

// series is GET /api/series: the rates over the kept samples of one queue,
// or of all of them summed when queue is "".
type series struct {
	Queue    string  `json:"queue,omitempty"`
	SampleMS int64   `json:"sample_ms"`
	Points   []point `json:"points"`
}

func (s *sampler) series(queue string) series {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := series{Queue: queue, SampleMS: s.every.Milliseconds(), Points: []point{}}
	if queue != "" {
		if h := s.byQueue[queue]; h != nil {
			out.Points = rates(h.ordered())
		}
		return out
	}
	// Sum by tick: every queue sampled in one tick shares its time.
	sum := map[time.Time]*point{}
	var order []time.Time
	for _, h := range s.byQueue {
		for _, p := range rates(h.ordered()) {
			acc := sum[p.At]
			if acc == nil {
				acc = &point{At: p.At}
				sum[p.At] = acc
				order = append(order, p.At)
			}
			acc.CompletedPerSec += p.CompletedPerSec
			acc.FailedPerSec += p.FailedPerSec
			acc.AddedPerSec += p.AddedPerSec
		}
	}
	slices.SortFunc(order, time.Time.Compare)
	for _, at := range order {
		out.Points = append(out.Points, *sum[at])
	}
	return out
}

func rates(pts []tally) []point {
	out := make([]point, 0, len(pts))
	for i := 1; i < len(pts); i++ {
		out = append(out, rateBetween(pts[i-1], pts[i]))
	}
	return out
}
