package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/protocol"
)

type claimScript struct {
	version Reply[Field]
	paused  Reply[Field]
	pending Reply[[][]byte]
	active  Reply[int64]
	turns   Reply[int64]            // unmade: no lane ready (0)
	rows    map[string]Reply[Field] // att by member; absent: no row
}

// metaOf is CLAIM's meta read with paused as scripted, its other fields
// absent.
func metaOf(paused Reply[Field]) Reply[[len(ClaimMetaFields)]Field] {
	if paused.Err != nil {
		return Failed[[len(ClaimMetaFields)]Field](paused.Err)
	}
	var m [len(ClaimMetaFields)]Field
	m[0] = paused.Val
	return Got(m)
}

func (sc claimScript) run(t *testing.T) ([]ClaimRead, ClaimStep, []string) {
	t.Helper()
	var s ClaimSeen
	var read []string
	needs := drive(t, func() ClaimRead { return Claim(1000, &s).Need }, func(n ClaimRead) {
		switch n {
		case ClaimFirst:
			s.Version, s.Meta, s.Pending, s.Active, s.Turns = wire(sc.version), metaOf(sc.paused), sc.pending, sc.active, sc.turns
			s.Pending.Made, s.Active.Made, s.Turns.Made = true, true, true
		case ClaimRows:
			s.Rows = make([]Reply[Field], len(s.Members))
			for i, m := range s.Members {
				if JobMember(m) {
					read = append(read, string(m))
					s.Rows[i] = sc.rows[string(m)]
					s.Rows[i].Made = true
				}
			}
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, Claim(1000, &s), read
}

func TestClaim(t *testing.T) {
	t.Parallel()
	first, both := []ClaimRead{ClaimFirst}, []ClaimRead{ClaimFirst, ClaimRows}
	head := Got(members("5", "x", "01", "6", "7"))
	for _, tc := range []struct {
		name  string
		sc    claimScript
		needs []ClaimRead
		v     ClaimVerdict
		err   error
	}{
		{"paused", claimScript{paused: Got(Str("1")), pending: Failed[[][]byte](errA)}, first, ClaimVerdict{Empty: true}, nil},
		{"nothing pending", claimScript{pending: Got(members()), active: Failed[int64](errA)}, first, ClaimVerdict{Empty: true}, nil},
		{"paused means exactly 1", claimScript{paused: Got(Str("yes")), pending: Got(members()), active: Failed[int64](errA)}, first, ClaimVerdict{Empty: true}, nil},
		{"meta not a hash", claimScript{paused: Failed[Field](errA), pending: Failed[[][]byte](errB)}, first, ClaimVerdict{}, errA},
		{"pending not a zset", claimScript{pending: Failed[[][]byte](errA), active: Failed[int64](errB)}, first, ClaimVerdict{}, errA},
		{"takes rows with att, in pending order", claimScript{pending: head, rows: map[string]Reply[Field]{
			"5": Got(Str("0")), "6": Got(Field{}), "7": Got(Str("-1")),
		}}, both, ClaimVerdict{Jobs: []ClaimJob{{Member: 0, Attempt: 1}, {Member: 4, Attempt: 0}}}, nil},
		{"no member is an id", claimScript{pending: Got(members("x", "0"))}, both, ClaimVerdict{Jobs: []ClaimJob{}}, nil},
		{"a row not a hash, before active", claimScript{pending: head, active: Failed[int64](errB), rows: map[string]Reply[Field]{
			"5": Got(Str("1")), "6": Failed[Field](errA), "7": Got(Str("x")),
		}}, both, ClaimVerdict{}, errA},
		{"att not an integer", claimScript{pending: head, rows: map[string]Reply[Field]{
			"5": Got(Str("1")), "6": Got(Str("1.5")), "7": Failed[Field](errA),
		}}, both, ClaimVerdict{}, grammar.Refusal(protocol.ErrHashNotInteger)},
		{"att overflows", claimScript{pending: head, rows: map[string]Reply[Field]{
			"5": Got(Str("9223372036854775807")),
		}}, both, ClaimVerdict{}, grammar.Refusal(protocol.ErrOverflow)},
		{"active not a zset, last", claimScript{pending: head, active: Failed[int64](errA), rows: map[string]Reply[Field]{"5": Got(Str("1"))}}, both, ClaimVerdict{}, errA},
	} {
		needs, st, read := tc.sc.run(t)
		if !reflect.DeepEqual(needs, tc.needs) || !errors.Is(st.Err, tc.err) || (tc.err == nil && st.Err != nil) ||
			st.Verdict.Empty != tc.v.Empty || len(st.Verdict.Jobs) != len(tc.v.Jobs) || (len(tc.v.Jobs) > 0 && !reflect.DeepEqual(st.Verdict.Jobs, tc.v.Jobs)) {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
		if len(tc.needs) == 2 && tc.sc.pending.Val != nil && len(tc.sc.pending.Val) == 5 && !reflect.DeepEqual(read, []string{"5", "6", "7"}) {
			t.Errorf("%s: rows read %q, want the members that are ids", tc.name, read)
		}
	}
	for _, tc := range fenceCases {
		needs, st, _ := claimScript{version: tc.version, paused: Failed[Field](errB)}.run(t)
		if !reflect.DeepEqual(needs, first) || !errors.Is(st.Err, tc.want) {
			t.Errorf("fence %s: %v %+v", tc.name, needs, st)
		}
	}
	// a row the caller may not touch is its read's error: the rows after it
	// are not read, and a refusal before it wins
	s := ClaimSeen{Version: wire(Reply[Field]{}), Meta: metaOf(Got(Field{})), Pending: Got(members("5", "6", "7")), Active: Got[int64](0), Turns: Got[int64](0)}
	s.Rows = []Reply[Field]{Got(Str("1")), Failed[Field](errA), {}}
	if st := Claim(3, &s); !errors.Is(st.Err, errA) {
		t.Errorf("denied row: %+v", st)
	}
	s.Rows[0] = Got(Str("x"))
	if st := Claim(3, &s); !errors.Is(st.Err, grammar.Refusal(protocol.ErrHashNotInteger)) {
		t.Errorf("refusal before a denied row: %+v", st)
	}
}
