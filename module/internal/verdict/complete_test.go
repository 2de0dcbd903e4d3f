package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

type completeScript struct {
	version   Reply[Field]
	row       Reply[[6]Field] // unmade: att "3", no uniq
	score     Reply[Field]    // unmade: in active
	completed Reply[Field]
	logs      error
	holder    Reply[Field]
	cancelled Reply[Field]
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
		case CompleteCancelled:
			s.Cancelled = sc.cancelled
			s.Cancelled.Made = true
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
		{"not active", completeScript{score: Got(Field{}), completed: Failed[Field](errB)}, []CompleteRead{CompleteFirst, CompleteCancelled}, CompleteVerdict{}, grammar.Refusal(protocol.ErrNotActive("complete"))},
		{"cancelled", completeScript{score: Got(Field{}), cancelled: Got(Str("1")), completed: Failed[Field](errB)}, []CompleteRead{CompleteFirst, CompleteCancelled}, CompleteVerdict{}, grammar.Refusal(protocol.ErrCancelled("complete"))},
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

// COMPLETE of a flow job: the result's bound, the parent, the lanes, the
// counter, the flows' types, in that order; a retained job's logs stay.
func TestCompleteFlows(t *testing.T) {
	t.Parallel()
	type script struct {
		row                    [6]Field
		result                 string
		resultMax, completed   Reply[Field]
		flow, lanes, flowTypes error
		logs                   error
	}
	run := func(sc script) ([]CompleteRead, CompleteStep) {
		var s CompleteSeen
		decide := func() CompleteStep { return Complete([]byte("7"), []byte("3"), []byte(sc.result), &s) }
		needs := drive(t, func() CompleteRead { return decide().Need }, func(n CompleteRead) {
			switch n {
			case CompleteFirst:
				s.Version, s.Row, s.Score, s.Completed, s.Logs = wire(Reply[Field]{}), Got(sc.row), Got(Str("100")), sc.completed, sc.logs
				s.Completed.Made = true
			case CompleteResultMax:
				s.ResultMax = sc.resultMax
				s.ResultMax.Made = true
			case CompleteFlow:
				s.Flow = Reply[struct{}]{Made: true, Err: sc.flow}
			case CompleteLanes:
				s.Lanes = Reply[struct{}]{Made: true, Err: sc.lanes}
			case CompleteFlowTypes:
				s.FlowTypes = Reply[struct{}]{Made: true, Err: sc.flowTypes}
			default:
				t.Fatalf("unknown read %d", n)
			}
		})
		return needs, decide()
	}
	child := [6]Field{Str("3"), {}, {}, Str("1"), {}, {}}
	kept := [6]Field{Str("3"), {}, {}, {}, Str("1"), Str("500")}
	all := []CompleteRead{CompleteFirst, CompleteResultMax, CompleteFlow, CompleteLanes, CompleteFlowTypes}
	tooLarge := grammar.Refusal(protocol.ErrResultTooLarge)
	for _, tc := range []struct {
		name  string
		sc    script
		needs []CompleteRead
		err   error
	}{
		{"a child with a result", script{row: child, result: "r"}, all, nil},
		{"an empty result reads no bound", script{row: child}, []CompleteRead{CompleteFirst, CompleteFlow, CompleteLanes, CompleteFlowTypes}, nil},
		{"too large, before the parent", script{row: child, result: "rr", resultMax: Got(Str("1")), flow: errA}, all[:2], tooLarge},
		{"the default bound", script{row: child, result: string(make([]byte, protocol.DefaultResult+1))}, all[:2], tooLarge},
		{"meta not a hash", script{row: child, result: "r", resultMax: Failed[Field](errA)}, all[:2], errA},
		{"the parent before the lanes", script{row: child, result: "r", flow: errA, lanes: errB}, all[:3], errA},
		{"the lanes before the counter", script{row: child, lanes: errA, completed: Failed[Field](errB)}, all[2:4], errA},
		{"the counter before the flows' types", script{row: child, completed: Got(Str("x")), flowTypes: errB}, all[2:4], grammar.Refusal(protocol.ErrHashNotInteger)},
		{"the flows' types", script{row: child, flowTypes: errA}, all[2:], errA},
		{"the logs last", script{row: child, logs: errB}, all[2:], errB},
		{"retained: the logs stay", script{row: kept, logs: errB}, []CompleteRead{CompleteFirst, CompleteFlow, CompleteFlowTypes}, nil},
	} {
		needs, st := run(tc.sc)
		want := tc.needs
		if want[0] != CompleteFirst {
			want = append([]CompleteRead{CompleteFirst}, want...)
		}
		if !reflect.DeepEqual(needs, want) || !errors.Is(st.Err, tc.err) || (tc.err == nil && st.Err != nil) {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
	}
	_, st := run(script{row: kept})
	if v := st.Verdict; !v.Keep || v.Wait != 500 || st.Parent != nil {
		t.Errorf("retained: %+v", st)
	}
}
