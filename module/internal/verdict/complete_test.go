package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/protocol"
)

type completeScript struct {
	version   Reply[Field]
	row       Reply[[6]Field] // unmade: att "3", no uniq
	score     Reply[Field]    // unmade: in active
	completed Reply[Field]
	logs      error
	holder    Reply[Field]
}

func (sc completeScript) run(t *testing.T) ([]CompleteRead, CompleteStep) {
	t.Helper()
	var s CompleteSeen
	decide := func() CompleteStep { return Complete([]byte("7"), []byte("3"), nil, &s) }
	needs := drive(t, func() CompleteRead { return decide().Need }, func(n CompleteRead) {
		switch n {
		case CompleteFirst:
			s.Version, s.Row, s.Score, s.Completed, s.Logs = wire(sc.version), sc.row, sc.score, sc.completed, sc.logs
			if !s.Row.Made {
				s.Row = Got([6]Field{Str("3"), {}})
			}
			if !s.Score.Made {
				s.Score = Got(Str("100"))
			}
			s.Completed.Made = true
		case CompleteHolder:
			s.Holder = sc.holder
			s.Holder.Made = true
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, decide()
}

func TestComplete(t *testing.T) {
	t.Parallel()
	first := []CompleteRead{CompleteFirst}
	both := []CompleteRead{CompleteFirst, CompleteHolder}
	uniq := Got([6]Field{Str("3"), Str("k")})
	for _, tc := range []struct {
		name  string
		sc    completeScript
		needs []CompleteRead
		v     CompleteVerdict
		err   error
	}{
		{"completes", completeScript{completed: Got(Str("41"))}, first, CompleteVerdict{Completed: 42}, nil},
		{"first completion", completeScript{}, first, CompleteVerdict{Completed: 1}, nil},
		{"gone", completeScript{row: Got([6]Field{{}, Str("k")}), score: Failed[Field](errA), completed: Failed[Field](errB)}, first, CompleteVerdict{Gone: true}, nil},
		{"row not a hash", completeScript{row: Failed[[6]Field](errA), score: Failed[Field](errB)}, first, CompleteVerdict{}, errA},
		{"stale", completeScript{row: Got([6]Field{Str("2"), {}}), score: Failed[Field](errB)}, first, CompleteVerdict{}, grammar.Refusal(protocol.ErrStale("complete"))},
		{"active not a zset", completeScript{score: Failed[Field](errA), completed: Failed[Field](errB)}, first, CompleteVerdict{}, errA},
		{"not active", completeScript{score: Got(Field{}), completed: Failed[Field](errB)}, first, CompleteVerdict{}, grammar.Refusal(protocol.ErrNotActive("complete"))},
		{"releases its unique key", completeScript{row: uniq, holder: Got(Str("7"))}, both, CompleteVerdict{Release: true, Completed: 1}, nil},
		{"another holder", completeScript{row: uniq, holder: Got(Str("8"))}, both, CompleteVerdict{Completed: 1}, nil},
		{"no holder", completeScript{row: uniq, holder: Got(Field{})}, both, CompleteVerdict{Completed: 1}, nil},
		{"unique key not a string, before stats", completeScript{row: uniq, holder: Failed[Field](errA), completed: Failed[Field](errB)}, both, CompleteVerdict{}, errA},
		{"unique key denied", completeScript{row: uniq, holder: Failed[Field](errA)}, both, CompleteVerdict{}, errA},
		{"stats not a hash", completeScript{completed: Failed[Field](errA)}, first, CompleteVerdict{}, errA},
		{"completed not an integer", completeScript{completed: Got(Str("x"))}, first, CompleteVerdict{}, grammar.Refusal(protocol.ErrHashNotInteger)},
		{"completed overflows", completeScript{completed: Got(Str("9223372036854775807"))}, first, CompleteVerdict{}, grammar.Refusal(protocol.ErrOverflow)},
		{"logs denied, last", completeScript{completed: Got(Str("x")), logs: errB}, first, CompleteVerdict{}, grammar.Refusal(protocol.ErrHashNotInteger)},
		{"logs denied", completeScript{logs: errB}, first, CompleteVerdict{}, errB},
	} {
		needs, st := tc.sc.run(t)
		if !reflect.DeepEqual(needs, tc.needs) || st.Verdict != tc.v || !errors.Is(st.Err, tc.err) || (tc.err == nil && st.Err != nil) {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
	}
	for _, tc := range fenceCases {
		needs, st := completeScript{version: tc.version, row: Failed[[6]Field](errB)}.run(t)
		if !reflect.DeepEqual(needs, first) || !errors.Is(st.Err, tc.want) {
			t.Errorf("fence %s: %v %+v", tc.name, needs, st)
		}
	}
}
