package verdict

import (
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestRowDefaults(t *testing.T) {
	t.Parallel()
	none := Field{}
	for _, tc := range []struct {
		name        string
		state, att  Field
		want        Field
		max, prio   Field
		wMax, wPrio string
		bo          Field
		wBo         string
	}{
		{"absent row", none, none, none, none, none, "3", "0", none, "exponential:1000"},
		{"lean row", none, Str("0"), Str("pending"), none, none, "3", "0", none, "exponential:1000"},
		{"full row", Str("dead"), Str("2"), Str("dead"), Str("7"), Str("5"), "7", "5", Str("fixed:10"), "fixed:10"},
		{"empty values stay", Str(""), Str("1"), Str(""), Str(""), Str(""), "", "", Str(""), ""},
	} {
		if got := RowState(tc.state, tc.att); got.Set != tc.want.Set || string(got.Bytes) != string(tc.want.Bytes) {
			t.Errorf("%s: RowState %+v", tc.name, got)
		}
		if got := RowMax(tc.max); !got.Set || string(got.Bytes) != tc.wMax {
			t.Errorf("%s: RowMax %+v", tc.name, got)
		}
		if got := RowPriority(tc.prio); !got.Set || string(got.Bytes) != tc.wPrio {
			t.Errorf("%s: RowPriority %+v", tc.name, got)
		}
		if got := RowBackoff(tc.bo); !got.Set || string(got.Bytes) != tc.wBo {
			t.Errorf("%s: RowBackoff %+v", tc.name, got)
		}
	}
	if protocol.DefaultBackoff != protocol.BackoffExponential+":"+defaultBackoffMS {
		t.Errorf("defaultBackoffMS %q is not the ms of %q", defaultBackoffMS, protocol.DefaultBackoff)
	}
	if protocol.InspectFields[inspectState] != protocol.FieldState || protocol.InspectFields[inspectMax] != protocol.FieldMax ||
		protocol.InspectFields[inspectPriority] != protocol.FieldPriority || protocol.InspectFields[inspectBackoff] != protocol.FieldBackoff {
		t.Errorf("the inspect indexes do not name state max prio bo in %v", protocol.InspectFields)
	}
}

func TestAddRowDefaults(t *testing.T) {
	t.Parallel()
	args := func(prio, max, bo, ms string) [][]byte {
		return [][]byte{[]byte("d"), []byte(prio), []byte("0"), []byte(max), []byte(bo), []byte(ms), nil, []byte("0")}
	}
	for _, tc := range []struct {
		name             string
		args             [][]byte
		prio             int64
		wMax, wPrio, wBo bool
	}{
		{"all defaults", args("0", "3", "exponential", "1000"), 0, true, true, true},
		{"none", args("5", "4", "fixed", "1000"), 5, false, false, false},
		{"exponential of another base", args("0", "3", "exponential", "100"), 0, true, true, false},
		{"fixed of the default base", args("0", "30", "fixed", "1000"), 0, false, true, false},
	} {
		m, p, b := AddRowDefaults(tc.args, AddJob{Priority: tc.prio})
		if m != tc.wMax || p != tc.wPrio || b != tc.wBo {
			t.Errorf("%s: %v %v %v", tc.name, m, p, b)
		}
	}
}
