package verdict

import (
	"bytes"
	"errors"
	"slices"
	"sort"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

func args(xs ...string) [][]byte {
	out := make([][]byte, len(xs))
	for i, x := range xs {
		out[i] = []byte(x)
	}
	return out
}

func wantText(t *testing.T, err error, text string) {
	t.Helper()
	if text == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if err == nil || err.Error() != text {
		t.Fatalf("got %v, want %q", err, text)
	}
}

func TestScore(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{"0": true, "1": true, "9007199254740991": true, "9007199254740992": false,
		"": false, "01": false, "-1": false, "1.5": false, "99999999999999999": false, " 1": false} {
		if _, ok := Score([]byte(s)); ok != want {
			t.Errorf("Score(%q) = %v, want %v", s, ok, want)
		}
	}
}

func TestJobsValues(t *testing.T) {
	t.Parallel()
	bad := func(name string) string { return protocol.ErrBadArg(protocol.Jobs.Name, name) }
	for _, c := range []struct {
		argv []string
		err  string
	}{
		{[]string{"dead", "", "0", "", "", "10", "0"}, ""},
		{[]string{"pending", "l1", "1", "5", "7", "1000", "1024"}, ""},
		{[]string{"pending", "l1", "1", "5", "", "1", "0"}, ""}, // an empty member is a member
		{[]string{"Dead", "", "0", "", "", "10", "0"}, bad("state")},
		{[]string{"dead", "l1", "0", "", "", "10", "0"}, bad("lane")},
		{[]string{"pending", string(make([]byte, 129)), "0", "", "", "10", "0"}, bad("lane")},
		{[]string{"dead", "", "2", "", "", "10", "0"}, bad("newest")},
		{[]string{"dead", "", "0", "", "m", "10", "0"}, bad("after")},
		{[]string{"dead", "", "0", "01", "m", "10", "0"}, bad("after")},
		{[]string{"dead", "", "0", "", "", "0", "0"}, bad("count")},
		{[]string{"dead", "", "0", "", "", "1001", "0"}, bad("count")},
		{[]string{"dead", "", "0", "", "", "10", "1025"}, bad("clip")},
	} {
		_, err := JobsValues(args(c.argv...))
		wantText(t, err, c.err)
	}
}

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

// The search finds, for every member of a sorted group, how many sort
// before it, in at most log2(g)+1 probes.
func TestSearch(t *testing.T) {
	t.Parallel()
	group := [][]byte{[]byte(""), []byte("1"), []byte("10"), []byte("2"), []byte("a\x00"), []byte("a\xff"), []byte("b")}
	sort.Slice(group, func(i, j int) bool { return bytes.Compare(group[i], group[j]) < 0 })
	for _, m := range append(slices.Clone(group), []byte("0"), []byte("zz"), []byte("a")) {
		want := 0
		for _, g := range group {
			if bytes.Compare(g, m) < 0 {
				want++
			}
		}
		s := NewSearch(int64(len(group)))
		probes := 0
		for {
			off, ok := s.Probe()
			if !ok {
				break
			}
			probes++
			s.Seen(group[off], m)
		}
		if s.Before() != int64(want) || probes > 4 {
			t.Errorf("member %q: %d before in %d probes, want %d", m, s.Before(), probes, want)
		}
	}
	empty := NewSearch(0)
	if _, ok := empty.Probe(); ok || empty.Before() != 0 {
		t.Error("a search of an empty group probes")
	}
}

func TestOnCursorAndScoreOf(t *testing.T) {
	t.Parallel()
	c := Cursor{Set: true, Score: 1764600000123, Member: []byte("5")}
	if !OnCursor(c, Str("1764600000123")) || !OnCursor(c, Str("1.764600000123e+12")) {
		t.Error("the same score in another spelling is not the cursor's")
	}
	if OnCursor(c, Str("1764600000124")) || OnCursor(c, Field{}) {
		t.Error("another score, or none, is the cursor's")
	}
	for s, want := range map[string]int64{"0": 0, "17": 17, "1.5e3": 1500, "4398046511105": 4398046511105, "x": 0, "-1": -1} {
		if got := ScoreOf([]byte(s)); got != want {
			t.Errorf("ScoreOf(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestPageRange(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		newest      bool
		b, e, count int64
		from, to    int64
		ok          bool
	}{
		{false, 10, 0, 5, 0, 5, true},
		{false, 3, 4, 5, 4, 9, true},
		{true, 10, 0, 5, 4, 9, true},
		{true, 3, 3, 5, 0, 2, true},
		{true, 0, 0, 5, 0, 0, false},
	} {
		from, to, ok := PageRange(c.newest, c.b, c.e, c.count)
		if from != c.from || to != c.to || ok != c.ok {
			t.Errorf("%+v: %d %d %v", c, from, to, ok)
		}
	}
}

func TestReadJobsRow(t *testing.T) {
	t.Parallel()
	f := []Field{Str("3"), Str("dead"), Str("5"), Str("1001"), Str("l1"), Str("01"), Str("2"), Str("1700"), Str("boom!"), {}}
	r := ReadJobsRow(f, 20000, 3)
	if !r.Present || string(r.State) != "dead" || r.Att != 3 || r.Max != 5 || r.Prio != 0 || string(r.Lane) != "l1" ||
		r.Parent != nil || r.Deps != 2 || r.At != 1700 || string(r.Err) != "boo" || r.ErrSize != 5 || r.Prog != nil ||
		r.DataSize != 20000 || r.NeedsData {
		t.Errorf("row %+v", r)
	}
	r = ReadJobsRow(f, 5, 0)
	if string(r.Err) != "" || r.Err == nil || r.NeedsData {
		t.Errorf("clip 0: err %q, needs data %v", r.Err, r.NeedsData)
	}
	r = ReadJobsRow(f, 5, 2)
	r.SetPreview(Str("hello"), 2)
	if !r.NeedsData || string(r.Preview) != "he" {
		t.Errorf("preview %q", r.Preview)
	}
	if r := ReadJobsRow([]Field{{}, Str("dead")}, 5, 3); r.Present || r.State != nil || r.DataSize != 0 {
		t.Errorf("absent row %+v", r)
	}
}

func TestRequeueDeadJob(t *testing.T) {
	t.Parallel()
	f := DeadFilter{Max: protocol.MaxScore}
	row := []Field{Str("dead"), Str("3"), Str("3"), Str("10"), Str("l1"), {}, {}, {}, Str("boom")}
	mv, mx, ok := RequeueDeadJob(&f, []byte("7"), 100, row)
	if !ok || mv.To != ToLane || string(mv.Lane) != "l1" || mv.Score != protocol.PendingScore(10, 7) || mx != 6 {
		t.Errorf("%+v %d %v", mv, mx, ok)
	}
	row[4] = Field{}
	if mv, _, _ := RequeueDeadJob(&f, []byte("7"), 100, row); mv.To != ToPending {
		t.Errorf("no lane: %+v", mv)
	}
	row[0] = Str("pending")
	if _, _, ok := RequeueDeadJob(&f, []byte("7"), 100, row); ok {
		t.Error("took a job that is not dead")
	}
}

func TestRemoveDeadJob(t *testing.T) {
	t.Parallel()
	f := DeadFilter{Max: protocol.MaxScore, Lane: []byte("l1")}
	if RemoveDeadJob(&f, 1, nil) != DeadRowless || RemoveDeadJob(&f, 1, []Field{{}, Str("dead")}) != DeadRowless {
		t.Error("a member without a row is not dropped")
	}
	if RemoveDeadJob(&f, 1, []Field{Str("1"), Str("dead"), Str("l1"), {}, {}}) != DeadTaken {
		t.Error("a matching job is not taken")
	}
	if RemoveDeadJob(&f, 1, []Field{Str("1"), Str("dead"), Str("l2"), {}, {}}) != DeadLeft {
		t.Error("a job of another lane is taken")
	}
}

type retryScript struct {
	version         Reply[Field]
	row             Reply[[]Field] // att state prio lane
	due             Reply[Field]
	pending, signal Reply[int64]
	lanes           Reply[struct{}]
}

func (sc retryScript) run(t *testing.T) ([]RetryRead, RetryStep) {
	t.Helper()
	var s RetrySeen
	needs := drive(t, func() RetryRead { return Retry(7, &s).Need }, func(n RetryRead) {
		switch n {
		case RetryFirst:
			s.Version, s.Row, s.Due, s.Pending, s.Signal = wire(sc.version), sc.row, sc.due, sc.pending, sc.signal
			s.Row.Made, s.Due.Made, s.Pending.Made, s.Signal.Made = true, true, true, true
		case RetryLanes:
			s.Lanes = sc.lanes
			s.Lanes.Made = true
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, Retry(7, &s)
}

func TestRetry(t *testing.T) {
	t.Parallel()
	delayed := Got([]Field{Str("1"), Str("delayed"), Str("900"), {}})
	due := Got(Str("1700000000000"))
	wrong := errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")
	notDelayed := protocol.ErrRetryNotDelayed
	for name, c := range map[string]struct {
		sc   retryScript
		err  string
		gone bool
		lane bool
		sig  bool
	}{
		"to pending, signalled": {sc: retryScript{row: delayed, due: due}, sig: true},
		"to a lane": {sc: retryScript{row: Got([]Field{Str("1"), Str("delayed"), {}, Str("l1")}), due: due,
			pending: Got(int64(0))}, lane: true},
		"gone":             {sc: retryScript{row: Got([]Field{{}, Str("delayed")}), due: due}, gone: true},
		"not delayed":      {sc: retryScript{row: Got([]Field{Str("1"), Str("pending"), {}, {}}), due: due}, err: notDelayed},
		"not in delayed":   {sc: retryScript{row: delayed}, err: notDelayed},
		"row wrong type":   {sc: retryScript{row: Failed[[]Field](wrong), due: due}, err: wrong.Error()},
		"delayed wrong":    {sc: retryScript{row: delayed, due: Failed[Field](wrong)}, err: wrong.Error()},
		"pending wrong":    {sc: retryScript{row: delayed, due: due, pending: Failed[int64](wrong)}, err: wrong.Error()},
		"state before due": {sc: retryScript{row: Got([]Field{Str("1"), Str("dead"), {}, {}}), due: Failed[Field](wrong)}, err: notDelayed},
		"lane refusal first": {sc: retryScript{row: Got([]Field{Str("1"), Str("delayed"), {}, Str("l1")}), due: due,
			pending: Failed[int64](wrong), lanes: Failed[struct{}](errors.New("NOPERM No permissions to access a key"))},
			err: "NOPERM No permissions to access a key"},
	} {
		_, step := c.sc.run(t)
		switch {
		case c.err != "":
			if step.Err == nil || step.Err.Error() != c.err {
				t.Errorf("%s: got %v, want %s", name, step.Err, c.err)
			}
		case step.Err != nil:
			t.Errorf("%s: refused %v", name, step.Err)
		case step.Verdict.Gone != c.gone || (step.Verdict.Lane != nil) != c.lane || step.Verdict.Signal != c.sig:
			t.Errorf("%s: verdict %+v", name, step.Verdict)
		case !c.gone && step.Verdict.Score != protocol.PendingScore(grammar.RowInt(c.sc.row.Val[2].Bytes, c.sc.row.Val[2].Set, protocol.MaxPriority), 7):
			t.Errorf("%s: score %d", name, step.Verdict.Score)
		}
	}
}
