package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

type promoteScript struct {
	version Reply[Field] // unmade: this wire
	due     Reply[[][]byte]
	rows    map[string]Reply[[]Field] // absent: a row without fields
	pending Reply[int64]
	signal  Reply[int64]
}

func (sc promoteScript) run(t *testing.T) ([]PromoteRead, PromoteStep) {
	t.Helper()
	return sc.runWith(t, Promote)
}

// runWith drives decide, PROMOTE's verdict or PROMOTEALL's, over the
// script's replies.
func (sc promoteScript) runWith(t *testing.T, decide func(*PromoteSeen) PromoteStep) ([]PromoteRead, PromoteStep) {
	t.Helper()
	var s PromoteSeen
	needs := drive(t, func() PromoteRead { return decide(&s).Need }, func(n PromoteRead) {
		switch n {
		case PromoteFirst:
			s.Version = wire(sc.version)
			s.Due = sc.due
			s.Due.Made = true
		case PromoteRows:
			s.Rows = make([]Reply[[]Field], len(s.Due.Val))
			for i, m := range s.Due.Val {
				if !JobMember(m) {
					continue
				}
				r, ok := sc.rows[string(m)]
				if !ok {
					r = Got(fields("", ""))
				}
				r.Made = true
				s.Rows[i] = r
			}
			s.Pending, s.Signal = sc.pending, sc.signal
			s.Pending.Made, s.Signal.Made = true, true
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, decide(&s)
}

func TestPromote(t *testing.T) {
	t.Parallel()
	both := []PromoteRead{PromoteFirst, PromoteRows}
	t.Run("nothing due", func(t *testing.T) {
		needs, st := promoteScript{due: Got(members())}.run(t)
		if !reflect.DeepEqual(needs, []PromoteRead{PromoteFirst}) || st.Err != nil || st.Verdict.Moved != 0 || st.Verdict.Moves != nil {
			t.Fatalf("%v %+v", needs, st)
		}
	})
	for _, tc := range fenceCases {
		t.Run("fence "+tc.name, func(t *testing.T) {
			needs, st := promoteScript{version: tc.version, due: Failed[[][]byte](errB)}.run(t)
			if !reflect.DeepEqual(needs, []PromoteRead{PromoteFirst}) || !errors.Is(st.Err, tc.want) {
				t.Fatalf("%v %+v", needs, st)
			}
		})
	}
	t.Run("delayed not a zset", func(t *testing.T) {
		needs, st := promoteScript{due: Failed[[][]byte](errA)}.run(t)
		if !reflect.DeepEqual(needs, []PromoteRead{PromoteFirst}) || st.Err != errA {
			t.Fatalf("%v %+v", needs, st)
		}
	})
	t.Run("moves and drops", func(t *testing.T) {
		needs, st := promoteScript{
			due: Got(members("3", "x", "4", "5")),
			rows: map[string]Reply[[]Field]{
				"3": Got(fields("=0", "=4")),
				"5": Got(fields("=2", "=-1")), // a damaged prio reads as 0
			},
		}.run(t)
		want := PromoteVerdict{Moved: 2, Moves: []Move{{To: ToPending, Score: protocol.PendingScore(4, 3)}, {}, {}, {To: ToPending, Score: protocol.PendingScore(0, 5)}}, Signal: true}
		if !reflect.DeepEqual(needs, both) || st.Err != nil || !reflect.DeepEqual(st.Verdict, want) {
			t.Fatalf("%v %+v", needs, st)
		}
	})
	t.Run("no signal", func(t *testing.T) {
		_, st := promoteScript{due: Got(members("1")), pending: Got[int64](1), rows: map[string]Reply[[]Field]{"1": Got(fields("=0", ""))}}.run(t)
		if st.Err != nil || st.Verdict.Signal || st.Verdict.Moved != 1 {
			t.Fatalf("%+v", st)
		}
		_, st = promoteScript{due: Got(members("1"))}.run(t)
		if st.Err != nil || st.Verdict.Signal || st.Verdict.Moved != 0 {
			t.Fatalf("%+v", st)
		}
	})
	for _, tc := range []struct {
		name string
		sc   promoteScript
	}{
		{"a row before pending", promoteScript{rows: map[string]Reply[[]Field]{"2": Failed[[]Field](errA)}, pending: Failed[int64](errB)}},
		{"the first row", promoteScript{rows: map[string]Reply[[]Field]{"1": Failed[[]Field](errA), "2": Failed[[]Field](errB)}}},
		{"pending before signal", promoteScript{pending: Failed[int64](errA), signal: Failed[int64](errB)}},
		{"signal", promoteScript{signal: Failed[int64](errA)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.sc.due = Got(members("1", "2"))
			needs, st := tc.sc.run(t)
			if !reflect.DeepEqual(needs, both) || st.Err != errA {
				t.Fatalf("%v %v", needs, st.Err)
			}
		})
	}
}
