package verdict

import (
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestDeadFilterValues(t *testing.T) {
	t.Parallel()
	v := protocol.RequeueDead.Name
	bad := func(name string) string { return protocol.ErrBadArg(v, name) }
	for _, c := range []struct {
		argv []string
		err  string
	}{
		{[]string{"1000", "", "", "0", "9007199254740991", "", ""}, ""},
		{[]string{"0", "", "", "0", "1", "", ""}, bad("limit")},
		{[]string{"1", "x", "", "0", "1", "", ""}, bad("after")},
		{[]string{"1", "", "", "-1", "1", "", ""}, bad("min")},
		{[]string{"1", "", "", "0", "9007199254740992", "", ""}, bad("max")},
		{[]string{"1", "", "", "0", "1", string(make([]byte, 129)), ""}, bad("lane")},
		{[]string{"1", "", "", "0", "1", "", string(make([]byte, protocol.MaxText+1))}, bad("error")},
	} {
		_, err := DeadFilterValues(v, args(c.argv...))
		wantText(t, err, c.err)
	}
}

func TestDeadFilterMatches(t *testing.T) {
	t.Parallel()
	f := DeadFilter{Min: 10, Max: 20, Lane: []byte("l1"), Error: []byte("oo")}
	dead, att := Str(protocol.StateDead), Str("3")
	for _, c := range []struct {
		score            int64
		att, state, lane Field
		err              Field
		want             bool
	}{
		{15, att, dead, Str("l1"), Str("boom"), true},
		{10, att, dead, Str("l1"), Str("oo"), true},
		{20, att, dead, Str("l1"), Str("foo"), true},
		{9, att, dead, Str("l1"), Str("boom"), false},
		{21, att, dead, Str("l1"), Str("boom"), false},
		{15, Field{}, dead, Str("l1"), Str("boom"), false},
		{15, att, Str("pending"), Str("l1"), Str("boom"), false},
		{15, att, Str("dead "), Str("l1"), Str("boom"), false},
		{15, att, dead, Str("l2"), Str("boom"), false},
		{15, att, dead, Field{}, Str("boom"), false},
		{15, att, dead, Str("l1"), Field{}, false},
		{15, att, dead, Str("l1"), Str("o"), false},
	} {
		if got := f.Matches(c.score, c.att, c.state, c.lane, c.err); got != c.want {
			t.Errorf("%+v: %v", c, got)
		}
	}
	any := DeadFilter{Max: protocol.MaxScore}
	if !any.Matches(0, att, dead, Field{}, Field{}) {
		t.Error("the open filter does not take a dead job")
	}
}

func TestWalk(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		scores   []int64
		limit    int64
		max      int64
		examined int
		more     bool
	}{
		{nil, 3, 100, 0, false},
		{[]int64{1, 2}, 3, 100, 2, false},
		{[]int64{1, 2, 3}, 3, 100, 3, false},
		{[]int64{1, 2, 3, 4}, 3, 100, 3, true},
		{[]int64{1, 2, 3, 101}, 3, 100, 3, false},
		{[]int64{1, 101, 102}, 3, 100, 1, false},
		{[]int64{101}, 3, 100, 0, false},
		{[]int64{5, 5}, 1, 5, 1, true},
	} {
		e, more := Walk(c.scores, c.limit, c.max)
		if e != c.examined || more != c.more {
			t.Errorf("Walk(%v, %d, %d) = %d, %v; want %d, %v", c.scores, c.limit, c.max, e, more, c.examined, c.more)
		}
	}
	if WalkStart(3, 7) != 7 || WalkStart(9, 7) != 9 {
		t.Error("WalkStart is not the later of the two")
	}
}
