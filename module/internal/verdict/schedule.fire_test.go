package verdict

import (
	"errors"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

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
