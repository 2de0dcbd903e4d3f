package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// recoverScript answers RECOVER's reads: the expired members, then one row
// per member (unmade for members that are not ids) and the type reads.
type recoverScript struct {
	version  Reply[Field] // unmade: this wire
	expired  Reply[[][]byte]
	rows     map[string]Reply[[]Field] // by member; absent: a row without fields
	pending  Reply[int64]
	dead     Reply[int64]
	signal   Reply[int64]
	counters Reply[[]Field]
}

func (sc recoverScript) run(t *testing.T, now int64) ([]RecoverRead, RecoverStep) {
	t.Helper()
	var s RecoverSeen
	needs := drive(t, func() RecoverRead { return Recover(now, &s).Need }, func(n RecoverRead) {
		switch n {
		case RecoverFirst:
			s.Version = wire(sc.version)
			s.Expired = sc.expired
			s.Expired.Made = true
		case RecoverRows:
			s.Rows = make([]Reply[[]Field], len(s.Expired.Val))
			for i, m := range s.Expired.Val {
				if !JobMember(m) {
					continue
				}
				r, ok := sc.rows[string(m)]
				if !ok {
					r = Got(fields("", "", ""))
				}
				r.Made = true
				s.Rows[i] = r
			}
			s.Pending, s.Dead, s.Signal, s.Counters = sc.pending, sc.dead, sc.signal, sc.counters
			s.Pending.Made, s.Dead.Made, s.Signal.Made, s.Counters.Made = true, true, true, true
			if s.Counters.Val == nil && s.Counters.Err == nil {
				s.Counters.Val = fields("", "")
			}
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, Recover(now, &s)
}

func TestRecover(t *testing.T) {
	t.Parallel()
	const now = 1_700_000_000_000
	both := []RecoverRead{RecoverFirst, RecoverRows}

	t.Run("nothing expired", func(t *testing.T) {
		needs, st := recoverScript{expired: Got(members())}.run(t, now)
		if !reflect.DeepEqual(needs, []RecoverRead{RecoverFirst}) || st.Err != nil || !reflect.DeepEqual(st.Verdict, RecoverVerdict{}) {
			t.Fatalf("%v %+v", needs, st)
		}
	})
	for _, tc := range fenceCases {
		t.Run("fence "+tc.name, func(t *testing.T) {
			needs, st := recoverScript{version: tc.version, expired: Failed[[][]byte](errB)}.run(t, now)
			if !reflect.DeepEqual(needs, []RecoverRead{RecoverFirst}) || !errors.Is(st.Err, tc.want) {
				t.Fatalf("%v %+v", needs, st)
			}
		})
	}
	t.Run("active not a zset", func(t *testing.T) {
		needs, st := recoverScript{expired: Failed[[][]byte](errA)}.run(t, now)
		if !reflect.DeepEqual(needs, []RecoverRead{RecoverFirst}) || st.Err != errA {
			t.Fatalf("%v %+v", needs, st)
		}
	})
	t.Run("to pending, to dead, dropped", func(t *testing.T) {
		sc := recoverScript{
			expired: Got(members("1", "2", "x", "3", "01", "5", "6", "7")),
			rows: map[string]Reply[[]Field]{
				"1": Got(fields("=1", "=3", "=9")),  // attempts left
				"2": Got(fields("=3", "=3", "=9")),  // none left
				"5": Got(fields("=x", "=1", "=zz")), // att reads as 0, prio as 0
				"6": Got(fields("=0", "", "=1000")), // max absent reads as 3: attempts left
				"7": Got(fields("=3", "", "")),      // max absent reads as 3: none left
			},
		}
		needs, st := sc.run(t, now)
		if !reflect.DeepEqual(needs, both) || st.Err != nil {
			t.Fatalf("%v %+v", needs, st)
		}
		want := RecoverVerdict{
			Requeued: 3, Died: 2,
			Moves: []Move{
				{To: ToPending, Score: protocol.PendingScore(9, 1)},
				{To: ToDead, Score: now},
				{}, {}, {},
				{To: ToPending, Score: protocol.PendingScore(0, 5)},
				{To: ToPending, Score: protocol.PendingScore(1000, 6)},
				{To: ToDead, Score: now},
			},
			Recovered: 3, Dead: 2, Signal: true,
		}
		if !reflect.DeepEqual(st.Verdict, want) {
			t.Fatalf("got %+v\nwant %+v", st.Verdict, want)
		}
	})
	t.Run("only members without rows", func(t *testing.T) {
		needs, st := recoverScript{expired: Got(members("job", "7"))}.run(t, now)
		if !reflect.DeepEqual(needs, both) || st.Err != nil || st.Verdict.Requeued != 0 || st.Verdict.Died != 0 || st.Verdict.Signal {
			t.Fatalf("%v %+v", needs, st)
		}
		if !reflect.DeepEqual(st.Verdict.Moves, []Move{{}, {}}) {
			t.Fatalf("moves %+v", st.Verdict.Moves)
		}
	})
	t.Run("no signal when pending holds jobs", func(t *testing.T) {
		_, st := recoverScript{expired: Got(members("1")), pending: Got[int64](4),
			rows: map[string]Reply[[]Field]{"1": Got(fields("=0", "=1", ""))}}.run(t, now)
		if st.Err != nil || st.Verdict.Signal || st.Verdict.Requeued != 1 {
			t.Fatalf("%+v", st)
		}
	})
	t.Run("no signal when nothing goes to pending", func(t *testing.T) {
		_, st := recoverScript{expired: Got(members("1")),
			rows: map[string]Reply[[]Field]{"1": Got(fields("=1", "=1", ""))}}.run(t, now)
		if st.Err != nil || st.Verdict.Signal || st.Verdict.Died != 1 {
			t.Fatalf("%+v", st)
		}
	})

	// The batch's replies are taken in the documented order: the rows, then
	// pending, dead, signal, the counters (recovered, then dead).
	rowsOK := map[string]Reply[[]Field]{"1": Got(fields("=0", "=2", "")), "2": Got(fields("=1", "=1", ""))}
	for _, tc := range []struct {
		name string
		sc   recoverScript
		want error
	}{
		{"a row before pending", recoverScript{rows: map[string]Reply[[]Field]{"2": Failed[[]Field](errA)}, pending: Failed[int64](errB)}, errA},
		{"the first row", recoverScript{rows: map[string]Reply[[]Field]{"1": Failed[[]Field](errA), "2": Failed[[]Field](errB)}}, errA},
		{"pending before dead", recoverScript{rows: rowsOK, pending: Failed[int64](errA), dead: Failed[int64](errB)}, errA},
		{"dead before signal", recoverScript{rows: rowsOK, dead: Failed[int64](errA), signal: Failed[int64](errB)}, errA},
		{"signal before stats", recoverScript{rows: rowsOK, signal: Failed[int64](errA), counters: Failed[[]Field](errB)}, errA},
		{"stats", recoverScript{rows: rowsOK, counters: Failed[[]Field](errA)}, errA},
		{"recovered not an integer", recoverScript{rows: rowsOK, counters: Got(fields("=abc", "="+"9223372036854775807"))},
			grammar.Refusal(protocol.ErrHashNotInteger)},
		{"dead overflows", recoverScript{rows: rowsOK, counters: Got(fields("=5", "=9223372036854775807"))},
			grammar.Refusal(protocol.ErrOverflow)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.sc.expired = Got(members("1", "2"))
			needs, st := tc.sc.run(t, now)
			if !reflect.DeepEqual(needs, both) || !errors.Is(st.Err, tc.want) {
				t.Fatalf("%v %v, want %v", needs, st.Err, tc.want)
			}
		})
	}

	// A counter is predicted only when the call increments it.
	t.Run("a counter not incremented is not predicted", func(t *testing.T) {
		sc := recoverScript{expired: Got(members("1")), rows: map[string]Reply[[]Field]{"1": Got(fields("=0", "=2", ""))},
			counters: Got(fields("=41", "=abc"))}
		_, st := sc.run(t, now)
		if st.Err != nil || st.Verdict.Recovered != 42 || st.Verdict.Dead != 0 {
			t.Fatalf("%+v", st)
		}
		sc = recoverScript{expired: Got(members("1")), rows: map[string]Reply[[]Field]{"1": Got(fields("=2", "=2", ""))},
			counters: Got(fields("=9223372036854775807", "=-3"))}
		_, st = sc.run(t, now)
		if st.Err != nil || st.Verdict.Dead != -2 || st.Verdict.Recovered != 0 {
			t.Fatalf("%+v", st)
		}
	})
}
