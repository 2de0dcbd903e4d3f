package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

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
		{"active", cancelScript{row: row("active")}, first, CancelVerdict{From: "active", Set: 2, Cancelled: 1, Notice: true}, nil},
		{"pending in a lane", cancelScript{row: row("pending", "l"), sets: failedSets(0, errB)}, []CancelRead{CancelFirst, CancelLanes},
			CancelVerdict{From: "pending", Set: -1, Cancelled: 1}, nil},
		{"active in a lane", cancelScript{row: row("active", "l")}, []CancelRead{CancelFirst, CancelLanes}, CancelVerdict{From: "active", Set: 2, Cancelled: 1, Notice: true}, nil},
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
