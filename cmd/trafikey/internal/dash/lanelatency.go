package dash

import (
	"context"
	"sync"
	"time"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
	"github.com/trafikey/trafikey/internal/latency"
)

// laneHeads keeps, for each queue whose page is read, when the oldest
// waiting job of each lane the page shows was added (latency.Oldest),
// read again at most once per sample interval. The page reads its queue at
// every tick; however many pages of it are open, its lanes cost one read
// each per sample, and only the lanes with jobs waiting are read.
type laneHeads struct {
	every time.Duration

	mu      sync.Mutex
	byQueue map[string]*queueHeads
}

// queueHeads are one queue's lane heads.
type queueHeads struct {
	// used is when a page last asked for them; guarded by laneHeads.mu.
	used time.Time

	// mu is held while they are read: a page that asks meanwhile waits
	// and shares the read.
	mu sync.Mutex
	// at is when added was read; added holds, by lane, when its next job
	// was added (zero: none waited when read).
	at    time.Time
	added map[string]time.Time
}

// headReads bounds the lane heads of one queue read at once.
const headReads = 16

// forgetHeads is how long the heads of a queue whose page no one reads are
// kept.
const forgetHeads = time.Minute

func newLaneHeads(every time.Duration) *laneHeads {
	return &laneHeads{every: every, byQueue: map[string]*queueHeads{}}
}

// latencies returns, for each of lanes of q in their order, how long its
// oldest waiting job has waited since it was added, in ms: 0 when none
// waits. The heads read less than a sample interval ago are used again;
// the others are read (latency.Oldest: one JOBS row per priority present).
func (h *laneHeads) latencies(ctx context.Context, q *trafikey.Queue, lanes []admin.LaneView) ([]int64, error) {
	now := time.Now()
	h.mu.Lock()
	for name, e := range h.byQueue {
		if now.Sub(e.used) > forgetHeads {
			delete(h.byQueue, name)
		}
	}
	e := h.byQueue[q.Name()]
	if e == nil {
		e = &queueHeads{}
		h.byQueue[q.Name()] = e
	}
	e.used = now
	h.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	fresh := e.added != nil && time.Since(e.at) < h.every
	var read []string
	for _, l := range lanes {
		if _, ok := e.added[l.Name]; l.Waiting > 0 && !(fresh && ok) {
			read = append(read, l.Name)
		}
	}
	if len(read) > 0 {
		at := time.Now()
		heads := make([]time.Time, len(read))
		errs := make([]error, len(read))
		var wg sync.WaitGroup
		slots := make(chan struct{}, headReads)
		for i, lane := range read {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				heads[i], errs[i] = latency.Oldest(ctx, q, lane)
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		if !fresh {
			// The lanes shown now replace those read before.
			e.at, e.added = at, make(map[string]time.Time, len(read))
		}
		for i, lane := range read {
			e.added[lane] = heads[i]
		}
	}
	now = time.Now()
	out := make([]int64, len(lanes))
	for i, l := range lanes {
		if l.Waiting > 0 {
			out[i] = latency.Since(e.added[l.Name], now).Milliseconds()
		}
	}
	return out, nil
}
