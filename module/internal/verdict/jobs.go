package verdict

import (
	"bytes"
	"math"
	"slices"
	"strconv"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// JOBS (docs/PROTOCOL.md, "Operations"): its values, the cursor's place in
// a set (which the dead filters' walks share) and the rows of a page.

// Cursor is a walk's place in a set: after the member Member at score
// Score, or the start of the set when Set is false.
type Cursor struct {
	Set    bool
	Score  int64
	Member []byte
}

// Score reads a score argument (a cursor's, a filter's min and max): a
// canonical decimal 0..protocol.MaxScore, at most 16 digits.
func Score(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 16 || b[0] == '0' && len(b) > 1 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, v <= protocol.MaxScore
}

// CursorValue reads the cursor arguments after_score and after_member of
// verb: both empty is the start; else a score and any member bytes (bad
// after otherwise).
func CursorValue(verb string, score, member []byte) (Cursor, error) {
	if len(score) == 0 && len(member) == 0 {
		return Cursor{}, nil
	}
	v, ok := Score(score)
	if !ok {
		return Cursor{}, refusal(protocol.ErrBadArg(verb, "after"))
	}
	return Cursor{Set: true, Score: v, Member: member}, nil
}

// JobsArgs are JOBS' values.
type JobsArgs struct {
	// State names the set; Lane, when not nil, a lane's set in place of
	// pending.
	State  string
	Lane   []byte
	Newest bool
	After  Cursor
	Count  int64
	Clip   int64
}

// JobsValues reads JOBS' ARGV (state lane newest after_score after_member
// count clip), in order.
func JobsValues(args [][]byte) (JobsArgs, error) {
	verb := protocol.Jobs.Name
	var a JobsArgs
	i := slices.IndexFunc(protocol.JobsStates, func(s string) bool { return s == string(args[0]) })
	if i < 0 {
		return a, refusal(protocol.ErrBadArg(verb, "state"))
	}
	a.State = protocol.JobsStates[i]
	if l := args[1]; len(l) > 0 {
		if len(l) > protocol.MaxLaneName || a.State != protocol.StatePending {
			return a, refusal(protocol.ErrBadArg(verb, "lane"))
		}
		a.Lane = l
	}
	switch string(args[2]) {
	case "0":
	case "1":
		a.Newest = true
	default:
		return a, refusal(protocol.ErrBadArg(verb, "newest"))
	}
	var err error
	if a.After, err = CursorValue(verb, args[3], args[4]); err != nil {
		return a, err
	}
	var ok bool
	if a.Count, ok = grammar.Decimal(args[5], 1, protocol.MaxCount); !ok {
		return a, refusal(protocol.ErrBadArg(verb, "count"))
	}
	if a.Clip, ok = grammar.Decimal(args[6], 0, protocol.MaxClip); !ok {
		return a, refusal(protocol.ErrBadArg(verb, "clip"))
	}
	return a, nil
}

// ScoreOf reads a score as the server replies it (ZSCORE, ZRANGE
// WITHSCORES: a double's text) as an integer, as the Lua's tonumber and
// integer reply do: truncated towards zero. Every score the verbs write is
// an integer below 2^53; another text reads as 0.
func ScoreOf(b []byte) int64 {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) {
		return 0
	}
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	if f <= math.MinInt64 {
		return math.MinInt64
	}
	return int64(f)
}

// OnCursor reports whether the cursor is on a member: its ZSCORE is present
// and equals the cursor's score as a number.
func OnCursor(c Cursor, zscore Field) bool {
	if !zscore.Set {
		return false
	}
	f, err := strconv.ParseFloat(string(zscore.Bytes), 64)
	return err == nil && f == float64(c.Score)
}

// Search is the binary search of a cursor's place among the g members of
// its score (ranks lo … lo + g − 1): it finds how many of them sort before
// the cursor's member, bytewise.
type Search struct {
	lo, hi int64
}

// NewSearch starts a search over a group of g members.
func NewSearch(g int64) Search { return Search{hi: g} }

// Probe is the offset in the group of the next member to read, or false
// when the search is done.
func (s *Search) Probe() (int64, bool) {
	if s.lo >= s.hi {
		return 0, false
	}
	return s.lo + (s.hi-s.lo)/2, true
}

