package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

func TestInstall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version Reply[Field]
		stamp   bool
		err     error
	}{
		{Got(Field{}), true, nil},
		{Got(Str("2")), false, nil},
		{Got(Str("1")), false, grammar.Refusal(protocol.ErrWireFound("1"))}, // no upgrade in place
		{Got(Str("3")), false, grammar.Refusal(protocol.ErrWireFound("3"))},
		{Got(Str("1\x00x")), false, grammar.Refusal("EMQWIRE wire 1")}, // ends at the NUL, as the server ends it
		{Failed[Field](errA), false, errA},
	} {
		var s InstallSeen
		needs := drive(t, func() InstallRead { return Install(&s).Need }, func(InstallRead) { s.Version = tc.version })
		st := Install(&s)
		if !reflect.DeepEqual(needs, []InstallRead{InstallVersion}) || st.Stamp != tc.stamp || !errors.Is(st.Err, tc.err) {
			t.Errorf("%+v: %v %+v", tc.version, needs, st)
		}
	}
}

type extendScript struct {
	version, att, score Reply[Field]
	cancelled           Reply[Field] // unmade: absent
}

func (sc extendScript) run(t *testing.T, token string) ([]ExtendRead, ExtendStep) {
	t.Helper()
	var s ExtendSeen
	needs := drive(t, func() ExtendRead { return Extend([]byte(token), &s).Need }, func(n ExtendRead) {
		switch n {
		case ExtendAll:
			s.Version, s.Att, s.Score = wire(sc.version), sc.att, sc.score
			s.Att.Made, s.Score.Made = true, true
		case ExtendCancelled:
			s.Cancelled = sc.cancelled
			s.Cancelled.Made = true
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, Extend([]byte(token), &s)
}

func TestExtend(t *testing.T) {
	t.Parallel()
	all := []ExtendRead{ExtendAll}
	notInActive := []ExtendRead{ExtendAll, ExtendCancelled}
	stale := grammar.Refusal(protocol.ErrStale("extend"))
	notActive := grammar.Refusal(protocol.ErrNotActive("extend"))
	for _, tc := range []struct {
		name  string
		sc    extendScript
		needs []ExtendRead
		gone  bool
		err   error
	}{
		{"extends", extendScript{att: Got(Str("3")), score: Got(Str("99"))}, all, false, nil},
		{"gone", extendScript{att: Got(Field{}), score: Failed[Field](errB)}, all, true, nil},
		{"stale", extendScript{att: Got(Str("2")), score: Failed[Field](errB)}, all, false, stale},
		{"token compared as bytes", extendScript{att: Got(Str("03")), score: Got(Str("1"))}, all, false, stale},
		{"row not a hash", extendScript{att: Failed[Field](errA), score: Failed[Field](errB)}, all, false, errA},
		{"active not a zset", extendScript{att: Got(Str("3")), score: Failed[Field](errB)}, all, false, errB},
		{"not active", extendScript{att: Got(Str("3")), score: Got(Field{})}, notInActive, false, notActive},
		{"cancelled", extendScript{att: Got(Str("3")), score: Got(Field{}), cancelled: Got(Str("1"))}, notInActive, false,
			grammar.Refusal(protocol.ErrCancelled("extend"))},
		{"cancelled, any value", extendScript{att: Got(Str("3")), score: Got(Field{}), cancelled: Got(Str(""))}, notInActive, false,
			grammar.Refusal(protocol.ErrCancelled("extend"))},
	} {
		needs, st := tc.sc.run(t, "3")
		if !reflect.DeepEqual(needs, tc.needs) || st.Gone != tc.gone || !errors.Is(st.Err, tc.err) || st.Need != ExtendNone {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
	}
	for _, tc := range fenceCases {
		needs, st := extendScript{version: tc.version, att: Failed[Field](errB), score: Failed[Field](errB)}.run(t, "3")
		if !reflect.DeepEqual(needs, all) || !errors.Is(st.Err, tc.want) {
			t.Errorf("fence %s: %v %+v", tc.name, needs, st)
		}
	}
	// a binary token equal to att, NUL included
	if _, st := (extendScript{att: Got(Str("a\x00b")), score: Got(Str("1"))}).run(t, "a\x00b"); st.Err != nil || st.Gone {
		t.Errorf("binary token: %+v", st)
	}
}
