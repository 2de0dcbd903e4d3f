package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

type requeueScript struct {
	version               Reply[Field]   // unmade: this wire
	row                   Reply[[]Field] // state att max prio
	dead, pending, signal Reply[int64]
	requeued              Reply[Field]
}

func (sc requeueScript) run(t *testing.T) ([]RequeueRead, RequeueStep) {
	t.Helper()
	var s RequeueSeen
	needs := drive(t, func() RequeueRead { return Requeue(7, &s).Need }, func(n RequeueRead) {
		switch n {
		case RequeueFirst:
			s.Version = wire(sc.version)
			s.Row = sc.row
			s.Row.Made = true
		case RequeueRest:
			s.Dead, s.Pending, s.Signal, s.Requeued = sc.dead, sc.pending, sc.signal, sc.requeued
			s.Dead.Made, s.Pending.Made, s.Signal.Made, s.Requeued.Made = true, true, true, true
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, Requeue(7, &s)
}

func TestRequeue(t *testing.T) {
	t.Parallel()
	row := []RequeueRead{RequeueFirst}
	both := []RequeueRead{RequeueFirst, RequeueRest}
	dead := Got(fields("=dead", "=3", "=3", "=5"))
	for _, tc := range []struct {
		name  string
		sc    requeueScript
		needs []RequeueRead
		want  RequeueVerdict
		err   error
	}{
		{"fence absent", requeueScript{version: fenceCases[0].version, row: Failed[[]Field](errB)}, row, RequeueVerdict{}, fenceCases[0].want},
		{"fence another wire", requeueScript{version: fenceCases[1].version, row: Failed[[]Field](errB)}, row, RequeueVerdict{}, fenceCases[1].want},
		{"fence not a string", requeueScript{version: fenceCases[2].version, row: Failed[[]Field](errB)}, row, RequeueVerdict{}, errA},
		{"gone", requeueScript{row: Got(fields("=dead", "", "=3", ""))}, row, RequeueVerdict{Gone: true}, nil},
		{"row not a hash", requeueScript{row: Failed[[]Field](errA)}, row, RequeueVerdict{}, errA},
		{"not dead", requeueScript{row: Got(fields("=pending", "=0", "=3", "")), dead: Failed[int64](errB)}, row, RequeueVerdict{},
			grammar.Refusal(protocol.ErrRequeueNotDead)},
		{"no state", requeueScript{row: Got(fields("", "=0", "=3", ""))}, row, RequeueVerdict{}, grammar.Refusal(protocol.ErrRequeueNotDead)},
		{"dead", requeueScript{row: dead}, both,
			RequeueVerdict{Max: 6, Score: protocol.PendingScore(5, 7), Requeued: 1, Signal: true}, nil},
		{"pending not empty", requeueScript{row: dead, pending: Got[int64](2), requeued: Got(Str("9"))}, both,
			RequeueVerdict{Max: 6, Score: protocol.PendingScore(5, 7), Requeued: 10}, nil},
		{"damaged fields", requeueScript{row: Got(fields("=dead", "=x", "=4", "=1001"))}, both,
			RequeueVerdict{Max: 4, Score: protocol.PendingScore(0, 7), Requeued: 1, Signal: true}, nil},
		{"dead before pending", requeueScript{row: dead, dead: Failed[int64](errA), pending: Failed[int64](errB)}, both, RequeueVerdict{}, errA},
		{"pending before signal", requeueScript{row: dead, pending: Failed[int64](errA), signal: Failed[int64](errB)}, both, RequeueVerdict{}, errA},
		{"signal before stats", requeueScript{row: dead, signal: Failed[int64](errA), requeued: Failed[Field](errB)}, both, RequeueVerdict{}, errA},
		{"stats", requeueScript{row: dead, requeued: Failed[Field](errA)}, both, RequeueVerdict{}, errA},
		{"requeued not an integer", requeueScript{row: dead, requeued: Got(Str("01"))}, both, RequeueVerdict{},
			grammar.Refusal(protocol.ErrHashNotInteger)},
		{"requeued overflows", requeueScript{row: dead, requeued: Got(Str("9223372036854775807"))}, both, RequeueVerdict{},
			grammar.Refusal(protocol.ErrOverflow)},
	} {
		needs, st := tc.sc.run(t)
		if !reflect.DeepEqual(needs, tc.needs) || !errors.Is(st.Err, tc.err) || (tc.err == nil && st.Err != nil) || !reflect.DeepEqual(st.Verdict, tc.want) {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
	}
}
