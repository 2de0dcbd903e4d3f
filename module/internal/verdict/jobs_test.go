package verdict

import (
	"bytes"
	"slices"
	"sort"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
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
