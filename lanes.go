package trafikey

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
)

// LaneInfo is what the queue holds of one lane.
type LaneInfo struct {
	// Name is the lane's name.
	Name string
	// Waiting counts its jobs ready to be claimed; Active its claimed ones.
	Waiting, Active int
	// Cap is the most of its jobs active at once; 0 is no cap.
	Cap int
	// Paused reports whether the lane is paused.
	Paused bool
}

// Lane is the handle on one lane of a queue (JobOptions.Lane): its cap,
// pausing it and reading it. It holds only the queue and the name, checked
// when a method is called.
type Lane struct {
	q    *Queue
	name string
}

// Lane returns the handle on lane name (1..128 bytes).
func (q *Queue) Lane(name string) Lane {
	if p := q.parts.Load(); p != nil {
		// a lane lives in one partition
		return Lane{p.keyedPartition(name), name}
	}
	return Lane{q, name}
}

// SetCap lets at most limit (1..1000000) jobs of the lane be active at once,
// across every worker; 0 removes the cap. A lane at its cap takes no turn
// until one of its jobs completes, fails or has its lease recovered. A cap
// below the jobs already active stops new claims until they drop below it.
func (l Lane) SetCap(ctx context.Context, limit int) error {
	q, lane := l.q, l.name
	if err := checkLane("set lane cap", lane); err != nil {
		return err
	}
	if limit < 0 || limit > protocol.MaxLaneCap {
		return invalid("set lane cap", "cap %d outside 0..%d", limit, protocol.MaxLaneCap)
	}
	_, err := q.callInt(ctx, protocol.LaneCap, lane, protocol.FormatInt(int64(limit)))
	return err
}

// Pause stops claims of the lane's jobs until Resume; other lanes, and
// jobs without a lane, go on. Jobs can still be added to it. Pausing a
// paused lane is a no-op.
func (l Lane) Pause(ctx context.Context) error {
	q, lane := l.q, l.name
	if err := checkLane("pause lane", lane); err != nil {
		return err
	}
	_, err := q.callInt(ctx, protocol.LanePause, lane)
	return err
}

// Resume lets workers claim the lane's jobs again, waking idle ones. Resuming
// a lane that is not paused is a no-op.
func (l Lane) Resume(ctx context.Context) error {
	q, lane := l.q, l.name
	if err := checkLane("resume lane", lane); err != nil {
		return err
	}
	_, err := q.callInt(ctx, protocol.LaneResume, lane)
	return err
}

// Info reads the lane's counts and settings; a lane never used reads as
// all zero.
func (l Lane) Info(ctx context.Context) (LaneInfo, error) {
	q, lane := l.q, l.name
	if err := checkLane("lane info", lane); err != nil {
		return LaneInfo{}, err
	}
	msg, err := q.call(ctx, protocol.Lane, lane)
	if err != nil {
		return LaneInfo{}, err
	}
	n, err := msg.AsIntSlice()
	if err != nil || len(n) != 4 {
		return LaneInfo{}, fmt.Errorf("trafikey: lane: unexpected reply %v", msg)
	}
	return LaneInfo{Name: lane, Waiting: int(n[0]), Active: int(n[1]), Cap: int(n[2]), Paused: n[3] == 1}, nil
}

// lanesPage is how many lanes one LANES call reads.
const lanesPage = 100

// Lanes lists the lanes that have waiting or active jobs, in byte order of
// their names, reading them from the server a page at a time as the loop
// goes on. A lane added or emptied meanwhile may or may not be seen. The
// first error ends the sequence.
func (q *Queue) Lanes(ctx context.Context) iter.Seq2[LaneInfo, error] {
	if q.parts.Load() != nil {
		return q.lanesParts(ctx)
	}
	return func(yield func(LaneInfo, error) bool) {
		after := ""
		for {
			page, err := q.lanesAfter(ctx, after, lanesPage)
			if err != nil {
				yield(LaneInfo{}, err)
				return
			}
			for _, l := range page {
				if !yield(l, nil) {
					return
				}
			}
			if len(page) < lanesPage {
				return
			}
			after = page[len(page)-1].Name
		}
	}
}

func (q *Queue) lanesAfter(ctx context.Context, after string, count int) ([]LaneInfo, error) {
	msg, err := q.call(ctx, protocol.Lanes, after, protocol.FormatInt(int64(count)))
	if err != nil {
		return nil, err
	}
	rows, err := msg.ToArray()
	if err != nil {
		return nil, fmt.Errorf("trafikey: lanes: unexpected reply %v", msg)
	}
	out := make([]LaneInfo, 0, len(rows))
	for _, r := range rows {
		f, err := r.ToArray()
		if err != nil || len(f) != 5 {
			return nil, fmt.Errorf("trafikey: lanes: unexpected reply %v", msg)
		}
		var l LaneInfo
		var n [4]int64
		l.Name, err = f[0].ToString()
		for i := range n {
			if err == nil {
				n[i], err = f[i+1].AsInt64()
			}
		}
		if err != nil {
			return nil, fmt.Errorf("trafikey: lanes: unexpected reply %v", msg)
		}
		l.Waiting, l.Active, l.Cap, l.Paused = int(n[0]), int(n[1]), int(n[2]), n[3] == 1
		out = append(out, l)
	}
	return out, nil
}

// SetRate lets workers claim at most limit (1..1000000) jobs of the queue per
// window (1ms..24h, whole milliseconds), across every worker. A claim over
// it is refused with an ErrRateLimited whose *Error gives the wait
// (RetryAfter), and a Worker waits that long
// without claiming meanwhile. The window slides: no span of window holds
// more than limit claims, however the claims fall (docs/PROTOCOL.md, "Rate
// limit"). A limit of 0 removes the rate limit (window is then not used).
func (a Admin) SetRate(ctx context.Context, limit int, window time.Duration) error {
	q := a.q
	if q.parts.Load() != nil {
		return q.setRateParts(ctx, limit, window)
	}
	if limit == 0 {
		_, err := q.callInt(ctx, protocol.Rate, "0", "0")
		return err
	}
	if limit < 1 || limit > protocol.MaxRateMax {
		return invalid("set rate", "limit %d outside 1..%d", limit, protocol.MaxRateMax)
	}
	ms := ceilMS(window)
	if window <= 0 || ms > protocol.MaxRateWindow {
		return invalid("set rate", "window %v outside 1ms..%dms", window, protocol.MaxRateWindow)
	}
	_, err := q.callInt(ctx, protocol.Rate, protocol.FormatInt(int64(limit)), protocol.FormatInt(ms))
	return err
}

func checkLane(op, lane string) error {
	if !protocol.ValidLaneName(lane) {
		return invalid(op, "lane name of %d bytes, want 1..%d", len(lane), protocol.MaxLaneName)
	}
	return nil
}