// Seen takes the probed member: before tells whether it sorts before the
// cursor's member.
func (s *Search) Seen(probed, member []byte) {
	mid := s.lo + (s.hi-s.lo)/2
	if bytes.Compare(probed, member) < 0 {
		s.lo = mid + 1
	} else {
		s.hi = mid
	}
}

// Before is the number of the group's members before the cursor's member,
// once the search is done.
func (s *Search) Before() int64 { return s.lo }

// PageRange is the ranks a page reads (ZRANGE from to, inclusive) from the
// cursor's place: oldest first from e, newest first up to b − 1, at most
// count + 1 members. None is false when there is nothing to read.
func PageRange(newest bool, b, e, count int64) (from, to int64, ok bool) {
	if !newest {
		return e, e + count, true
	}
	if b == 0 {
		return 0, 0, false
	}
	return max(0, b-count-1), b - 1, true
}

// JobsRow is one row of a JOBS page, in reply order; a nil slice replies
// null.
type JobsRow struct {
	State          []byte
	Att, Max, Prio int64
	Lane, Parent   []byte
	Deps, At       int64
	Err            []byte
	ErrSize        int64
	Prog           []byte
	DataSize       int64
	Preview        []byte
	Kind           []byte
	// Present: the row has att; NeedsData: the preview needs HGET row data.
	Present, NeedsData bool
}

// JobsFields is the HMGET of a JOBS row, in order.
var JobsFields = []string{protocol.FieldAttempts, protocol.FieldState, protocol.FieldMax, protocol.FieldPriority,
	protocol.FieldLane, protocol.FieldParent, protocol.FieldDeps, protocol.FieldAdded, protocol.FieldError, protocol.FieldProgress,
	protocol.FieldKind}

// ReadJobsRow reads a row from its HMGET (JobsFields) and HSTRLEN data:
// absent (no att) gives the nulls and zeros; texts are cut to clip bytes.
func ReadJobsRow(f []Field, dataSize, clip int64) JobsRow {
	var r JobsRow
	if !at(f, 0).Set {
		return r
	}
	cut := func(x Field) []byte {
		if !x.Set {
			return nil
		}
		b := x.Bytes[:min(int64(len(x.Bytes)), clip)]
		if b == nil {
			b = []byte{}
		}
		return b
	}
	r.Present = true
	// state and max left out of the row read as their defaults
	state := RowState(at(f, 1), f[0])
	r.State = state.Bytes
	if r.State == nil && state.Set {
		r.State = []byte{}
	}
	r.Att = grammar.RowInt(f[0].Bytes, true, grammar.MaxRowInt)
	maxF := RowMax(at(f, 2))
	r.Max = grammar.RowInt(maxF.Bytes, maxF.Set, grammar.MaxRowInt)
	r.Prio = grammar.RowInt(at(f, 3).Bytes, at(f, 3).Set, protocol.MaxPriority)
	r.Lane = LaneName(at(f, 4))
	if p := at(f, 5); p.Set && grammar.ID(p.Bytes) {
		r.Parent = p.Bytes
	}
	r.Deps = grammar.RowInt(at(f, 6).Bytes, at(f, 6).Set, grammar.MaxRowInt)
	r.At = grammar.RowInt(at(f, 7).Bytes, at(f, 7).Set, grammar.MaxRowInt)
	r.Err = cut(at(f, 8))
	r.ErrSize = int64(len(at(f, 8).Bytes))
	r.Prog = cut(at(f, 9))
	// the kind as stored, not cut: ADD stores at most protocol.MaxKind bytes
	if k := at(f, 10); k.Set {
		r.Kind = k.Bytes
		if r.Kind == nil {
			r.Kind = []byte{}
		}
	}
	r.DataSize = dataSize
	r.NeedsData = clip > 0 && dataSize <= protocol.MaxPreviewData
	return r
}

// SetPreview sets the row's preview from the payload HGET row data read.
func (r *JobsRow) SetPreview(data Field, clip int64) {
	if !data.Set {
		return
	}
	r.Preview = data.Bytes[:min(int64(len(data.Bytes)), clip)]
	if r.Preview == nil {
		r.Preview = []byte{}
	}
}
