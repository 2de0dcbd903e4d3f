package verdict

import (
	"errors"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// drive calls decide until it needs no read, answering each need with
// answer, and returns the needs in the order they were asked for. A verdict
// that asks for the same read twice, or for more than eight, fails the test:
// each answer must fill a slot the verdict was missing.
func drive[N comparable](t *testing.T, decide func() N, answer func(N)) []N {
	t.Helper()
	var none N
	var needs []N
	for range 8 {
		n := decide()
		if n == none {
			return needs
		}
		for _, seen := range needs {
			if seen == n {
				t.Fatalf("read %v asked for twice (after %v)", n, needs)
			}
		}
		needs = append(needs, n)
		answer(n)
	}
	t.Fatalf("the verdict keeps asking for reads: %v", needs)
	return nil
}

// errA and errB are two distinct error replies, so a test can tell which
// read's error a verdict returned.
var (
	errA = errors.New("WRONGTYPE first")
	errB = errors.New("WRONGTYPE second")
)

// fields builds an HMGET reply: "" is a null, any other string "=v" the
// value v (so "=" is the empty string).
func fields(vs ...string) []Field {
	out := make([]Field, len(vs))
	for i, v := range vs {
		if v != "" {
			out[i] = Str(v[1:])
		}
	}
	return out
}

func members(ms ...string) [][]byte {
	out := make([][]byte, len(ms))
	for i, m := range ms {
		out[i] = []byte(m)
	}
	return out
}

// wire is the fence's read as scripted: unmade means the version key holds
// this wire.
func wire(v Reply[Field]) Reply[Field] {
	if !v.Made {
		return Got(Str(protocol.WireString))
	}
	return v
}

// fenceCases are the fence's refusals: each verdict takes them before any
// reply read in the same batch.
var fenceCases = []struct {
	name    string
	version Reply[Field]
	want    error
}{
	{"absent", Got(Field{}), grammar.Refusal(protocol.ErrWireMissing)},
	{"another wire", Got(Str("1")), grammar.Refusal(protocol.ErrWireFound("1"))},
	{"not a string", Failed[Field](errA), errA},
}

func TestField(t *testing.T) {
	t.Parallel()
	if !Str("1").Is("1") || Str("1").Is("2") || (Field{}).Is("") || !Str("").Is("") {
		t.Fatal("Field.Is")
	}
	for m, ok := range map[string]bool{"1": true, "4398046511103": true, "0": false, "01": false, "x": false, "4398046511104": false, "": false} {
		if JobMember([]byte(m)) != ok {
			t.Errorf("JobMember(%q) = %v", m, !ok)
		}
	}
}
