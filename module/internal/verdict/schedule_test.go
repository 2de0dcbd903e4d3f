package verdict

import (
	"errors"
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

func TestScheduleSet(t *testing.T) {
	t.Parallel()
	wrong := errors.New("WRONGTYPE")
	fields := func(state string, set bool) Reply[[2]Field] {
		return Got([2]Field{Str("def"), {Bytes: []byte(state), Set: set}})
	}
	ok := Got(int64(0))
	st, err := ScheduleSet(&ScheduleSetSeen{Version: wire(Reply[Field]{}), Fields: fields("", false), Due: ok, IDs: ok}, 100)
	if err != nil || st != (State{Rev: 1, Last: 100, Next: 100}) {
		t.Fatalf("new: %+v %v", st, err)
	}
	st, _ = ScheduleSet(&ScheduleSetSeen{Version: wire(Reply[Field]{}), Fields: fields("4 9 50 60 0", true), Due: ok, IDs: ok}, 100)
	if st != (State{Rev: 5, Count: 9, Last: 50, Next: 100}) {
		t.Fatalf("existing: %+v", st)
	}
	st, _ = ScheduleSet(&ScheduleSetSeen{Version: wire(Reply[Field]{}), Fields: fields("4 9 50 0 1", true), Due: ok, IDs: ok}, 100)
	if st != (State{Rev: 5, Count: 9, Last: 50, Paused: true}) {
		t.Fatalf("paused: %+v", st)
	}
	// the order: fence, fields, scheddue, schedids
	_, err = ScheduleSet(&ScheduleSetSeen{Version: Got(Field{}), Fields: Failed[[2]Field](wrong)}, 100)
	refusedWith(t, err, protocol.ErrWireMissing)
	_, err = ScheduleSet(&ScheduleSetSeen{Version: wire(Reply[Field]{}), Fields: Failed[[2]Field](wrong), Due: Failed[int64](errors.New("x"))}, 100)
	if err != wrong {
		t.Fatalf("fields first: %v", err)
	}
	_, err = ScheduleSet(&ScheduleSetSeen{Version: wire(Reply[Field]{}), Fields: fields("", false), Due: ok, IDs: Failed[int64](wrong)}, 100)
	if err != wrong {
		t.Fatalf("schedids: %v", err)
	}
}

func TestSchedulePause(t *testing.T) {
	t.Parallel()
	wrong := errors.New("WRONGTYPE")
	seen := func(state string, set bool, due Reply[int64]) *SchedulePauseSeen {
		return &SchedulePauseSeen{Version: wire(Reply[Field]{}), State: Got(Field{Bytes: []byte(state), Set: set}), Due: due}
	}
	ok := Got(int64(1))
	for _, tc := range []struct {
		seen   *SchedulePauseSeen
		pause  bool
		change bool
		want   State
	}{
		{seen("3 1 50 60 0", true, ok), true, true, State{Rev: 4, Count: 1, Last: 50, Paused: true}},
		{seen("3 1 50 0 1", true, ok), true, false, State{}},
		{seen("", false, ok), true, false, State{}},
		{seen("3 1 50 0 1", true, ok), false, true, State{Rev: 4, Count: 1, Last: 100, Next: 100}},
		{seen("3 1 150 0 1", true, ok), false, true, State{Rev: 4, Count: 1, Last: 150, Next: 100}},
		{seen("3 1 50 60 0", true, ok), false, false, State{}},
		// scheddue is typed only when the state changes
		{seen("3 1 50 0 1", true, Failed[int64](wrong)), true, false, State{}},
	} {
		st, change, err := SchedulePause(tc.seen, tc.pause, 100)
		if err != nil || change != tc.change || st != tc.want {
			t.Errorf("%q pause=%v: %+v %v %v", tc.seen.State.Val.Bytes, tc.pause, st, change, err)
		}
	}
	if _, _, err := SchedulePause(seen("3 1 50 60 0", true, Failed[int64](wrong)), true, 100); err != wrong {
		t.Errorf("scheddue: %v", err)
	}
}

func TestScheduleRemove(t *testing.T) {
	t.Parallel()
	wrong := errors.New("WRONGTYPE")
	ok := Got(int64(0))
	if n, err := ScheduleRemove(&ScheduleRemoveSeen{Version: wire(Reply[Field]{}), Exists: Got(int64(1)), Due: ok, IDs: ok}); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	if n, err := ScheduleRemove(&ScheduleRemoveSeen{Version: wire(Reply[Field]{}), Exists: Got(int64(0)), Due: ok, IDs: ok}); n != 0 || err != nil {
		t.Fatal(n, err)
	}
	if _, err := ScheduleRemove(&ScheduleRemoveSeen{Version: wire(Reply[Field]{}), Exists: Got(int64(0)), Due: Failed[int64](wrong), IDs: ok}); err != wrong {
		t.Fatal(err)
	}
}

func argvOf(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

func TestFireShapeAndValues(t *testing.T) {
	t.Parallel()
	bad := func(name string) string { return protocol.ErrBadArg("schedule.fire", name) }
	arity := protocol.ErrArity("schedule.fire")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"s", "1", "0", "0", "0"}, arity},
		{[]string{"s", "1", "0", "0", "0", "1001"}, bad("count")},
		{[]string{"s", "1", "0", "0", "0", "x"}, bad("count")},
		{[]string{"s", "1", "0", "0", "0", "1"}, arity},
		{[]string{"s", "1", "0", "0", "0", "0", "x"}, arity},
	} {
		_, err := FireArity(argvOf(tc.args...))
		refusedWith(t, err, tc.want)
	}
	if n, err := FireArity(argvOf("s", "1", "0", "5", "0", "2", "1", "0", "5", "0")); n != 2 || err != nil {
		t.Fatal(n, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"s", "0", "0", "5", "0", "0"}, bad("rev")},
		{[]string{"s", "1000000000001", "0", "5", "0", "0"}, bad("rev")},
		{[]string{"s", "1", "253402300800000", "5", "0", "0"}, bad("from")},
		{[]string{"s", "1", "6", "5", "0", "0"}, bad("upto")},
		{[]string{"s", "1", "0", "5", "5", "0"}, bad("next")},
		{[]string{"s", "1", "0", "5", "253402300800000", "0"}, bad("next")},
		{[]string{"s", "1", "2", "5", "0", "1", "2", "0"}, bad("time")}, // not after from
		{[]string{"s", "1", "2", "5", "0", "1", "6", "0"}, bad("time")}, // after upto
		{[]string{"s", "1", "2", "5", "0", "2", "4", "0", "4", "0"}, bad("time")},
		{[]string{"s", "1", "2", "5", "0", "1", "3", "86400001"}, bad("jitter")},
		{[]string{"s", "1", "2", "5", "0", "2", "3", "x", "x", "0"}, bad("jitter")},
	} {
		var a FireArgs
		n := (len(tc.args) - 6) / 2
		refusedWith(t, FireValues(argvOf(tc.args...), n, &a), tc.want)
	}
	var a FireArgs
	if err := FireValues(argvOf("s", "1", "2", "9", "10", "2", "3", "1", "9", "0"), 2, &a); err != nil || a.Upto != 9 || len(a.Times) != 2 || a.Times[1] != 9 || a.Jitters[0] != 1 {
		t.Fatalf("%+v %v", a, err)
	}
}

