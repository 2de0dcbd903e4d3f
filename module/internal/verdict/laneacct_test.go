package verdict

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

func TestLaneName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    Field
		want string
		ok   bool
	}{
		{Str("a"), "a", true},
		{Str("\x00{x}"), "\x00{x}", true},
		{Str(strings.Repeat("l", protocol.MaxLaneName)), strings.Repeat("l", protocol.MaxLaneName), true},
		{Str(strings.Repeat("l", protocol.MaxLaneName+1)), "", false},
		{Str(""), "", false},
		{Field{}, "", false},
	} {
		got := LaneName(tc.f)
		if (got != nil) != tc.ok || string(got) != tc.want {
			t.Errorf("LaneName(%+v) = %q", tc.f, got)
		}
	}
}

func TestLaneReady(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		paused           bool
		waiting, act, cp int64
		ready            bool
	}{
		{false, 1, 0, 0, true},
		{false, 0, 0, 0, false},
		{true, 5, 0, 0, false},
		{false, 5, 2, 3, true},
		{false, 5, 3, 3, false},
		{false, 5, 4, 3, false},
		{false, 5, 100, 0, true}, // no cap
	} {
		if got := LaneReady(tc.paused, tc.waiting, tc.act, tc.cp); got != tc.ready {
			t.Errorf("%+v: %v", tc, got)
		}
	}
	// the fields as read: numbers like a row's, paused exactly "1"
	l := ReadLane([3]Field{Str("02"), Str("3"), Str("yes")}, 4)
	if l.Active != 0 || l.Cap != 3 || l.Paused || !l.CapSet || l.Waiting != 4 || !l.Ready() {
		t.Errorf("ReadLane: %+v", l)
	}
	if l := ReadLane([3]Field{Str("7"), {}, Str("1")}, 1); l.Active != 7 || l.Cap != 0 || !l.Paused || l.CapSet || l.Ready() {
		t.Errorf("ReadLane paused: %+v", l)
	}
}

// laneSeen is an accounting's reads: lanes as (active, cap, paused,
// waiting) with their changes, meta turn and lanewait, ZCARD turns.
func laneSeen(turn, wait string, turns int64, lanes ...LaneChange) *LaneSeen {
	m := [2]Field{}
	if turn != "" {
		m[0] = Str(turn)
	}
	if wait != "" {
		m[1] = Str(wait)
	}
	return &LaneSeen{Lanes: lanes, Meta: Got(m), Turns: Got(turns), Registry: Got[int64](0), Signal: Got[int64](1)}
}

// lane is a lane's reads: active, cap, paused as stored ("" absent), its
// waiting jobs, and the call's changes.
func lane(active, cp, paused string, waiting, dw, da int64) LaneChange {
	var info [3]Field
	for i, v := range []string{active, cp, paused} {
		if v != "" {
			info[i] = Str(v)
		}
	}
	return LaneChange{Info: Got(info), Waiting: Got(waiting), DW: dw, DA: da}
}

