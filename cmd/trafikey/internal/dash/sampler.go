package dash

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
)

// sample is what one tick read of one queue.
type sample struct {
	at    time.Time
	stats admin.QueueView
	err   string
	// stale reports that stats are from an earlier read (this one
	// failed); with err and not stale, stats were never read.
	stale bool
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
	// cat and client are set once, before run, when the server is
	// reached (setCatalog).
	cat           *admin.Catalog
	client        valkey.Client
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
	// slots are the nodes serving the hash slots, for the partitions of
	// partitioned queues: read at each discovery that found one, or at
	// the first view that needs them; nil before.
	slots *admin.Slots
	// down is why the server is unreachable ("" when it is not), since
	// when; never is set until it was first reached.
	down      string
	downSince time.Time
	never     bool
}

func newSampler(o Options, log *slog.Logger) *sampler {
	return &sampler{
		never: true, every: o.SampleEvery, discoverEvery: o.DiscoverEvery, keep: o.History,
		timeout: o.Timeout, log: log, byQueue: map[string]*history{}, latest: map[string]sample{},
	}
}

// setCatalog gives the sampler the server's catalog and client, before
// run.
func (s *sampler) setCatalog(cat *admin.Catalog, client valkey.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cat, s.client = cat, client
}

// unreachable records that the server could not be reached, and tells
// the pages.
func (s *sampler) unreachable(err error) {
	now := time.Now()
	s.mu.Lock()
	if s.down == "" {
		s.downSince = now
		s.log.Warn("dash: server unreachable", "err", err)
	}
	s.down, s.lastTick = err.Error(), now
	s.mu.Unlock()
	if s.onTick != nil {
		s.onTick(now, false)
	}
}

// reached records that the server answered.
func (s *sampler) reached() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down != "" {
		s.log.Info("dash: server reachable again")
	}
	s.down, s.never = "", false
}

// isReply reports whether err is the server's error reply: it answered.
func isReply(err error) bool {
	_, ok := valkey.IsValkeyErr(err)
	return ok
}

// rediscover makes the next tick find the queues again.
func (s *sampler) rediscover() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.discovered = time.Time{}
}

// downErr is why the server is unreachable; "" when it is not.
func (s *sampler) downErr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
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
	// One PING first: an unreachable server is shown as such, with the
	// queues' last counts kept, not as a tick of failed reads. An error
	// reply (a user without PING) is an answer.
	if err := s.client.Do(ctx, s.client.B().Ping().Build()).Error(); err != nil && !isReply(err) {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return // stopping
		}
		s.unreachable(err)
		return
	}
	s.reached()
	if due {
		found, layouts, err := s.cat.Queues(ctx)
		if err == nil && slices.ContainsFunc(layouts, func(f admin.Found) bool { return f.Partitions != nil }) {
			s.readSlots(ctx)
		}
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
			samples[i].stats = s.view(ctx, q.Name(), st)
		})
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	live := make(map[string]bool, len(samples))
	for _, smp := range samples {
		name := smp.stats.Name
		live[name] = true
		if prev, ok := s.latest[name]; ok && smp.err != "" {
			// A failed read keeps the last counts read, marked by the
			// error: never zeros that were not read.
			smp.stats, smp.stale = prev.stats, true
		}
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

// readSlots reads which node serves each hash slot, keeping the last
// read when it fails (the next discovery tries again).
func (s *sampler) readSlots(ctx context.Context) *admin.Slots {
	slots, err := admin.ReadSlots(ctx, s.client)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("dash: read the cluster's slots", "err", err)
		}
		return s.slots
	}
	s.slots = slots
	return slots
}

// view is the JSON form of queue name's stats st, with the nodes of a
// partitioned queue's partitions.
func (s *sampler) view(ctx context.Context, name string, st trafikey.Stats) admin.QueueView {
	v := admin.ViewOfStats(name, st)
	if v.Partitions == 0 {
		return v
	}
	s.mu.Lock()
	slots := s.slots
	s.mu.Unlock()
	if slots == nil {
		slots = s.readSlots(ctx)
	}
	if slots != nil {
		slots.Place(&v)
	}
	return v
}

// refresh keeps smp as its queue's last read (uncharted), and returns the
// queue's overview row; false when the queue is not known (any more).
func (s *sampler) refresh(smp sample) (overviewRow, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := smp.stats.Name
	prev, ok := s.latest[name]
	if !ok {
		return overviewRow{}, false
	}
	if smp.err != "" {
		smp.stats, smp.stale = prev.stats, prev.err == "" || prev.stale
	}
	s.latest[name] = smp
	return s.rowOf(smp), true
}

// rowOf is the overview row of a queue's last read; s.mu is held.
func (s *sampler) rowOf(last sample) overviewRow {
	row := overviewRow{QueueView: last.stats, Error: last.err, Unread: last.err != "" && !last.stale}
	if h := s.byQueue[last.stats.Name]; h != nil && len(h.points) > 1 {
		pts := h.ordered()
		r := rateBetween(pts[len(pts)-2], pts[len(pts)-1])
		row.CompletedPerSec, row.FailedPerSec = r.CompletedPerSec, r.FailedPerSec
		row.Windows = windowsOf(pts)
	}
	if s.isLive != nil {
		row.Live = s.isLive(last.stats.Name)
	}
	return row
}

