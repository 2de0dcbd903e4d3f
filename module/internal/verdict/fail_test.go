package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

type failScript struct {
	version   Reply[Field]
	row       Reply[[7]Field] // unmade: att 2, max 3, bo fixed:500, no lane
	score     Reply[Field]    // unmade: in active
	delayed   Reply[int64]
	dead      Reply[int64]
	counters  Reply[[3]Field] // failed retried dead
	cancelled Reply[Field]
}

func (sc failScript) run(t *testing.T, retry bool) ([]FailRead, FailStep) {
	t.Helper()
	var s FailSeen
	decide := func() FailStep { return Fail([]byte("2"), retry, &s) }
	needs := drive(t, func() FailRead { return decide().Need }, func(n FailRead) {
		if n == FailCancelled {
			s.Cancelled = sc.cancelled
			s.Cancelled.Made = true
			return
		}
		if n != FailAll {
			t.Fatalf("unknown read %d", n)
		}
		s.Version, s.Row, s.Score, s.Delayed, s.Dead, s.Counters = wire(sc.version), sc.row, sc.score, sc.delayed, sc.dead, sc.counters
		if !s.Row.Made {
			s.Row = Got([7]Field{Str("2"), Str("3"), Str("fixed:500")})
		}
		if !s.Score.Made {
			s.Score = Got(Str("100"))
		}
		s.Delayed.Made, s.Dead.Made, s.Counters.Made = true, true, true
	})
	return needs, decide()
}

func TestFail(t *testing.T) {
	t.Parallel()
	all := []FailRead{FailAll}
	row := func(att, max, bo string) Reply[[7]Field] {
		return Got([7]Field{Str(att), Str(max), Str(bo)})
	}
	for _, tc := range []struct {
		name  string
		sc    failScript
		retry bool
		v     FailVerdict
		err   error
	}{
		{"retries", failScript{}, true, FailVerdict{Retry: true, Delay: 500, Failed: 1, Outcome: 1}, nil},
		{"dead when asked", failScript{}, false, FailVerdict{Failed: 1, Outcome: 1}, nil},
		{"dead at max", failScript{row: row("2", "2", "fixed:500")}, true, FailVerdict{Failed: 1, Outcome: 1}, nil},
		{"counters counted on", failScript{counters: Got([3]Field{Str("9"), Str("4"), Str("x")})}, true, FailVerdict{Retry: true, Delay: 500, Failed: 10, Outcome: 5}, nil},
		{"the other outcome is not predicted", failScript{counters: Got([3]Field{{}, {}, Str("x")})}, true, FailVerdict{Retry: true, Delay: 500, Failed: 1, Outcome: 1}, nil},
		{"exponential", failScript{row: Got([7]Field{Str("2"), Str("9"), Str("exponential:100")})}, true, FailVerdict{Retry: true, Delay: 200, Failed: 1, Outcome: 1}, nil},
		{"exponential capped at a week", failScript{row: row("2", "9", "exponential:86400000")}, true, FailVerdict{Retry: true, Delay: 172800000, Failed: 1, Outcome: 1}, nil},
		{"a bo of another form waits 0", failScript{row: row("2", "9", "linear:5")}, true, FailVerdict{Retry: true, Failed: 1, Outcome: 1}, nil},
		{"no max, no bo: the defaults, retried", failScript{row: Got([7]Field{Str("2"), {}, {}})}, true, FailVerdict{Retry: true, Delay: 2000, Failed: 1, Outcome: 1}, nil},
		{"gone", failScript{row: Got([7]Field{{}, Str("3"), {}}), score: Failed[Field](errA)}, true, FailVerdict{Gone: true}, nil},
		{"row not a hash", failScript{row: Failed[[7]Field](errA), score: Failed[Field](errB)}, true, FailVerdict{}, errA},
		{"stale", failScript{row: row("1", "3", ""), score: Failed[Field](errB)}, true, FailVerdict{}, grammar.Refusal(protocol.ErrStale("fail"))},
		{"active not a zset", failScript{score: Failed[Field](errA), delayed: Failed[int64](errB)}, true, FailVerdict{}, errA},
		{"not active", failScript{score: Got(Field{}), delayed: Failed[int64](errB)}, true, FailVerdict{}, grammar.Refusal(protocol.ErrNotActive("fail"))},
		{"cancelled", failScript{score: Got(Field{}), cancelled: Got(Str("1")), delayed: Failed[int64](errB)}, true, FailVerdict{}, grammar.Refusal(protocol.ErrCancelled("fail"))},
		{"delayed not a zset", failScript{delayed: Failed[int64](errA), dead: Failed[int64](errB)}, true, FailVerdict{}, errA},
		{"dead not a zset, even on a retry", failScript{dead: Failed[int64](errA), counters: Failed[[3]Field](errB)}, true, FailVerdict{}, errA},
		{"stats not a hash", failScript{counters: Failed[[3]Field](errA)}, false, FailVerdict{}, errA},
		{"failed first", failScript{counters: Got([3]Field{Str("x"), Str("9223372036854775807"), {}})}, true, FailVerdict{}, grammar.Refusal(protocol.ErrHashNotInteger)},
		{"then retried", failScript{counters: Got([3]Field{Str("1"), Str("9223372036854775807"), {}})}, true, FailVerdict{}, grammar.Refusal(protocol.ErrOverflow)},
		{"then dead", failScript{counters: Got([3]Field{Str("1"), {}, Str("01")})}, false, FailVerdict{}, grammar.Refusal(protocol.ErrHashNotInteger)},
	} {
		needs, st := tc.sc.run(t, tc.retry)
		want := all
		if tc.sc.score.Made && !tc.sc.score.Val.Set && tc.sc.score.Err == nil {
			want = []FailRead{FailAll, FailCancelled}
		}
		if !reflect.DeepEqual(needs, want) || st.Verdict != tc.v || !errors.Is(st.Err, tc.err) || (tc.err == nil && st.Err != nil) {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
	}
	for _, tc := range fenceCases {
		needs, st := failScript{version: tc.version, row: Failed[[7]Field](errB)}.run(t, true)
		if !reflect.DeepEqual(needs, all) || !errors.Is(st.Err, tc.want) {
			t.Errorf("fence %s: %v %+v", tc.name, needs, st)
		}
	}
}
