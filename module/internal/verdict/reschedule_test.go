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