// windows returns a queue's failure-rate windows from its kept samples.
func (s *sampler) windows(queue string) []window {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.byQueue[queue]; h != nil {
		return windowsOf(h.ordered())
	}
	return nil
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
	// Unread reports that the counts were never read (Error says why):
	// they are not zeros. With Error and not Unread, the counts are the
	// last ones read.
	Unread bool `json:"unread,omitempty"`
	// Windows are the completions and failures over the last minute and
	// the last 5 minutes, from the kept samples.
	Windows []window `json:"windows,omitempty"`
}

// overview is GET /api/queues.
type overview struct {
	SampledAt time.Time `json:"sampled_at"`
	SampleMS  int64     `json:"sample_ms"`
	Error     string    `json:"error,omitempty"`
	// Unreachable is why the server cannot be reached, since
	// UnreachableSince; empty when it answers. Connected is false until
	// the dashboard first reached it. While it is unreachable the queues
	// keep their last counts read.
	Unreachable      string        `json:"unreachable,omitempty"`
	UnreachableSince *time.Time    `json:"unreachable_since,omitempty"`
	Connected        bool          `json:"connected"`
	Queues           []overviewRow `json:"queues"`
	// Windows sum the queues' windows.
	Windows []window `json:"windows"`
}

func (s *sampler) overview() overview {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := overview{SampledAt: s.lastTick, SampleMS: s.every.Milliseconds(), Error: s.listErr, Queues: []overviewRow{},
		Unreachable: s.down, Connected: !s.never}
	if s.down != "" {
		since := s.downSince.UTC()
		out.UnreachableSince = &since
	}
	var windows [][]window
	for _, q := range s.queues {
		last, ok := s.latest[q.Name()]
		if !ok {
			continue
		}
		row := s.rowOf(last)
		// A partitioned queue's breakdown is its page's.
		row.PartitionList, row.Shards = nil, nil
		out.Queues = append(out.Queues, row)
		windows = append(windows, row.Windows)
	}
	out.Windows = sumWindows(windows)
	return out
}

// rateWindows are the spans the failure rate is shown over.
var rateWindows = []time.Duration{time.Minute, 5 * time.Minute}

// window is what a queue did over one span of its kept samples: its
// completions and failed attempts, and their rates.
type window struct {
	// Seconds is the span asked for; SpanMS the one the samples cover
	// (shorter while the dashboard has run less long, or keeps fewer).
	Seconds int   `json:"seconds"`
	SpanMS  int64 `json:"span_ms"`
	// Completed and Failed count the completions and the failed attempts
	// (retried or dead-lettered) in the span.
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	// FailureRate is Failed over Completed plus Failed, 0..1; null when
	// nothing finished in the span.
	FailureRate *float64 `json:"failure_rate"`
}

// windowsOf computes rateWindows over pts (oldest first): each from the
// oldest readable sample in the span to the latest readable one. A counter
// that went down (the queue deleted and made again) counts from 0.
func windowsOf(pts []tally) []window {
	end := -1
	for i := len(pts) - 1; i >= 0; i-- {
		if !pts[i].failedRead {
			end = i
			break
		}
	}
	if end < 1 {
		return nil
	}
	out := make([]window, 0, len(rateWindows))
	for _, span := range rateWindows {
		from := pts[end].at.Add(-span)
		start := -1
		for i := 0; i < end; i++ {
			if !pts[i].failedRead && !pts[i].at.Before(from) {
				start = i
				break
			}
		}
		w := window{Seconds: int(span.Seconds())}
		if start >= 0 {
			a, b := pts[start], pts[end]
			w.SpanMS = b.at.Sub(a.at).Milliseconds()
			w.Completed, w.Failed = grown(a.completed, b.completed), grown(a.failed, b.failed)
		}
		w.FailureRate = failureRate(w.Completed, w.Failed)
		out = append(out, w)
	}
	return out
}

func grown(a, b int) int {
	if b < a {
		return b
	}
	return b - a
}

func failureRate(completed, failed int) *float64 {
	if completed+failed == 0 {
		return nil
	}
	r := float64(failed) / float64(completed+failed)
	return &r
}

// sumWindows adds up the queues' windows, span by span.
func sumWindows(each [][]window) []window {
	out := make([]window, len(rateWindows))
	for i, span := range rateWindows {
		out[i].Seconds = int(span.Seconds())
	}
	for _, ws := range each {
		for i, w := range ws {
			out[i].Completed += w.Completed
			out[i].Failed += w.Failed
			out[i].SpanMS = max(out[i].SpanMS, w.SpanMS)
		}
	}
	for i := range out {
		out[i].FailureRate = failureRate(out[i].Completed, out[i].Failed)
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
