package verdict

import "github.com/trafikey/trafikey/internal/protocol"

// StatsRead is a read STATS's verdict asks for.
type StatsRead uint8

// STATS's reads.
const (
	// StatsNone: the verdict is final.
	StatsNone StatsRead = iota
	// StatsAll: one batch, GET version (the fence), ZCARD of pending,
	// delayed, active and dead, HMGET meta <StatsMetaFields…>, HMGET stats
	// <protocol.StatsCounters…>, then ZCARD lanes after its ACL check (read
	// access; a denial is this read's error, and it is not read).
	StatsAll
)

// StatsSets are the sets STATS counts, in reply order.
var StatsSets = []string{protocol.SuffixPending, protocol.SuffixDelayed, protocol.SuffixActive, protocol.SuffixDead}

// StatsSeen is what STATS has read.
type StatsSeen struct {
	Version  Reply[Field]
	Sets     [4]Reply[int64]
	Meta     Reply[[4]Field]
	Counters Reply[[]Field]
	Lanes    Reply[int64]
	// Waiting and Retained are ZCARD waiting and ZCARD completed, read
	// after lanes (each checked against the caller's ACL first, read).
	Waiting  Reply[int64]
	Retained Reply[int64]
}

// StatsMetaFields are the meta fields STATS reads, in order.
var StatsMetaFields = [...]string{protocol.MetaPaused, protocol.MetaLaneWait, protocol.MetaRateMax, protocol.MetaRateWindow}

// StatsVerdict is STATS's reply: the sizes of StatsSets, the pause flag
// (0 or 1), and the counters as stored ("0" when absent), named
// "total_<counter>".
type StatsVerdict struct {
	Sets     [4]int64
	Paused   int64
	Counters [10][]byte // protocol.StatsCounters, in order
	// Extras are protocol.StatsExtras: the lanes with jobs, the jobs
	// waiting in lanes, the rate's max and window (0 when unset), the
	// parents waiting and the retained completed jobs.
	Extras [6]int64
}

// StatsStep is STATS's verdict, a refusal, or the next read it needs.
type StatsStep struct {
	Need    StatsRead
	Err     error
	Verdict StatsVerdict
}

var zero = []byte("0")

// Stats decides EMQ.STATS.
func Stats(s *StatsSeen) StatsStep {
	if !s.Version.Made {
		return StatsStep{Need: StatsAll}
	}
	if err := Fence(s.Version); err != nil {
		return StatsStep{Err: err}
	}
	var v StatsVerdict
	for i := range s.Sets {
		if s.Sets[i].Err != nil {
			return StatsStep{Err: s.Sets[i].Err}
		}
		v.Sets[i] = s.Sets[i].Val
	}
	if s.Meta.Err != nil {
		return StatsStep{Err: s.Meta.Err}
	}
	if s.Meta.Val[0].Is("1") {
		v.Paused = 1
	}
	if s.Counters.Err != nil {
		return StatsStep{Err: s.Counters.Err}
	}
	for i, f := range s.Counters.Val[:len(v.Counters)] {
		v.Counters[i] = zero
		if f.Set {
			v.Counters[i] = f.Bytes
		}
	}
	if s.Lanes.Err != nil {
		return StatsStep{Err: s.Lanes.Err}
	}
	if s.Waiting.Err != nil {
		return StatsStep{Err: s.Waiting.Err}
	}
	if s.Retained.Err != nil {
		return StatsStep{Err: s.Retained.Err}
	}
	v.Extras = [6]int64{s.Lanes.Val, rowInt(s.Meta.Val[1]), rowInt(s.Meta.Val[2]), rowInt(s.Meta.Val[3]), s.Waiting.Val, s.Retained.Val}
	return StatsStep{Verdict: v}
}
