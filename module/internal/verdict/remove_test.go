package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/protocol"
)

type removeScript struct {
	version Reply[Field]   // unmade: this wire
	row     Reply[[]Field] // att state uniq
	holder  Reply[Field]
	removed Reply[Field]
	set     Reply[int64]
}

// run drives REMOVE of id 7 and records, with each need, the unique key and
// set it named.
func (sc removeScript) run(t *testing.T) ([]RemoveRead, RemoveStep, []string) {
	t.Helper()
	var s RemoveSeen
	var named []string
	needs := drive(t, func() RemoveRead { return Remove([]byte("7"), &s).Need }, func(n RemoveRead) {
		st := Remove([]byte("7"), &s)
		switch n {
		case RemoveFirst:
			s.Version = wire(sc.version)
			s.Row = sc.row
			s.Row.Made = true
		case RemoveRest:
			u := "-"
			if st.Unique != nil {
				u = "unique:" + string(st.Unique)
				s.Holder = sc.holder
				s.Holder.Made = true
			}
			named = append(named, u, []string{"none", "pending", "delayed", "dead"}[st.Set])
			s.Removed = sc.removed
			s.Removed.Made = true
			if st.Set != NoSet {
				s.Set = sc.set
				s.Set.Made = true
			}
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, Remove([]byte("7"), &s), named
}

func TestRemove(t *testing.T) {
	t.Parallel()
	row := []RemoveRead{RemoveFirst}
	both := []RemoveRead{RemoveFirst, RemoveRest}
	for _, tc := range []struct {
		name  string
		sc    removeScript
		needs []RemoveRead
		named []string
		want  RemoveVerdict
		err   error
	}{
		{"fence absent", removeScript{version: fenceCases[0].version, row: Failed[[]Field](errB)}, row, nil, RemoveVerdict{}, fenceCases[0].want},
		{"fence another wire", removeScript{version: fenceCases[1].version, row: Failed[[]Field](errB)}, row, nil, RemoveVerdict{}, fenceCases[1].want},
		{"fence not a string", removeScript{version: fenceCases[2].version, row: Failed[[]Field](errB)}, row, nil, RemoveVerdict{}, errA},
		{"gone", removeScript{row: Got(fields("", "=pending", "=u"))}, row, nil, RemoveVerdict{Gone: true}, nil},
		{"row not a hash", removeScript{row: Failed[[]Field](errA)}, row, nil, RemoveVerdict{}, errA},
		{"active", removeScript{row: Got(fields("=1", "=active", "=u")), removed: Failed[Field](errB)}, row, nil, RemoveVerdict{},
			grammar.Refusal(protocol.ErrRemoveActive)},
		{"pending", removeScript{row: Got(fields("=0", "=pending", ""))}, both, []string{"-", "pending"},
			RemoveVerdict{Set: InPending, Removed: 1}, nil},
		{"delayed", removeScript{row: Got(fields("=0", "=delayed", "")), removed: Got(Str("4"))}, both, []string{"-", "delayed"},
			RemoveVerdict{Set: InDelayed, Removed: 5}, nil},
		{"dead", removeScript{row: Got(fields("=3", "=dead", ""))}, both, []string{"-", "dead"},
			RemoveVerdict{Set: InDead, Removed: 1}, nil},
		{"a state naming no set", removeScript{row: Got(fields("=0", "=waiting", "")), set: Failed[int64](errA)}, both, []string{"-", "none"},
			RemoveVerdict{Removed: 1}, nil},
		{"no state", removeScript{row: Got(fields("=0", "", ""))}, both, []string{"-", "none"}, RemoveVerdict{Removed: 1}, nil},
		{"unique held by the job", removeScript{row: Got(fields("=0", "=pending", "=u")), holder: Got(Str("7"))}, both,
			[]string{"unique:u", "pending"}, RemoveVerdict{Set: InPending, Unique: true, Removed: 1}, nil},
		{"unique held by another", removeScript{row: Got(fields("=0", "=pending", "=u")), holder: Got(Str("8"))}, both,
			[]string{"unique:u", "pending"}, RemoveVerdict{Set: InPending, Removed: 1}, nil},
		{"unique gone", removeScript{row: Got(fields("=0", "=pending", "=u"))}, both,
			[]string{"unique:u", "pending"}, RemoveVerdict{Set: InPending, Removed: 1}, nil},
		{"an empty unique key is set", removeScript{row: Got(fields("=0", "=pending", "=")), holder: Got(Str("7"))}, both,
			[]string{"unique:", "pending"}, RemoveVerdict{Set: InPending, Unique: true, Removed: 1}, nil},
		{"unique before stats", removeScript{row: Got(fields("=0", "=pending", "=u")), holder: Failed[Field](errA), removed: Failed[Field](errB)}, both,
			[]string{"unique:u", "pending"}, RemoveVerdict{}, errA},
		{"stats before the set", removeScript{row: Got(fields("=0", "=pending", "")), removed: Failed[Field](errA), set: Failed[int64](errB)}, both,
			[]string{"-", "pending"}, RemoveVerdict{}, errA},
		{"removed predicted before the set", removeScript{row: Got(fields("=0", "=pending", "")), removed: Got(Str("x")), set: Failed[int64](errB)}, both,
			[]string{"-", "pending"}, RemoveVerdict{}, grammar.Refusal(protocol.ErrHashNotInteger)},
		{"removed overflows", removeScript{row: Got(fields("=0", "=dead", "")), removed: Got(Str("9223372036854775807"))}, both,
			[]string{"-", "dead"}, RemoveVerdict{}, grammar.Refusal(protocol.ErrOverflow)},
		{"the set", removeScript{row: Got(fields("=0", "=dead", "")), set: Failed[int64](errA)}, both,
			[]string{"-", "dead"}, RemoveVerdict{}, errA},
	} {
		needs, st, named := tc.sc.run(t)
		if !reflect.DeepEqual(needs, tc.needs) || !reflect.DeepEqual(named, tc.named) || !errors.Is(st.Err, tc.err) ||
			(tc.err == nil && st.Err != nil) || !reflect.DeepEqual(st.Verdict, tc.want) {
			t.Errorf("%s: %v %v %+v", tc.name, needs, named, st)
		}
	}
}
