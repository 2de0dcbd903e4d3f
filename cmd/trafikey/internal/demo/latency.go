package demo

import (
	"encoding/binary"
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// The demo's payload is the time the job was added, so a worker can tell
// each job's latency from the payload alone.

// stampLen is the payload size: a big-endian UnixNano.
const stampLen = 8

func stamp(t time.Time) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, stampLen), uint64(t.UnixNano()))
}

func stamped(payload []byte) (time.Time, bool) {
	if len(payload) != stampLen {
		return time.Time{}, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(payload))), true
}

// samples collects up to a fixed number of durations from many goroutines
// without a lock: each sample takes the next slot.
type samples struct {
	next atomic.Int64
	d    []time.Duration
}

func newSamples(n int) *samples { return &samples{d: make([]time.Duration, n)} }

func (s *samples) add(d time.Duration) {
	if i := s.next.Add(1) - 1; i < int64(len(s.d)) {
		s.d[i] = d
	}
}

// Percentiles are latency figures of one measure.
type Percentiles struct {
	N        int
	P50, P99 time.Duration
}

// percentiles sorts the samples taken (call once all adds are done).
func (s *samples) percentiles() Percentiles {
	n := min(int(s.next.Load()), len(s.d))
	d := s.d[:n]
	slices.Sort(d)
	return Percentiles{N: n, P50: quantile(d, 0.50), P99: quantile(d, 0.99)}
}

// quantile is the nearest-rank quantile of sorted d.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	rank := int(math.Ceil(q*float64(len(d)))) - 1
	return d[min(max(rank, 0), len(d)-1)]
}