func TestLaneAccount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		s      *LaneSeen
		want   []LaneEffect // Before and After not compared
		wait   int64        // -1: lanewait not written
		signal bool
	}{
		{"a new lane's first job: registered, ready, signal on empty turns",
			laneSeen("7", "", 0, lane("", "", "", 0, 1, 0)),
			[]LaneEffect{{Register: true, Enter: true}}, 1, true},
		{"turns not empty: no signal",
			laneSeen("7", "3", 2, lane("", "", "", 0, 2, 0)),
			[]LaneEffect{{Register: true, Enter: true}}, 5, false},
		{"more jobs in a ready lane: nothing but lanewait",
			laneSeen("", "3", 0, lane("", "", "", 3, 1, 0)),
			[]LaneEffect{{}}, 4, false},
		{"a paused lane's job: registered, not ready",
			laneSeen("", "", 0, lane("", "", "1", 0, 1, 0)),
			[]LaneEffect{{Register: true}}, 1, false},
		{"a completion frees a capped lane: ready again",
			laneSeen("4", "2", 0, lane("2", "2", "", 2, 0, -1)),
			[]LaneEffect{{SetActive: true, Enter: true}}, -1, true},
		{"the last active job: HDEL, unregistered",
			laneSeen("", "", 1, lane("1", "", "", 0, 0, -1)),
			[]LaneEffect{{DelActive: true, Unregister: true}}, -1, false},
		{"counts clamp at 0, lanewait too",
			laneSeen("", "1", 0, lane("", "", "", 0, -1, -1)),
			[]LaneEffect{{}}, 0, false},
		{"a removal empties a ready lane: it leaves turns and lanes",
			laneSeen("", "1", 1, lane("", "", "", 1, -1, 0)),
			[]LaneEffect{{Leave: true, Unregister: true}}, 0, false},
		{"a recovered job back to its capped lane: active down, waiting up",
			laneSeen("", "0", 1, lane("1", "1", "", 0, 1, -1)),
			[]LaneEffect{{DelActive: true, Enter: true}}, 1, false},
		{"lanewait sums the lanes' changes",
			laneSeen("", "10", 1, lane("", "", "", 2, -1, 0), lane("", "", "", 0, 3, 0)),
			[]LaneEffect{{}, {Register: true, Enter: true}}, 12, false},
		{"the sum is not clamped per lane",
			laneSeen("", "5", 1, lane("", "", "", 0, -2, 0), lane("", "", "", 1, 1, 0)),
			[]LaneEffect{{}, {}}, 4, false},
	} {
		v, err := LaneAccount(tc.s, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		for i := range v.Effects {
			v.Effects[i].Before, v.Effects[i].After = LaneState{}, LaneState{}
		}
		wait := int64(-1)
		if v.SetWait {
			wait = v.Wait
		}
		if !reflect.DeepEqual(v.Effects, tc.want) || wait != tc.wait || v.Signal != tc.signal || v.SignalLen != 1 {
			t.Errorf("%s: %+v", tc.name, v)
		}
	}
	// the settings after the call: a new cap, a pause, a resume
	s := laneSeen("3", "", 1, lane("2", "", "", 4, 0, 0))
	s.Lanes[0].SetCap, s.Lanes[0].CapTo = true, 2
	if v, _ := LaneAccount(s, nil); !v.Effects[0].Leave || v.Effects[0].After.Cap != 2 || v.Turn != 3 || v.Any != true {
		t.Errorf("cap: %+v", v)
	}
	s = laneSeen("3", "", 0, lane("", "", "1", 4, 0, 0))
	s.Lanes[0].SetPaused = true
	if v, _ := LaneAccount(s, nil); !v.Effects[0].Enter || !v.Signal {
		t.Errorf("resume: %+v", v)
	}
	s = laneSeen("3", "", 0, lane("", "5", "", 4, 0, 0))
	s.Lanes[0].SetCap = true // cleared
	if v, _ := LaneAccount(s, nil); v.Any || v.Effects[0] != (LaneEffect{Before: v.Effects[0].Before, After: v.Effects[0].After}) {
		t.Errorf("clear a cap not reached: %+v", v)
	}
	// refusals in read order: the ACL, each lane's info then set, then meta,
	// turns, lanes, signal
	for i, tc := range []struct {
		fill func(s *LaneSeen)
		want error
	}{
		{func(s *LaneSeen) { s.Denied, s.Lanes[0].Info = true, Failed[[3]Field](errA) }, grammar.Refusal(protocol.ErrNoPerm)},
		{func(s *LaneSeen) { s.Lanes[0].Info, s.Lanes[0].Waiting = Failed[[3]Field](errA), Failed[int64](errB) }, errA},
		{func(s *LaneSeen) { s.Lanes[0].Waiting, s.Lanes[1].Info = Failed[int64](errA), Failed[[3]Field](errB) }, errA},
		{func(s *LaneSeen) { s.Lanes[1].Waiting, s.Meta = Failed[int64](errA), Failed[[2]Field](errB) }, errA},
		{func(s *LaneSeen) { s.Meta, s.Turns = Failed[[2]Field](errA), Failed[int64](errB) }, errA},
		{func(s *LaneSeen) { s.Turns, s.Registry = Failed[int64](errA), Failed[int64](errB) }, errA},
		{func(s *LaneSeen) { s.Registry, s.Signal = Failed[int64](errA), Failed[int64](errB) }, errA},
		{func(s *LaneSeen) { s.Signal = Failed[int64](errA) }, errA},
	} {
		s := laneSeen("", "", 0, lane("", "", "", 0, 1, 0), lane("", "", "", 0, 1, 0))
		tc.fill(s)
		if _, err := LaneAccount(s, nil); !errors.Is(err, tc.want) {
			t.Errorf("refusal %d: %v", i, err)
		}
	}
}

func TestFairTurns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		supply []int64
		count  int64
		order  []int32
		last   []int64
	}{
		{"passes, one job each", []int64{3, 2, 4}, 6, []int32{0, 1, 2, 0, 1, 2}, []int64{4, 5, 6}},
		{"a participant leaves when it runs out", []int64{1, 3, 2}, 10, []int32{0, 1, 2, 1, 2, 1}, []int64{1, 6, 5}},
		{"count ends the passes mid-pass", []int64{5, 5, 5}, 4, []int32{0, 1, 2, 0}, []int64{4, 2, 3}},
		{"nothing to give", []int64{0, 0}, 5, []int32{}, []int64{0, 0}},
		{"no participant", nil, 5, []int32{}, nil},
		{"one participant", []int64{7}, 3, []int32{0, 0, 0}, []int64{3}},
	} {
		ps := make([]FairParticipant, len(tc.supply))
		for i, s := range tc.supply {
			ps[i].Supply = s
		}
		order, _ := FairTurns(ps, tc.count, nil, nil)
		var last []int64
		for i, p := range ps {
			last = append(last, p.Last)
			n := int64(0)
			for _, k := range order {
				if int(k) == i {
					n++
				}
			}
			if p.Taken != n || p.Taken > p.Supply {
				t.Errorf("%s: participant %d took %d of %d, %d in order", tc.name, i, p.Taken, p.Supply, n)
			}
		}
		if len(order) != len(tc.order) || (len(order) > 0 && !reflect.DeepEqual(order, tc.order)) || !reflect.DeepEqual(last, tc.last) {
			t.Errorf("%s: order %v last %v", tc.name, order, last)
		}
	}
}

func TestPendingPlace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pturn  int64
		scores []float64
		want   int
	}{
		{0, nil, 0},
		{0, []float64{0, 1}, 0}, // equal turn: pending first
		{4, []float64{1, 4, 6}, 1},
		{5, []float64{1, 4, 6}, 2},
		{9, []float64{1, 4, 6}, 3},
		{2, []float64{1.5, 2.5}, 1}, // a score as stored, not an integer
	} {
		if got := PendingPlace(tc.pturn, tc.scores); got != tc.want {
			t.Errorf("PendingPlace(%d, %v) = %d, want %d", tc.pturn, tc.scores, got, tc.want)
		}
	}
}