func TestFire(t *testing.T) {
	t.Parallel()
	enc := func(e [][]byte) string {
		s := make([]string, len(e))
		for i, b := range e {
			s[i] = string(b)
		}
		return protocol.EncodeList(s)
	}
	def := enc(defArgs(DefJitter, "10", DefStart, "100", DefEnd, "1000", DefLimit, "5"))
	seen := func(def, state string) *FireSeen {
		return &FireSeen{Version: wire(Reply[Field]{}), Fields: Got([2]Field{Str(def), Str(state)})}
	}
	args := func(rev, from, upto, next int64, times ...int64) *FireArgs {
		a := &FireArgs{Rev: rev, From: from, Upto: upto, Next: next}
		for _, t := range times {
			a.Times, a.Jitters = append(a.Times, t), append(a.Jitters, 0)
		}
		return a
	}
	const now = 500
	v, err := Fire(seen(def, "2 1 100 200 0"), args(2, 100, 300, 400, 200, 300), now, nil)
	if err != nil || v.State != (State{Exists: true, Rev: 2, Count: 3, Last: 300, Next: 400}) || v.Next != 400 || v.Unique {
		t.Fatalf("%+v %v", v, err)
	}
	// finished: the cap reached, or next past end, or no next
	if v, _ := Fire(seen(def, "2 3 100 200 0"), args(2, 100, 300, 400, 200, 300), now, nil); v.Next != 0 || v.State.Next != 0 {
		t.Errorf("cap: %+v", v)
	}
	if v, _ := Fire(seen(def, "2 1 100 200 0"), args(2, 100, 300, 1001), now, nil); v.Next != 0 {
		t.Errorf("end: %+v", v)
	}
	if v, _ := Fire(seen(def, "2 1 100 200 0"), args(2, 100, 300, 0), now, nil); v.Next != 0 || v.State.Count != 1 {
		t.Errorf("no next: %+v", v)
	}
	for _, tc := range []struct {
		seen *FireSeen
		args *FireArgs
		want string
	}{
		{&FireSeen{Version: Got(Field{}), Fields: Failed[[2]Field](errors.New("x"))}, args(2, 100, 300, 0), protocol.ErrWireMissing},
		{seen(def, ""), args(2, 100, 300, 0), protocol.ErrScheduleChanged},
		{&FireSeen{Version: wire(Reply[Field]{}), Fields: Got([2]Field{Str(def), {}})}, args(2, 100, 300, 0), protocol.ErrScheduleChanged},
		{seen(def, "2 1 100 0 1"), args(2, 100, 300, 0), protocol.ErrScheduleChanged},
		{seen(def, "3 1 100 200 0"), args(2, 100, 300, 0), protocol.ErrScheduleChanged},
		{seen(def, "2 1 101 200 0"), args(2, 100, 300, 0), protocol.ErrScheduleChanged},
		// stale before not due, not due before broken
		{seen("broken", "3 1 100 200 0"), args(2, 100, 600, 0), protocol.ErrScheduleChanged},
		{seen("broken", "2 1 100 200 0"), args(2, 100, 600, 0), protocol.ErrScheduleNotDue},
		{seen("broken", "2 1 100 200 0"), args(2, 100, 300, 0), protocol.ErrScheduleBroken},
		{seen(def, "2 1 100 200 0"), args(2, 10, 300, 0, 50), protocol.ErrScheduleChanged},
		{seen(def, "2 1 10 200 0"), args(2, 10, 300, 0, 50), protocol.ErrScheduleOutside},     // before start
		{seen(def, "2 1 900 200 0"), args(2, 900, 1100, 0, 1100), protocol.ErrScheduleNotDue}, // not due first
		{seen(def, "2 4 100 200 0"), args(2, 100, 300, 0, 200, 300), protocol.ErrScheduleOutside},
	} {
		_, err := Fire(tc.seen, tc.args, now, nil)
		refusedWith(t, err, tc.want)
	}
	// after end, and a jitter above the schedule's
	if _, err := Fire(seen(def, "2 1 900 200 0"), args(2, 900, 1100, 0, 1001), 2000, nil); err == nil || err.Error() != protocol.ErrScheduleOutside {
		t.Errorf("after end: %v", err)
	}
	a := args(2, 100, 300, 0, 200)
	a.Jitters[0] = 11
	if _, err := Fire(seen(def, "2 1 100 200 0"), a, now, nil); err == nil || err.Error() != protocol.ErrScheduleOutside {
		t.Errorf("jitter: %v", err)
	}
	// with no occurrences, none is outside; a unique template asks for its holder
	if _, err := Fire(seen(def, "2 9 100 200 0"), args(2, 100, 300, 0), now, nil); err != nil {
		t.Errorf("no occurrence: %v", err)
	}
	u := enc(defArgs(DefUnique, "k", DefUniqueTTL, "1000"))
	if v, err := Fire(seen(u, "2 0 100 200 0"), args(2, 100, 300, 0, 200), now, nil); err != nil || !v.Unique || string(v.Def.Unique()) != "k" {
		t.Errorf("unique: %+v %v", v, err)
	}
	if v, _ := Fire(seen(u, "2 0 100 200 0"), args(2, 100, 300, 0), now, nil); v.Unique {
		t.Errorf("unique without occurrences: %+v", v)
	}
}
