package verdict

import (
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// cmJob scripts one pair of a COMPLETEMANY: job i (from 0) has id 10+i and
// token "3".
type cmJob struct {
	row       Reply[[6]Field] // unmade: att "3", no uniq
	score     Reply[Field]    // unmade: in active
	logs      error
	holder    Reply[Field] // answered when the verdict asks for it
	cancelled Reply[Field] // answered when the verdict asks for it
}

type completeManyScript struct {
	version   Reply[Field] // unmade: this wire
	jobs      []cmJob
	completed Reply[Field]
}

// Rows as the scripts give them: att and uniq.
var (
	cmStale  = Got([6]Field{Str("2"), {}})
	cmGone   = Got([6]Field{{}, {}})
	cmUnique = func(u string) Reply[[6]Field] { return Got([6]Field{Str("3"), Str(u)}) }
	cmOut    = Got(Field{})
)

func cmID(i int) string { return strconv.Itoa(10 + i) }

// run drives COMPLETEMANY of the scripted jobs and records the jobs whose
// holder the verdict asked for.
func (sc completeManyScript) run(t *testing.T) ([]CompleteManyRead, CompleteManyStep, []int) {
	t.Helper()
	s := CompleteManySeen{Jobs: make([]CompleteManyJob, len(sc.jobs))}
	for i := range s.Jobs {
		s.Jobs[i].ID, s.Jobs[i].Token = []byte(cmID(i)), []byte("3")
	}
	var asked []int
	needs := drive(t, func() CompleteManyRead { return CompleteMany(&s).Need }, func(n CompleteManyRead) {
		st := CompleteMany(&s)
		switch n {
		case CompleteManyFirst:
			s.Version, s.Completed = wire(sc.version), sc.completed
			s.Completed.Made = true
			for i, j := range sc.jobs {
				r, sc, l := j.row, j.score, j.logs
				if !r.Made {
					r = Got([6]Field{Str("3"), {}})
				}
				if !sc.Made {
					sc = Got(Str("100"))
				}
				s.Jobs[i].Row, s.Jobs[i].Score, s.Jobs[i].Logs = r, sc, l
			}
		case CompleteManyCancelledRows:
			for _, i := range st.Verdict.Cancelled {
				s.Jobs[i].Cancelled = sc.jobs[i].cancelled
				s.Jobs[i].Cancelled.Made = true
			}
		case CompleteManyHolders:
			for _, i := range st.Verdict.Holders {
				asked = append(asked, i)
				s.Jobs[i].Holder = sc.jobs[i].holder
				s.Jobs[i].Holder.Made = true
			}
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, CompleteMany(&s), asked
}

// outcomes is the replies of a verdict's outcomes, with "r" after a job that
// releases its unique key.
func outcomes(v CompleteManyVerdict) []string {
	var out []string
	for _, o := range v.Outcomes {
		s := strconv.FormatInt(o.Reply, 10)
		if o.Release {
			s += "r"
		}
		out = append(out, s)
	}
	return out
}

func TestCompleteMany(t *testing.T) {
	t.Parallel()
	first := []CompleteManyRead{CompleteManyFirst}
	both := []CompleteManyRead{CompleteManyFirst, CompleteManyHolders}
	out := []CompleteManyRead{CompleteManyFirst, CompleteManyCancelledRows}
	done := func(n int) []cmJob { return make([]cmJob, n) }
	for _, tc := range []struct {
		name      string
		sc        completeManyScript
		needs     []CompleteManyRead
		asked     []int    // the holders read
		out       []string // the outcomes, when the verdict is final
		completed int64
		err       error
	}{
		{"completes", completeManyScript{jobs: done(3), completed: Got(Str("41"))}, first, nil, []string{"1", "1", "1"}, 44, nil},
		{"first completions", completeManyScript{jobs: done(2)}, first, nil, []string{"1", "1"}, 2, nil},
		{"each its own outcome", completeManyScript{jobs: []cmJob{{row: cmGone}, {row: cmStale}, {score: cmOut}, {}}, completed: Got(Str("5"))},
			out, nil, []string{"0", "-1", "-2", "1"}, 6, nil},
		{"none completed: stats and logs not looked at", completeManyScript{jobs: []cmJob{{row: cmGone, logs: errB}, {row: cmStale, logs: errB}, {score: cmOut, logs: errB}}, completed: Failed[Field](errA)},
			out, nil, []string{"0", "-1", "-2"}, 0, nil},
		{"a row not a hash", completeManyScript{jobs: []cmJob{{}, {row: Failed[[6]Field](errA)}, {row: Failed[[6]Field](errB)}}}, first, nil, nil, 0, errA},
		{"a row not a hash after a stale job", completeManyScript{jobs: []cmJob{{row: cmStale}, {row: Failed[[6]Field](errA)}}}, first, nil, nil, 0, errA},
		{"active not a zset, for a job whose token matches", completeManyScript{jobs: []cmJob{{row: cmStale, score: Failed[Field](errB)}, {score: Failed[Field](errA)}, {row: Failed[[6]Field](errB)}}}, first, nil, nil, 0, errA},
		{"active not a zset, no token matches", completeManyScript{jobs: []cmJob{{row: cmStale, score: Failed[Field](errA)}, {row: cmGone, score: Failed[Field](errA)}}, completed: Failed[Field](errB)},
			first, nil, []string{"-1", "0"}, 0, nil},
		{"unique keys", completeManyScript{jobs: []cmJob{
			{row: cmUnique("a"), holder: Got(Str("10"))},
			{row: cmUnique("b"), holder: Got(Str("10"))},
			{row: cmUnique("c"), holder: Got(Field{})},
			{},
		}}, both, []int{0, 1, 2}, []string{"1r", "1", "1", "1"}, 4, nil},
		{"one unique key, two jobs", completeManyScript{jobs: []cmJob{
			{row: cmUnique("a"), holder: Got(Str("11"))},
			{row: cmUnique("a"), holder: Got(Str("11"))},
		}}, both, []int{0, 1}, []string{"1", "1r"}, 2, nil},
		{"holders of completing jobs only", completeManyScript{jobs: []cmJob{
			{row: Got([6]Field{Str("2"), Str("a")})},
			{row: cmUnique("b"), score: cmOut},
			{row: Got([6]Field{{}, Str("c")})},
			{row: cmUnique("d"), holder: Got(Str("13"))},
		}}, []CompleteManyRead{CompleteManyFirst, CompleteManyCancelledRows, CompleteManyHolders}, []int{3}, []string{"-1", "-2", "0", "1r"}, 1, nil},
		{"a unique key not a string, before a later row", completeManyScript{jobs: []cmJob{
			{row: cmUnique("a"), holder: Failed[Field](errA)},
			{row: Failed[[6]Field](errB)},
		}}, both, []int{0}, nil, 0, errA},
		{"a row not a hash, before a later unique key", completeManyScript{jobs: []cmJob{
			{row: Failed[[6]Field](errA)},
			{row: cmUnique("a"), holder: Failed[Field](errB)},
		}}, first, nil, nil, 0, errA},
		{"active not a zset after a unique key", completeManyScript{jobs: []cmJob{
			{row: cmUnique("a"), holder: Got(Str("10"))},
			{row: cmUnique("b"), holder: Failed[Field](errB)},
			{score: Failed[Field](errA)},
		}}, both, []int{0, 1}, nil, 0, errB},
		{"a unique key not a string, before stats", completeManyScript{jobs: []cmJob{{}, {row: cmUnique("a"), holder: Failed[Field](errA)}}, completed: Failed[Field](errB)},
			both, []int{1}, nil, 0, errA},
		{"stats not a hash", completeManyScript{jobs: []cmJob{{row: cmStale}, {}}, completed: Failed[Field](errA)}, first, nil, nil, 0, errA},
		{"completed not an integer", completeManyScript{jobs: done(1), completed: Got(Str("x"))}, first, nil, nil, 0, grammar.Refusal(protocol.ErrHashNotInteger)},
		{"completed predicted with +k", completeManyScript{jobs: done(2), completed: Got(Str("9223372036854775806"))}, first, nil, nil, 0, grammar.Refusal(protocol.ErrOverflow)},
		{"completed predicted with +k, fits", completeManyScript{jobs: []cmJob{{}, {row: cmStale}}, completed: Got(Str("9223372036854775806"))},
			first, nil, []string{"1", "-1"}, 9223372036854775807, nil},
		{"logs denied", completeManyScript{jobs: []cmJob{{}, {logs: errB}}}, first, nil, nil, 0, errB},
		{"logs denied, last", completeManyScript{jobs: []cmJob{{logs: errB}}, completed: Got(Str("x"))}, first, nil, nil, 0, grammar.Refusal(protocol.ErrHashNotInteger)},
		{"logs denied after a unique key", completeManyScript{jobs: []cmJob{{logs: errB}, {row: cmUnique("a"), holder: Failed[Field](errA)}}}, both, []int{1}, nil, 0, errA},
		{"logs of a job not completed", completeManyScript{jobs: []cmJob{{row: cmStale, logs: errB}, {row: cmGone, logs: errB}, {score: cmOut, logs: errB}, {}}},
			out, nil, []string{"-1", "0", "-2", "1"}, 1, nil},
		{"cancelled", completeManyScript{jobs: []cmJob{{score: cmOut, cancelled: Got(Str("1"))}, {score: cmOut}, {}}},
			out, nil, []string{"-4", "-2", "1"}, 1, nil},
	} {
		needs, st, asked := tc.sc.run(t)
		ok := reflect.DeepEqual(needs, tc.needs) && reflect.DeepEqual(asked, tc.asked) && errors.Is(st.Err, tc.err) && (tc.err != nil || st.Err == nil)
		if tc.err == nil && ok {
			ok = reflect.DeepEqual(outcomes(st.Verdict), tc.out) && st.Verdict.Done == count(tc.out) &&
				(st.Verdict.Done == 0 || st.Verdict.Completed == tc.completed)
		}
		if !ok {
			t.Errorf("%s: %v %v %+v", tc.name, needs, asked, st)
		}
	}
	for _, tc := range fenceCases {
		needs, st, _ := completeManyScript{version: tc.version, jobs: []cmJob{{row: Failed[[6]Field](errB)}}}.run(t)
		if !reflect.DeepEqual(needs, first) || !errors.Is(st.Err, tc.want) {
			t.Errorf("fence %s: %v %+v", tc.name, needs, st)
		}
	}
}

// count is the number of completed jobs among outcomes.
func count(out []string) int64 {
	n := int64(0)
	for _, o := range out {
		if o == "1" || o == "1r" {
			n++
		}
	}
	return n
}

// A denied row or unique key is its read's error: the handler reads nothing
// for the jobs after it, and a refusal of an earlier job wins.
func TestCompleteManyDenied(t *testing.T) {
	t.Parallel()
	job := func(i int, row Reply[[6]Field]) CompleteManyJob {
		return CompleteManyJob{ID: []byte(cmID(i)), Token: []byte("3"), Row: row, Score: Got(Str("100"))}
	}
	ok := Got([6]Field{Str("3"), {}})
	s := CompleteManySeen{Version: wire(Reply[Field]{}), Completed: Got(Field{}), Jobs: []CompleteManyJob{
		job(0, ok), job(1, Failed[[6]Field](errA)), {ID: []byte("12"), Token: []byte("3")},
	}}
	if st := CompleteMany(&s); st.Need != CompleteManyNone || !errors.Is(st.Err, errA) {
		t.Errorf("denied row: %+v", st)
	}
	s.Jobs[0].Score = Failed[Field](errB)
	if st := CompleteMany(&s); !errors.Is(st.Err, errB) {
		t.Errorf("refusal before a denied row: %+v", st)
	}
	// job 1's unique key is denied: job 2's is not read, nor needed
	s.Jobs = []CompleteManyJob{job(0, ok), job(1, cmUnique("a")), job(2, cmUnique("b"))}
	st := CompleteMany(&s)
	if st.Need != CompleteManyHolders || !reflect.DeepEqual(st.Verdict.Holders, []int{1, 2}) {
		t.Fatalf("holders: %+v", st)
	}
	s.Jobs[1].Holder = Failed[Field](errA)
	if st := CompleteMany(&s); st.Need != CompleteManyNone || !errors.Is(st.Err, errA) {
		t.Errorf("denied unique key: %+v", st)
	}
	// a holder asked for and not read is asked for again: the handler's
	// loop ends there (ErrInternal)
	s.Jobs[1].Holder = Reply[Field]{}
	if st := CompleteMany(&s); st.Need != CompleteManyHolders {
		t.Errorf("holder not read: %+v", st)
	}
	// a row not read is asked for again
	s.Jobs[0].Row = Reply[[6]Field]{}
	if st := CompleteMany(&s); st.Need != CompleteManyFirst {
		t.Errorf("row not read: %+v", st)
	}
}

// The value check and the verdict reuse their memory: a steady load
// allocates nothing.
func TestCompleteManyNoAllocations(t *testing.T) {
	args := [][]byte{[]byte("1000")}
	for i := range protocol.MaxCount {
		args = append(args, []byte(strconv.Itoa(protocol.MaxCount-i)), []byte("3"), nil)
	}
	keys, _ := CompleteManyValues(args, protocol.MaxCount, nil)
	if n := testing.AllocsPerRun(20, func() {
		if keys, _ = CompleteManyValues(args, protocol.MaxCount, keys); len(keys) != protocol.MaxCount {
			t.Fatal(len(keys))
		}
	}); n != 0 {
		t.Errorf("%v allocations per value check", n)
	}
	s := CompleteManySeen{Version: wire(Reply[Field]{}), Completed: Got(Str("1"))}
	for i := range 100 {
		row := Got([6]Field{Str("3"), {}})
		if i%3 == 0 {
			row = cmUnique("u" + strconv.Itoa(i))
		}
		s.Jobs = append(s.Jobs, CompleteManyJob{ID: []byte(cmID(i)), Token: []byte("3"), Row: row, Score: Got(Str("100"))})
	}
	if st := CompleteMany(&s); st.Need != CompleteManyHolders || len(st.Verdict.Holders) != 34 {
		t.Fatalf("%+v", st)
	}
	for i := range s.Jobs {
		s.Jobs[i].Holder = Got(Str(cmID(i)))
	}
	if n := testing.AllocsPerRun(100, func() {
		if st := CompleteMany(&s); st.Err != nil || st.Verdict.Done != 100 || !st.Verdict.Outcomes[99].Release {
			t.Fatalf("%+v", st)
		}
	}); n != 0 {
		t.Errorf("%v allocations per verdict", n)
	}
}

func TestCompleteManyValues(t *testing.T) {
	t.Parallel()
	repeated := grammar.Refusal(protocol.ErrCompleteManyRepeated)
	bad := grammar.Refusal(protocol.ErrBadArg("completemany", "id"))
	args := func(ids ...string) [][]byte {
		out := [][]byte{[]byte(strconv.Itoa(len(ids)))}
		for _, id := range ids {
			out = append(out, []byte(id), []byte("tok"), nil)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		ids  []string
		want error
	}{
		{"one", []string{"1"}, nil},
		{"distinct", []string{"3", "1", "2", "4398046511103"}, nil},
		{"zero", []string{"1", "0"}, bad},
		{"leading zero", []string{"01"}, bad},
		{"past the id space", []string{"4398046511104"}, bad},
		{"empty", []string{"1", ""}, bad},
		{"repeated", []string{"5", "6", "5"}, repeated},
		{"repeated, adjacent", []string{"5", "5"}, repeated},
		{"repeated before a bad id", []string{"7", "8", "8", "x", "7"}, repeated},
		{"a bad id before a repeat", []string{"7", "8", "x", "8", "7"}, bad},
		{"three times", []string{"9", "7", "7", "7", "0"}, repeated},
		{"a bad id first", []string{"0", "1", "1"}, bad},
	} {
		if _, err := CompleteManyValues(args(tc.ids...), len(tc.ids), nil); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// the largest call, and its repeats anywhere
	var ids []string
	for i := range protocol.MaxCount {
		ids = append(ids, strconv.Itoa(protocol.MaxJobID-i))
	}
	keys, err := CompleteManyValues(args(ids...), len(ids), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, pos := range []int{1, 500, protocol.MaxCount - 1} {
		again := append([]string(nil), ids...)
		again[pos] = again[pos-1]
		if keys, err = CompleteManyValues(args(again...), len(again), keys); !errors.Is(err, repeated) {
			t.Errorf("repeat at %d: %v", pos, err)
		}
	}
}

func TestCompleteManyValuesResult(t *testing.T) {
	t.Parallel()
	long := make([]byte, protocol.MaxResult+1)
	args := func(triples ...[3]string) [][]byte {
		out := [][]byte{[]byte(strconv.Itoa(len(triples)))}
		for _, tr := range triples {
			r := []byte(tr[2])
			if tr[2] == "long" {
				r = long
			}
			out = append(out, []byte(tr[0]), []byte(tr[1]), r)
		}
		return out
	}
	badResult := grammar.Refusal(protocol.ErrBadArg("completemany", "result"))
	repeated := grammar.Refusal(protocol.ErrCompleteManyRepeated)
	badID := grammar.Refusal(protocol.ErrBadArg("completemany", "id"))
	for _, tc := range []struct {
		triples [][3]string
		want    error
	}{
		{[][3]string{{"1", "t", "long"}}, badResult},
		{[][3]string{{"1", "t", "long"}, {"x", "t", ""}}, badResult},
		{[][3]string{{"x", "t", "long"}}, badID},
		{[][3]string{{"1", "t", ""}, {"1", "t", "long"}}, repeated},
		{[][3]string{{"1", "t", "r"}, {"2", "t", "long"}}, badResult},
	} {
		if _, err := CompleteManyValues(args(tc.triples...), len(tc.triples), nil); !errors.Is(err, tc.want) {
			t.Errorf("%v: %v, want %v", tc.triples, err, tc.want)
		}
	}
}
