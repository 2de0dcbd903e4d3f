package verdict

import (
	"errors"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestEventsValue(t *testing.T) {
	t.Parallel()
	bad := refusal(protocol.ErrBadArg(protocol.Events.Name, "max_len"))
	for _, tc := range []struct {
		arg string
		n   int64
		err error
	}{
		{"0", 0, nil},
		{"1", 1, nil},
		{protocol.FormatInt(protocol.MaxEventsLen), protocol.MaxEventsLen, nil},
		{protocol.FormatInt(protocol.MaxEventsLen + 1), 0, bad},
		{"-1", 0, bad},
		{"00", 0, bad},
		{"", 0, bad},
		{strings.Repeat("9", 30), 0, bad},
	} {
		n, err := EventsValue([]byte(tc.arg))
		if n != tc.n || !errors.Is(err, tc.err) {
			t.Errorf("%q: %d %v", tc.arg, n, err)
		}
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	wrong := errors.New("WRONGTYPE")
	for _, tc := range []struct {
		stored   Reply[Field]
		maxLen   int64
		set, del bool
	}{
		{Got(Field{}), 100, true, false},
		{Got(Str("100")), 100, true, false}, // written again as given
		{Got(Str("5")), 0, false, true},
		{Got(Str("")), 0, false, true},
		{Got(Field{}), 0, false, false},
	} {
		set, del, err := Events(wire(Reply[Field]{}), tc.stored, tc.maxLen)
		if err != nil || set != tc.set || del != tc.del {
			t.Errorf("%+v: %v %v %v", tc, set, del, err)
		}
	}
	if _, _, err := Events(wire(Reply[Field]{}), Failed[Field](wrong), 0); err != wrong {
		t.Errorf("meta: %v", err)
	}
	for _, fc := range fenceCases {
		if _, _, err := Events(fc.version, Failed[Field](wrong), 1); !errors.Is(err, fc.want) {
			t.Errorf("fence %s: %v", fc.name, err)
		}
	}
}
