package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

type rescheduleScript struct {
	version                  Reply[Field]
	row                      Reply[[4]Field] // att state prio lane
	lanes                    Reply[struct{}]
	pending, delayed, signal Reply[int64]
}

func (sc rescheduleScript) run(t *testing.T, due, delay int64) ([]RescheduleRead, RescheduleStep) {
	t.Helper()
	var s RescheduleSeen
	decide := func() RescheduleStep { return Reschedule(7, 1000, due, delay, &s) }
	needs := drive(t, func() RescheduleRead { return decide().Need }, func(n RescheduleRead) {
		switch n {
		case RescheduleFirst:
			s.Version, s.Row, s.Pending, s.Delayed, s.Signal = wire(sc.version), sc.row, sc.pending, sc.delayed, sc.signal
			s.Row.Made, s.Pending.Made, s.Delayed.Made, s.Signal.Made = true, true, true, true
		case RescheduleLanes:
			s.Lanes = sc.lanes
			s.Lanes.Made = true
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, decide()
}

func TestReschedule(t *testing.T) {
	t.Parallel()
	first := []RescheduleRead{RescheduleFirst}
	laned := []RescheduleRead{RescheduleFirst, RescheduleLanes}
	row := func(state, lane string) Reply[[4]Field] {
		r := [4]Field{Str("1"), Str(state), Str("5")}
		if lane != "" {
			r[3] = Str(lane)
		}
		return Got(r)
	}
	score := protocol.PendingScore(5, 7)
	for _, tc := range []struct {
		name       string
		sc         rescheduleScript
		due, delay int64
		needs      []RescheduleRead
		v          RescheduleVerdict
		lane       string
		err        error
	}{
		{"pending to delayed", rescheduleScript{row: row("pending", "")}, 0, 500, first,
			RescheduleVerdict{From: "pending", To: "delayed", Due: 1500, Score: score}, "", nil},
		{"the later of delay and due", rescheduleScript{row: row("pending", "")}, 2000, 500, first,
			RescheduleVerdict{From: "pending", To: "delayed", Due: 2000, Score: score}, "", nil},
		{"delayed to delayed", rescheduleScript{row: row("delayed", "l")}, 0, 1, first,
			RescheduleVerdict{From: "delayed", To: "delayed", Due: 1001, Score: score}, "l", nil},
		{"delayed to pending, signal", rescheduleScript{row: row("delayed", "")}, 999, 0, first,
			RescheduleVerdict{From: "delayed", To: "pending", Due: 1000, Score: score, Signal: true}, "", nil},
		{"delayed to pending, pending not empty", rescheduleScript{row: row("delayed", ""), pending: Got(int64(3))}, 0, 0, first,
			RescheduleVerdict{From: "delayed", To: "pending", Due: 1000, Score: score}, "", nil},
		{"delayed to its lane", rescheduleScript{row: row("delayed", "l")}, 0, 0, laned,
			RescheduleVerdict{From: "delayed", To: "pending", Due: 1000, Score: score}, "l", nil},
		{"pending stays", rescheduleScript{row: row("pending", "l"), pending: Failed[int64](errB)}, 1000, 0, first,
			RescheduleVerdict{From: "pending", To: "pending", Stay: true, Due: 1000}, "", nil},
		{"gone", rescheduleScript{row: Got([4]Field{{}, Str("pending")}), pending: Failed[int64](errB)}, 0, 5, first, RescheduleVerdict{Gone: true}, "", nil},
		{"row not a hash", rescheduleScript{row: Failed[[4]Field](errA), pending: Failed[int64](errB)}, 0, 5, first, RescheduleVerdict{}, "", errA},
		{"active", rescheduleScript{row: row("active", ""), pending: Failed[int64](errB)}, 0, 5, first, RescheduleVerdict{}, "",
			grammar.Refusal(protocol.ErrRescheduleState)},
		{"lanes before the types", rescheduleScript{row: row("pending", "l"), lanes: Failed[struct{}](errA), pending: Failed[int64](errB)}, 0, 5, laned,
			RescheduleVerdict{}, "", errA},
		{"pending not a zset", rescheduleScript{row: row("pending", ""), pending: Failed[int64](errA), delayed: Failed[int64](errB)}, 0, 5, first,
			RescheduleVerdict{}, "", errA},
		{"delayed not a zset", rescheduleScript{row: row("pending", ""), delayed: Failed[int64](errA), signal: Failed[int64](errB)}, 0, 5, first,
			RescheduleVerdict{}, "", errA},
		{"signal not a list", rescheduleScript{row: row("pending", ""), signal: Failed[int64](errA)}, 0, 5, first, RescheduleVerdict{}, "", errA},
	} {
		needs, st := tc.sc.run(t, tc.due, tc.delay)
		if !reflect.DeepEqual(needs, tc.needs) || st.Verdict != tc.v || !errors.Is(st.Err, tc.err) || (tc.err == nil && st.Err != nil) ||
			(tc.err == nil && string(st.Lane) != tc.lane) {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
	}
	for _, tc := range fenceCases {
		needs, st := rescheduleScript{version: tc.version, row: Failed[[4]Field](errB)}.run(t, 0, 5)
		if !reflect.DeepEqual(needs, first) || !errors.Is(st.Err, tc.want) {
			t.Errorf("fence %s: %v %+v", tc.name, needs, st)
		}
	}
}

type cancelScript struct {
	version                Reply[Field]
	row                    Reply[[6]Field] // att state lane parent onfail wait
	sets                   [4]Reply[int64]
	counter                Reply[Field]
	flow, lanes, flowTypes Reply[struct{}]
}

func (sc cancelScript) run(t *testing.T) ([]CancelRead, CancelStep) {
	t.Helper()
	var s CancelSeen
	needs := drive(t, func() CancelRead { return Cancel(&s).Need }, func(n CancelRead) {
		switch n {
		case CancelFirst:
			s.Version, s.Row, s.Sets, s.Counter = wire(sc.version), sc.row, sc.sets, sc.counter
			s.Row.Made, s.Counter.Made = true, true
			for i := range s.Sets {
				s.Sets[i].Made = true
			}
		case CancelFlow:
			s.Flow = sc.flow
			s.Flow.Made = true
		case CancelLanes:
			s.Lanes = sc.lanes
			s.Lanes.Made = true
		case CancelFlowTypes:
			s.FlowTypes = sc.flowTypes
			s.FlowTypes.Made = true
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, Cancel(&s)
}

func TestCancel(t *testing.T) {
	t.Parallel()
	first := []CancelRead{CancelFirst}
	row := func(state string, more ...string) Reply[[6]Field] {
		r := [6]Field{Str("1"), Str(state)}
		for i, m := range more {
			if m != "" {
				r[2+i] = Str(m)
			}
		}
		return Got(r)
	}
	failedSets := func(i int, err error) (s [4]Reply[int64]) {
		s[i] = Failed[int64](err)
		return s
	}
	for _, tc := range []struct {
		name  string
		sc    cancelScript
		needs []CancelRead
		v     CancelVerdict
		err   error
	}{
		{"pending", cancelScript{row: row("pending"), counter: Got(Str("4"))}, first, CancelVerdict{From: "pending", Set: 0, Cancelled: 5}, nil},
		{"delayed", cancelScript{row: row("delayed", "l")}, first, CancelVerdict{From: "delayed", Set: 1, Cancelled: 1}, nil},
		{"active", cancelScript{row: row("active")}, first, CancelVerdict{From: "active", Set: 2, Cancelled: 1}, nil},
		{"pending in a lane", cancelScript{row: row("pending", "l"), sets: failedSets(0, errB)}, []CancelRead{CancelFirst, CancelLanes},
			CancelVerdict{From: "pending", Set: -1, Cancelled: 1}, nil},
		{"active in a lane", cancelScript{row: row("active", "l")}, []CancelRead{CancelFirst, CancelLanes}, CancelVerdict{From: "active", Set: 2, Cancelled: 1}, nil},
		{"a child, waited", cancelScript{row: row("delayed", "", "3", "ignore", "500")}, []CancelRead{CancelFirst, CancelFlow, CancelLanes, CancelFlowTypes},
			CancelVerdict{From: "delayed", Set: 1, Cancelled: 1, Wait: 500}, nil},
		{"waited", cancelScript{row: row("pending", "", "", "", "500")}, []CancelRead{CancelFirst, CancelFlow, CancelFlowTypes},
			CancelVerdict{From: "pending", Set: 0, Cancelled: 1, Wait: 500}, nil},
		{"gone", cancelScript{row: Got([6]Field{{}, Str("pending")}), sets: failedSets(0, errA)}, first, CancelVerdict{Gone: true}, nil},
		{"row not a hash", cancelScript{row: Failed[[6]Field](errA)}, first, CancelVerdict{}, errA},
		{"dead", cancelScript{row: row("dead"), sets: failedSets(3, errB)}, first, CancelVerdict{}, grammar.Refusal(protocol.ErrCancelState)},
		{"waiting", cancelScript{row: row("waiting")}, first, CancelVerdict{}, grammar.Refusal(protocol.ErrCancelState)},
		{"no state reads as pending", cancelScript{row: Got([6]Field{Str("1")})}, first, CancelVerdict{From: "pending", Cancelled: 1}, nil},
		{"the parent first", cancelScript{row: row("active", "l", "3"), flow: Failed[struct{}](errA), lanes: Failed[struct{}](errB)},
			[]CancelRead{CancelFirst, CancelFlow}, CancelVerdict{}, errA},
		{"then the lanes", cancelScript{row: row("active", "l"), lanes: Failed[struct{}](errA), sets: failedSets(2, errB)},
			[]CancelRead{CancelFirst, CancelLanes}, CancelVerdict{}, errA},
		{"its set, not the others", cancelScript{row: row("delayed"), sets: failedSets(0, errA)}, first, CancelVerdict{From: "delayed", Set: 1, Cancelled: 1}, nil},
		{"its set not a zset", cancelScript{row: row("active"), sets: [4]Reply[int64]{2: Failed[int64](errA), 3: Failed[int64](errB)}}, first, CancelVerdict{}, errA},
		{"dead not a zset", cancelScript{row: row("active"), sets: failedSets(3, errA), counter: Failed[Field](errB)}, first, CancelVerdict{}, errA},
		{"stats not a hash", cancelScript{row: row("active"), counter: Failed[Field](errA)}, first, CancelVerdict{}, errA},
		{"counter not an integer", cancelScript{row: row("active"), counter: Got(Str("x"))}, first, CancelVerdict{}, grammar.Refusal(protocol.ErrHashNotInteger)},
		{"counter overflows", cancelScript{row: row("active"), counter: Got(Str("9223372036854775807"))}, first, CancelVerdict{}, grammar.Refusal(protocol.ErrOverflow)},
		{"flow types last", cancelScript{row: row("active", "", "3"), flowTypes: Failed[struct{}](errA)}, []CancelRead{CancelFirst, CancelFlow, CancelLanes, CancelFlowTypes},
			CancelVerdict{}, errA},
	} {
		needs, st := tc.sc.run(t)
		if !reflect.DeepEqual(needs, tc.needs) || st.Verdict != tc.v || !errors.Is(st.Err, tc.err) || (tc.err == nil && st.Err != nil) {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
	}
	for _, tc := range fenceCases {
		needs, st := cancelScript{version: tc.version, row: Failed[[6]Field](errB)}.run(t)
		if !reflect.DeepEqual(needs, first) || !errors.Is(st.Err, tc.want) {
			t.Errorf("fence %s: %v %+v", tc.name, needs, st)
		}
	}
}

func TestAddFlagsJobFields(t *testing.T) {
	t.Parallel()
	plain := []AddJob{{Parent: -1}, {Parent: -1, Lane: []byte("l")}}
	for _, c := range []struct {
		name string
		jobs []AddJob
		flag Field
		want bool
	}{
		{"plain jobs", plain, Field{}, false},
		{"a kind", append(plain[:1:1], AddJob{Kind: []byte("k")}), Field{}, true},
		{"a timeout", []AddJob{{Timeout: []byte("5")}}, Field{}, true},
		{"headers", []AddJob{{Headers: []byte("h")}}, Field{}, true},
		{"already set", []AddJob{{Kind: []byte("k")}}, Str("1"), false},
		{"set to another value", []AddJob{{Kind: []byte("k")}}, Str("2"), true},
		{"empty value", []AddJob{{Kind: []byte("k")}}, Str(""), true},
		{"plain jobs on a set queue", plain, Str("1"), false},
	} {
		if got := AddFlagsJobFields(c.jobs, c.flag); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAddRowOpts(t *testing.T) {
	t.Parallel()
	plain := []AddJob{{Parent: -1}, {Parent: -1, Kind: []byte("k"), Unique: []byte("u"), Delay: 5}}
	lane := []AddJob{{Parent: -1}, {Parent: -1, Lane: []byte("l")}}
	fresh, old := Field{}, Str("7")
	for _, c := range []struct {
		name      string
		jobs      []AddJob
		keep, ev  bool
		seq, flag Field
		want      string
	}{
		{"plain jobs, a queue's first", plain, false, false, fresh, Field{}, "0"},
		{"plain jobs, a queue older than the flag", plain, false, false, old, Field{}, ""},
		{"plain jobs, a fresh queue", plain, false, false, old, Str("0"), ""},
		{"plain jobs, first, flag already 0", plain, false, false, fresh, Str("0"), ""},
		{"plain jobs, first, flag 1 by hand", plain, false, false, fresh, Str("1"), ""},
		{"plain jobs, first, flag of other bytes", plain, false, false, fresh, Str(""), ""},
		{"plain jobs on a set queue", plain, false, false, old, Str("1"), ""},
		{"plain jobs on an events queue", plain, false, false, old, Str("2"), ""},
		{"no jobs", nil, true, true, fresh, Field{}, ""},
		{"a lane, first", lane, false, false, fresh, Field{}, "1"},
		{"a lane, older queue", lane, false, false, old, Field{}, "1"},
		{"a lane, fresh queue", lane, false, false, old, Str("0"), "1"},
		{"a lane, events queue", lane, false, true, old, Str("2"), "1"},
		{"a child", []AddJob{{Parent: -1, Kids: 1}, {Parent: 0}}, false, false, fresh, Field{}, "1"},
		{"a parent", []AddJob{{Parent: -1, Kids: 1}}, false, false, old, Str("0"), "1"},
		{"a wait", []AddJob{{Parent: -1, Wait: []byte("5")}}, false, false, old, Str("0"), "1"},
		{"retention on", plain, true, false, fresh, Field{}, "1"},
		{"retention and events on", plain, true, true, old, Str("2"), "1"},
		{"already set", lane, true, true, old, Str("1"), ""},
		{"set to another value", lane, false, false, old, Str("3"), "1"},
		{"empty value", plain, true, false, old, Str(""), "1"},
		{"events on, a queue's first", plain, false, true, fresh, Field{}, "2"},
		{"events on, a plain queue", plain, false, true, old, Str("0"), "2"},
		{"events on, first, flag 0", plain, false, true, fresh, Str("0"), "2"},
		{"events on, an events queue", plain, false, true, old, Str("2"), ""},
		{"events on, a set queue", plain, false, true, old, Str("1"), ""},
		{"events on, a queue older than the flag", plain, false, true, old, Field{}, ""},
		{"events on, flag of other bytes", plain, false, true, fresh, Str("00"), ""},
	} {
		if got := AddRowOpts(c.jobs, c.keep, c.ev, c.seq, c.flag); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestClaimRowFields(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ext  bool
		flag Field
		want int
	}{
		{false, Field{}, 0},
		{false, Str("1"), 0},
		{true, Field{}, 1},
		{true, Str("0"), 1},
		{true, Str("1 "), 1},
		{true, Str("1"), len(protocol.ClaimExtendedFields)},
	} {
		if got := ClaimRowFields(c.ext, c.flag); got != c.want {
			t.Errorf("ext %v flag %+v: got %d, want %d", c.ext, c.flag, got, c.want)
		}
	}
}
