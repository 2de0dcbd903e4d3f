package verdict

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

type claimScript struct {
	version Reply[Field]
	paused  Reply[Field]
	pending Reply[[][]byte]
	active  Reply[int64]
	turns   Reply[int64]            // unmade: no lane ready (0)
	rows    map[string]Reply[Field] // att by member; absent: no row
}

// metaOf is CLAIM's meta read with paused as scripted, its other fields
// absent.
func metaOf(paused Reply[Field]) Reply[[len(ClaimMetaFields)]Field] {
	if paused.Err != nil {
		return Failed[[len(ClaimMetaFields)]Field](paused.Err)
	}
	var m [len(ClaimMetaFields)]Field
	m[0] = paused.Val
	return Got(m)
}

func (sc claimScript) run(t *testing.T) ([]ClaimRead, ClaimStep, []string) {
	t.Helper()
	var s ClaimSeen
	var read []string
	needs := drive(t, func() ClaimRead { return Claim(1000, &s).Need }, func(n ClaimRead) {
		switch n {
		case ClaimFirst:
			s.Version, s.Meta, s.Pending, s.Active, s.Turns = wire(sc.version), metaOf(sc.paused), sc.pending, sc.active, sc.turns
			s.Pending.Made, s.Active.Made, s.Turns.Made = true, true, true
		case ClaimRows:
			s.Rows = make([]Reply[Field], len(s.Members))
			for i, m := range s.Members {
				if JobMember(m) {
					read = append(read, string(m))
					s.Rows[i] = sc.rows[string(m)]
					s.Rows[i].Made = true
				}
			}
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, Claim(1000, &s), read
}

func TestClaim(t *testing.T) {
	t.Parallel()
	first, both := []ClaimRead{ClaimFirst}, []ClaimRead{ClaimFirst, ClaimRows}
	head := Got(members("5", "x", "01", "6", "7"))
	for _, tc := range []struct {
		name  string
		sc    claimScript
		needs []ClaimRead
		v     ClaimVerdict
		err   error
	}{
		{"paused", claimScript{paused: Got(Str("1")), pending: Failed[[][]byte](errA)}, first, ClaimVerdict{Empty: true}, nil},
		{"nothing pending", claimScript{pending: Got(members()), active: Failed[int64](errA)}, first, ClaimVerdict{Empty: true}, nil},
		{"paused means exactly 1", claimScript{paused: Got(Str("yes")), pending: Got(members()), active: Failed[int64](errA)}, first, ClaimVerdict{Empty: true}, nil},
		{"meta not a hash", claimScript{paused: Failed[Field](errA), pending: Failed[[][]byte](errB)}, first, ClaimVerdict{}, errA},
		{"pending not a zset", claimScript{pending: Failed[[][]byte](errA), active: Failed[int64](errB)}, first, ClaimVerdict{}, errA},
		{"takes rows with att, in pending order", claimScript{pending: head, rows: map[string]Reply[Field]{
			"5": Got(Str("0")), "6": Got(Field{}), "7": Got(Str("-1")),
		}}, both, ClaimVerdict{Jobs: []ClaimJob{{Member: 0, Attempt: 1}, {Member: 4, Attempt: 0}}}, nil},
		{"no member is an id", claimScript{pending: Got(members("x", "0"))}, both, ClaimVerdict{Jobs: []ClaimJob{}}, nil},
		{"a row not a hash, before active", claimScript{pending: head, active: Failed[int64](errB), rows: map[string]Reply[Field]{
			"5": Got(Str("1")), "6": Failed[Field](errA), "7": Got(Str("x")),
		}}, both, ClaimVerdict{}, errA},
		{"att not an integer", claimScript{pending: head, rows: map[string]Reply[Field]{
			"5": Got(Str("1")), "6": Got(Str("1.5")), "7": Failed[Field](errA),
		}}, both, ClaimVerdict{}, grammar.Refusal(protocol.ErrHashNotInteger)},
		{"att overflows", claimScript{pending: head, rows: map[string]Reply[Field]{
			"5": Got(Str("9223372036854775807")),
		}}, both, ClaimVerdict{}, grammar.Refusal(protocol.ErrOverflow)},
		{"active not a zset, last", claimScript{pending: head, active: Failed[int64](errA), rows: map[string]Reply[Field]{"5": Got(Str("1"))}}, both, ClaimVerdict{}, errA},
	} {
		needs, st, read := tc.sc.run(t)
		if !reflect.DeepEqual(needs, tc.needs) || !errors.Is(st.Err, tc.err) || (tc.err == nil && st.Err != nil) ||
			st.Verdict.Empty != tc.v.Empty || len(st.Verdict.Jobs) != len(tc.v.Jobs) || (len(tc.v.Jobs) > 0 && !reflect.DeepEqual(st.Verdict.Jobs, tc.v.Jobs)) {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
		if len(tc.needs) == 2 && tc.sc.pending.Val != nil && len(tc.sc.pending.Val) == 5 && !reflect.DeepEqual(read, []string{"5", "6", "7"}) {
			t.Errorf("%s: rows read %q, want the members that are ids", tc.name, read)
		}
	}
	for _, tc := range fenceCases {
		needs, st, _ := claimScript{version: tc.version, paused: Failed[Field](errB)}.run(t)
		if !reflect.DeepEqual(needs, first) || !errors.Is(st.Err, tc.want) {
			t.Errorf("fence %s: %v %+v", tc.name, needs, st)
		}
	}
	// a row the caller may not touch is its read's error: the rows after it
	// are not read, and a refusal before it wins
	s := ClaimSeen{Version: wire(Reply[Field]{}), Meta: metaOf(Got(Field{})), Pending: Got(members("5", "6", "7")), Active: Got[int64](0), Turns: Got[int64](0)}
	s.Rows = []Reply[Field]{Got(Str("1")), Failed[Field](errA), {}}
	if st := Claim(3, &s); !errors.Is(st.Err, errA) {
		t.Errorf("denied row: %+v", st)
	}
	s.Rows[0] = Got(Str("x"))
	if st := Claim(3, &s); !errors.Is(st.Err, grammar.Refusal(protocol.ErrHashNotInteger)) {
		t.Errorf("refusal before a denied row: %+v", st)
	}
}

// claimLaneScript scripts a claim with lanes ready: meta's turn and pturn,
// the rate fields, pending's head, the lanes of turns (name, score and
// laneinfo fields) and their jobs, every row present with att 0.
type claimLaneScript struct {
	meta    [len(ClaimMetaFields)]Field
	rate    Reply[RateLog] // the rate log's first live and last entries
	pending []string
	lanes   []ClaimLane
	jobs    map[string][]string // each lane's jobs, in order: ZRANGE and ZCARD of its set
	// exact: the lanes come with their laneinfo fields and sizes made (as
	// the spec reads them before the turns are given) instead of through
	// the native executor's heads-first reads
	exact bool
}

func (sc claimLaneScript) run(t *testing.T, count int64) ([]ClaimRead, ClaimStep, *ClaimSeen) {
	t.Helper()
	s := &ClaimSeen{}
	var needs []ClaimRead
	for range 12 {
		n := Claim(count, s).Need
		if n == ClaimNone {
			return needs, Claim(count, s), s
		}
		for _, seen := range needs {
			if seen == n && n != ClaimHeads {
				t.Fatalf("read %v asked for twice (after %v)", n, needs)
			}
		}
		needs = append(needs, n)
		switch n {
		case ClaimFirst:
			s.Version, s.Meta, s.Active = wire(Reply[Field]{}), Got(sc.meta), Got[int64](0)
			s.Pending, s.Turns = Got(members(sc.pending...)), Got(int64(len(sc.lanes)))
		case ClaimRate:
			s.Rate = sc.rate
		case ClaimTurns:
			s.Ready = Got([]ClaimLane{})
			for _, l := range sc.lanes {
				r := ClaimLane{Name: l.Name, Score: l.Score}
				if sc.exact {
					r.Info, r.Waiting = l.Info, Got(int64(len(sc.jobs[string(l.Name)])))
				}
				s.Ready.Val = append(s.Ready.Val, r)
			}
			if c := Claim(count, s).Verdict.Count; int64(len(s.Ready.Val)) > c {
				s.Ready.Val = s.Ready.Val[:c]
			}
		case ClaimHeads:
			s.LaneReads++
			for i := range s.Ready.Val {
				l := &s.Ready.Val[i]
				jobs := sc.jobs[string(l.Name)]
				if !l.Info.Made {
					l.Info = sc.lanes[i].Info
				}
				if l.Ask > 0 {
					l.Heads, l.Asked = Got(members(jobs[:min(int64(len(jobs)), l.Ask)]...)), l.Ask
				}
				if l.Card {
					l.Waiting = Got(int64(len(jobs)))
				}
			}
		case ClaimRows:
			s.Rows = make([]Reply[Field], len(s.Members))
			for i, m := range s.Members {
				if JobMember(m) {
					s.Rows[i] = Got(Str("0"))
				}
			}
			s.Registry = Got[int64](int64(len(sc.lanes)))
		default:
			t.Fatalf("unknown read %d", n)
		}
	}
	t.Fatalf("the verdict keeps asking for reads: %v", needs)
	return nil, ClaimStep{}, nil
}

// readyLane is a lane of turns as read: its score and its laneinfo fields.
func readyLane(name string, score float64, active, cp, paused string) ClaimLane {
	var info [3]Field
	for i, v := range []string{active, cp, paused} {
		if v != "" {
			info[i] = Str(v)
		}
	}
	return ClaimLane{Name: []byte(name), Score: score, Info: Got(info)}
}

func TestClaimLanes(t *testing.T) {
	t.Parallel()
	var meta [len(ClaimMetaFields)]Field
	meta[claimTurn], meta[claimPendingTurn], meta[claimLaneWait] = Str("6"), Str("4"), Str("5")
	sc := claimLaneScript{
		meta:    meta,
		pending: []string{"1", "2"},
		lanes: []ClaimLane{
			readyLane("a", 2, "", "", ""),   // before pending
			readyLane("b", 4, "1", "2", ""), // capped at 2, one active: supply 1
			readyLane("c", 5, "", "", "1"),  // paused behind the verbs' back: stale
			readyLane("d", 9, "", "", ""),
		},
		jobs: map[string][]string{"a": {"10", "11"}, "b": {"20", "21", "22"}, "c": {"30", "31", "32", "33"}, "d": {"40"}},
	}
	// the first batch expects one turn per participant; a, given a second,
	// is read again (its two jobs, fewer than the three asked, are its size)
	needs, st, s := sc.run(t, 5)
	if !reflect.DeepEqual(needs, []ClaimRead{ClaimFirst, ClaimTurns, ClaimHeads, ClaimHeads, ClaimRows}) || st.Err != nil {
		t.Fatalf("%v %+v", needs, st)
	}
	// order: a (2), pending (4, before b at equal turn), b (4), d (9); c is
	// stale. Pass 1: a, pending, b, d; pass 2: a.
	var got []string
	for _, j := range st.Verdict.Jobs {
		got = append(got, string(s.Members[j.Member]))
	}
	if want := []string{"10", "1", "20", "40", "11"}; !reflect.DeepEqual(got, want) {
		t.Errorf("jobs %q, want %q", got, want)
	}
	v := st.Verdict
	if !v.Lanes || v.Given != 5 || v.Turn != 6 || v.PendingTaken != 1 || v.PendingLast != 2 || !v.SetWait || v.Wait != 1 {
		t.Errorf("verdict %+v", v)
	}
	lanes := s.Ready.Val
	for i, want := range []struct {
		taken, last    int64
		stale, drained bool
	}{{2, 5, false, true}, {1, 3, false, false}, {0, 0, true, false}, {1, 4, false, true}} {
		if lanes[i].Taken != want.taken || lanes[i].Last != want.last || lanes[i].Stale != want.stale || lanes[i].Drained != want.drained {
			t.Errorf("lane %s: %+v", lanes[i].Name, lanes[i])
		}
	}
	// only stale lanes and no pending: the empty array, nothing read after
	sc = claimLaneScript{meta: meta, lanes: []ClaimLane{readyLane("a", 0, "", "", "1")}, jobs: map[string][]string{"a": {"1", "2", "3"}}}
	needs, st, _ = sc.run(t, 5)
	if !reflect.DeepEqual(needs, []ClaimRead{ClaimFirst, ClaimTurns, ClaimHeads}) || !st.Verdict.Empty {
		t.Errorf("stale: %v %+v", needs, st)
	}
	// the rate cuts the count: one turn, to pending first at equal turn
	meta[claimRateMax], meta[claimRateWindow], meta[claimPendingTurn], meta[claimTurn] = Str("3"), Str("1000"), Str("0"), Str("0")
	sc = claimLaneScript{
		meta: meta, rate: Got(rateLog(10_000, m(0, 1), 9_100, m(1, 1), 9_600)),
		pending: []string{"1", "2"}, lanes: []ClaimLane{readyLane("a", 0, "", "", "")},
		jobs: map[string][]string{"a": {"10", "11"}},
	}
	needs, st, s = sc.run(t, 5)
	if !reflect.DeepEqual(needs, []ClaimRead{ClaimFirst, ClaimRate, ClaimTurns, ClaimHeads, ClaimRows}) || len(st.Verdict.Jobs) != 1 ||
		string(s.Members[0]) != "1" || !st.Verdict.Rate || st.Verdict.RateNext != 2 || st.Verdict.RateNow != 10_000 || st.Verdict.RateAt != 10_000 || st.Verdict.Count != 1 {
		t.Errorf("rate: %v %+v", needs, st)
	}
	// a window used up refuses until its first live entry leaves it
	sc.rate = Got(rateLog(10_000, m(4, 1), 9_250, m(6, 1), 9_900))
	if _, st, _ = sc.run(t, 5); !errors.Is(st.Err, grammar.Refusal(protocol.ErrRateLimited(250))) {
		t.Errorf("rate limited: %+v", st)
	}
	// no live entry counts nothing, and the log starts again at 0
	sc.rate = Got(RateLog{Now: 10_000})
	if _, st, _ = sc.run(t, 5); st.Err != nil || !st.Verdict.Rate || st.Verdict.RateNext != 0 || st.Verdict.Count != 3 || len(st.Verdict.Jobs) != 3 {
		t.Errorf("window not open: %+v", st)
	}
	// the log's read refused (WRONGTYPE, or the ACL) is the claim's refusal
	sc.rate = Failed[RateLog](errA)
	if _, st, _ = sc.run(t, 5); !errors.Is(st.Err, errA) {
		t.Errorf("rate refused: %+v", st)
	}
	// the lanes' keys denied: NOPERM after turns' read
	s = &ClaimSeen{Version: wire(Reply[Field]{}), Meta: Got([len(ClaimMetaFields)]Field{}), Active: Got[int64](0),
		Pending: Got(members()), Turns: Got[int64](1), Ready: Got([]ClaimLane{readyLane("a", 0, "", "", "")}), LaneDenied: true}
	if st := Claim(5, s); !errors.Is(st.Err, grammar.Refusal(protocol.ErrNoPerm)) {
		t.Errorf("lanes denied: %+v", st)
	}
	// turns denied, after pending's head
	s = &ClaimSeen{Version: wire(Reply[Field]{}), Meta: Got([len(ClaimMetaFields)]Field{}), Active: Got[int64](0),
		Pending: Failed[[][]byte](errA), Turns: Failed[int64](errB)}
	if st := Claim(5, s); !errors.Is(st.Err, errA) {
		t.Errorf("pending before turns: %+v", st)
	}
}

// The heads-first reads give what reading every lane's size first gives:
// the same turns, members, stale lanes and writes, whatever the sizes, caps
// and pauses, in a bounded number of batches.
func TestClaimLaneReadsMatchSizesFirst(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 3000 {
		var meta [len(ClaimMetaFields)]Field
		meta[claimTurn], meta[claimPendingTurn] = Str(strconv.Itoa(rng.IntN(6))), Str(strconv.Itoa(rng.IntN(8)))
		meta[claimLaneWait] = Str(strconv.Itoa(rng.IntN(40)))
		sc := claimLaneScript{meta: meta, jobs: map[string][]string{}}
		for i := range rng.IntN(4) {
			sc.pending = append(sc.pending, strconv.Itoa(1+i))
		}
		score := 0
		for i := range 1 + rng.IntN(8) {
			name := "l" + strconv.Itoa(i)
			score += rng.IntN(3)
			opt := func(p int, v string) string {
				if rng.IntN(p) == 0 {
					return v
				}
				return ""
			}
			l := readyLane(name, float64(score), opt(2, strconv.Itoa(rng.IntN(4))), opt(2, strconv.Itoa(1+rng.IntN(4))), opt(8, "1"))
			sc.lanes = append(sc.lanes, l)
			var jobs []string
			for j := range rng.IntN(7) {
				jobs = append(jobs, strconv.Itoa(100*(i+1)+j))
			}
			sc.jobs[name] = jobs
		}
		count := int64(1 + rng.IntN(14))
		needs, got, gs := sc.run(t, count)
		sc.exact = true
		_, want, ws := sc.run(t, count)
		heads := 0
		for _, n := range needs {
			if n == ClaimHeads {
				heads++
			}
		}
		if got.Err != nil || want.Err != nil || heads > maxLaneReads {
			t.Fatalf("round %d: %v %v, %d batches of lane reads", round, got.Err, want.Err, heads)
		}
		gv, wv := got.Verdict, want.Verdict
		gv.Jobs, wv.Jobs = nil, nil
		if !reflect.DeepEqual(gv, wv) || !reflect.DeepEqual(gs.Members, ws.Members) || !reflect.DeepEqual(gs.From, ws.From) {
			t.Fatalf("round %d: heads first %+v %q, sizes first %+v %q", round, gv, gs.Members, wv, ws.Members)
		}
		if got.Verdict.Empty {
			continue
		}
		for i := range gs.Ready.Val {
			g, w := &gs.Ready.Val[i], &ws.Ready.Val[i]
			left := func(l *ClaimLane) (bool, bool) {
				return l.State.Waiting-l.Taken == 0,
					LaneReady(l.State.Paused, l.State.Waiting-l.Taken, l.State.Active+l.Taken, l.State.Cap)
			}
			ge, gr := left(g)
			we, wr := left(w)
			if g.Taken != w.Taken || g.Last != w.Last || g.Stale != w.Stale || g.Drained != w.Drained || g.Drained != (g.Taken > 0 && we) || ge != we || gr != wr {
				t.Fatalf("round %d, lane %s: heads first %+v, sizes first %+v", round, g.Name, *g, *w)
			}
		}
	}
}

// An error of the lanes' reads refuses the claim before any row is read:
// laneinfo's, the size of a lane given no turn, the head of one given turns.
func TestClaimLaneReadErrors(t *testing.T) {
	t.Parallel()
	var meta [len(ClaimMetaFields)]Field
	base := func() *ClaimSeen {
		return &ClaimSeen{Version: wire(Reply[Field]{}), Meta: Got(meta), Active: Got[int64](0),
			Pending: Got(members()), Turns: Got[int64](2),
			Ready: Got([]ClaimLane{{Name: []byte("a")}, {Name: []byte("b"), Score: 1}})}
	}
	// one turn: a is asked its head (two members), b its size
	s := base()
	st := Claim(1, s)
	if a, b := s.Ready.Val[0], s.Ready.Val[1]; st.Need != ClaimHeads || a.Ask != 2 || a.Card || b.Ask != 0 || !b.Card {
		t.Fatalf("first batch: %+v %+v %+v", st, a, b)
	}
	for _, tc := range []struct {
		set  func(s *ClaimSeen)
		want error
	}{
		{func(s *ClaimSeen) {
			for i := range s.Ready.Val {
				s.Ready.Val[i].Info = Failed[[3]Field](errA)
			}
			s.Ready.Val[0].Heads, s.Ready.Val[1].Waiting = Failed[[][]byte](errB), Failed[int64](errB)
		}, errA},
		{func(s *ClaimSeen) { s.Ready.Val[1].Waiting = Failed[int64](errA) }, errA},
		{func(s *ClaimSeen) { s.Ready.Val[0].Heads = Failed[[][]byte](errA) }, errA},
	} {
		s := base()
		Claim(1, s)
		for i := range s.Ready.Val {
			l := &s.Ready.Val[i]
			l.Info = Got([3]Field{})
			if l.Ask > 0 {
				l.Heads, l.Asked = Got(members("7", "8")), l.Ask
			}
			if l.Card {
				l.Waiting = Got[int64](3)
			}
		}
		s.LaneReads = 1
		tc.set(s)
		if st := Claim(1, s); !errors.Is(st.Err, tc.want) {
			t.Errorf("%+v, want %v", st, tc.want)
		}
	}
}

// Turns left out of the first batch is asked for next; rows read with it
// for pending's head are the claim's when no lane is ready, and are dropped
// (read again in turn order) when lanes are.
func TestClaimTurnsSize(t *testing.T) {
	t.Parallel()
	first := func() *ClaimSeen {
		return &ClaimSeen{Version: wire(Reply[Field]{}), Meta: Got([len(ClaimMetaFields)]Field{}), Active: Got[int64](0),
			Pending: Got(members("5"))}
	}
	s := first()
	if st := Claim(1, s); st.Need != ClaimTurnsSize {
		t.Fatalf("%+v", st)
	}
	s.Turns, s.Rows, s.PendingRows = Got[int64](0), []Reply[Field]{Got(Str("2"))}, true
	if st := Claim(1, s); st.Need != ClaimNone || st.Err != nil || len(st.Verdict.Jobs) != 1 || st.Verdict.Jobs[0].Attempt != 3 {
		t.Errorf("no lane: %+v", st)
	}
	// a refusal before turns wins over it
	s = first()
	s.Pending = Failed[[][]byte](errA)
	if st := Claim(1, s); !errors.Is(st.Err, errA) {
		t.Errorf("pending before turns: %+v", st)
	}
	// turns' error before the rows'
	s = first()
	s.Turns, s.Rows, s.PendingRows = Failed[int64](errA), []Reply[Field]{Failed[Field](errB)}, true
	if st := Claim(1, s); !errors.Is(st.Err, errA) {
		t.Errorf("turns before rows: %+v", st)
	}
	// lanes ready: the rows read for pending are not taken
	s = first()
	s.Turns, s.Rows, s.PendingRows = Got[int64](1), []Reply[Field]{Failed[Field](errB)}, true
	if st := Claim(1, s); st.Need != ClaimTurns || len(s.Rows) != 0 || s.PendingRows {
		t.Errorf("lanes: %+v, rows %v", st, s.Rows)
	}
}

// A job taken twice by one claim (its id in pending and in a lane) gets
// the attempt after the first, as the Lua's HINCRBYs one after another.
func TestClaimRepeatedJob(t *testing.T) {
	t.Parallel()
	var meta [len(ClaimMetaFields)]Field
	sc := claimLaneScript{
		meta: meta, pending: []string{"7", "8"},
		lanes: []ClaimLane{readyLane("a", 0, "", "", ""), readyLane("b", 0, "", "", "")},
		jobs:  map[string][]string{"a": {"7"}, "b": {"7", "9"}},
	}
	_, st, s := sc.run(t, 6)
	var got []string
	for _, j := range st.Verdict.Jobs {
		got = append(got, string(s.Members[j.Member])+":"+strconv.FormatInt(j.Attempt, 10))
	}
	if want := []string{"7:1", "7:2", "7:3", "8:1", "9:1"}; st.Err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("jobs %q, want %q (%v)", got, want, st.Err)
	}
}
