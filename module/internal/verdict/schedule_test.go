package verdict

import (
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

// defArgs is a valid definition (SCHEDULE.SET's ARGV after the id) with
// element i replaced by the given values, pairwise.
func defArgs(replace ...any) [][]byte {
	e := []string{"every", "1000", "", "0", "0", "0", "0", "60000", "1", "data", "5", "3", "fixed", "10", "", "0", "0"}
	for i := 0; i+1 < len(replace); i += 2 {
		e[replace[i].(int)] = replace[i+1].(string)
	}
	out := make([][]byte, len(e))
	for i, s := range e {
		out[i] = []byte(s)
	}
	return out
}

func withPairs(e [][]byte, pairs ...string) [][]byte {
	e[DefOptions] = []byte(string(rune('0' + len(pairs)/2)))
	for _, p := range pairs {
		e = append(e, []byte(p))
	}
	return e
}

func refusedWith(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestScheduleValues(t *testing.T) {
	t.Parallel()
	bad := func(name string) string { return protocol.ErrBadArg("schedule.set", name) }
	d, err := ScheduleValues("schedule.set", withPairs(defArgs(), "lane", "a", "wait", "5"))
	if err != nil || d.Options != 2 || d.Grace != 60000 || d.Catchup != 1 {
		t.Fatalf("valid: %+v %v", d, err)
	}
	if n, v := d.Option(1); string(n) != "wait" || string(v) != "5" {
		t.Fatalf("option 1: %q %q", n, v)
	}
	for _, tc := range []struct {
		e    [][]byte
		want string
	}{
		{defArgs(DefKind, "Every"), bad("kind")},
		{defArgs(DefSpec, "0"), bad("spec")},
		{defArgs(DefSpec, "01"), bad("spec")},
		{defArgs(DefSpec, "315360000001"), bad("spec")},
		{defArgs(DefKind, "cron", DefSpec, ""), bad("spec")},
		{defArgs(DefKind, "cron", DefSpec, strings.Repeat("*", protocol.MaxCronSpec+1)), bad("spec")},
		{defArgs(DefKind, "cron", DefSpec, "* * * * * *", DefTZ, strings.Repeat("z", protocol.MaxTimeZone+1)), bad("tz")},
		{defArgs(DefTZ, "UTC"), bad("tz")}, // every takes no time zone
		{defArgs(DefJitter, "86400001"), bad("jitter")},
		{defArgs(DefStart, "253402300800000"), bad("start")},
		{defArgs(DefStart, "10", DefEnd, "9"), bad("end")},
		{defArgs(DefLimit, "1000000000001"), bad("limit")},
		{defArgs(DefGrace, "-1"), bad("grace")},
		{defArgs(DefCatchup, "1001"), bad("catchup")},
		{defArgs(DefPriority, "1001"), bad("priority")},
		{defArgs(DefAttempts, "0"), bad("attempts")},
		{defArgs(DefBackoff, "linear"), bad("backoff")},
		{defArgs(DefBackoffMS, "86400001"), bad("backoff_ms")},
		{defArgs(DefUnique, strings.Repeat("k", protocol.MaxUniqueKey+1)), bad("unique_key")},
		{defArgs(DefUnique, "u", DefUniqueTTL, "0"), bad("unique_ttl")},
		{withPairs(defArgs(), "parent", "1"), bad("option")},
		{withPairs(defArgs(), "onfail", "ignore"), bad("option")},
		{withPairs(defArgs(), "due", "1"), bad("option")},
		{withPairs(defArgs(), "due", ""), bad("option")},
		{withPairs(defArgs(), "timeout", "86400001"), bad("timeout")},
		{withPairs(defArgs(), "kind", strings.Repeat("k", protocol.MaxKind+1)), bad("kind")},
		{withPairs(defArgs(), "headers", strings.Repeat("h", protocol.MaxHeaders+1)), bad("headers")},
		// the job options after wait, in ADD's order
		{withPairs(defArgs(), "kind", strings.Repeat("k", protocol.MaxKind+1), "timeout", "x"), bad("timeout")},
		{withPairs(defArgs(), "timeout", "x", "wait", "x"), bad("wait")},
		{withPairs(defArgs(), "lane", "a", "lane", "b"), bad("option")},
		{withPairs(defArgs(), "lane", strings.Repeat("l", protocol.MaxLaneName+1)), bad("lane")},
		{withPairs(defArgs(), "wait", "86400001"), bad("wait")},
		// the option names first, then the template, then the options'
		// values in ADD's column order (lane before wait)
		{withPairs(defArgs(), "wait", "x", "nope", "1"), bad("option")},
		{withPairs(defArgs(DefPriority, "x"), "nope", "1"), bad("option")},
		{withPairs(defArgs(DefPriority, "x"), "wait", "x"), bad("priority")},
		{withPairs(defArgs(), "wait", "x", "lane", strings.Repeat("l", protocol.MaxLaneName+1)), bad("lane")},
		// the first bad value in ARGV order wins
		{defArgs(DefJitter, "x", DefPriority, "x"), bad("jitter")},
	} {
		_, err := ScheduleValues("schedule.set", tc.e)
		refusedWith(t, err, tc.want)
	}
	// empty option values mean none
	if _, err := ScheduleValues("schedule.set", withPairs(defArgs(), "lane", "", "wait", "", "timeout", "", "kind", "", "headers", "")); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeDef(t *testing.T) {
	t.Parallel()
	e := withPairs(defArgs(DefData, "a:\x00b"), "lane", "x")
	strs := make([]string, len(e))
	for i, b := range e {
		strs[i] = string(b)
	}
	enc := protocol.EncodeList(strs)
	d, ok := DecodeDef(Str(enc), nil)
	if !ok || string(d.Elems[DefData]) != "a:\x00b" || d.Options != 1 {
		t.Fatalf("decode %q: %v %+v", enc, ok, d)
	}
	for _, broken := range []string{"", "x", "01:a", "5:every", enc + "1", enc + "1:x", enc[:len(enc)-1], "3:abc"} {
		if _, ok := DecodeDef(Str(broken), nil); ok {
			t.Errorf("%q decoded", broken)
		}
	}
	if _, ok := DecodeDef(Field{}, nil); ok {
		t.Error("an absent definition decoded")
	}
	// the same decoding as the protocol's
	for _, s := range []string{"", "0:", "1:a0:", "2:ab", "10:0123456789"} {
		got, ok := DecodeList([]byte(s), nil)
		want, wok := protocol.DecodeList(s)
		if ok != wok || len(got) != len(want) {
			t.Errorf("%q: %v %v, protocol %v %v", s, got, ok, want, wok)
		}
	}
}

func TestState(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want State
	}{
		{"1 0 5 6 0", State{Exists: true, Rev: 1, Last: 5, Next: 6}},
		{"2 3 4 5 1", State{Exists: true, Rev: 2, Count: 3, Last: 4, Next: 5, Paused: true}},
		{"2 3", State{Exists: true, Rev: 2, Count: 3}},
		{"x 01 4  1", State{Exists: true, Last: 4, Paused: true}}, // single spaces: the fifth part is 1
		{"1 2 3 4 2", State{Exists: true, Rev: 1, Count: 2, Last: 3, Next: 4}},
		{"", State{Exists: true}},
	} {
		if got := ParseState(Str(tc.in)); got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
		}
	}
	if ParseState(Field{}).Exists {
		t.Error("an absent state exists")
	}
	if got := string(AppendState(nil, State{Rev: 7, Count: 1, Last: 2, Next: 0, Paused: true})); got != "7 1 2 0 1" {
		t.Errorf("encoded %q", got)
	}
}
