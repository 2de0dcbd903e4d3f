package verdict

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// addArgs is ADD's ARGV for jobs given as groups of 8, no option column.
func addArgs(jobs ...[8]string) [][]byte {
	out := [][]byte{[]byte(strconv.Itoa(len(jobs))), []byte("0")}
	for _, j := range jobs {
		for _, a := range j {
			out = append(out, []byte(a))
		}
	}
	return out
}

var plainJob = [8]string{"data", "0", "0", "3", "fixed", "100", "", "0"}

var laneColumn = AddColumns{0, -1, -1, -1, -1, -1, -1, -1}

func TestAddValues(t *testing.T) {
	t.Parallel()
	jobs, err := AddValues(addArgs(plainJob, [8]string{"", "1000", "5", "1", "exponential", "0", "k", "1"}), 2, 0, noColumns, nil)
	if err != nil || len(jobs) != 2 ||
		jobs[0].Arg != 2 || jobs[0].Priority != 0 || jobs[0].Delay != 0 || len(jobs[0].Unique) != 0 ||
		jobs[1].Arg != 10 || jobs[1].Priority != 1000 || jobs[1].Delay != 5 || string(jobs[1].Unique) != "k" {
		t.Fatalf("%+v %v", jobs, err)
	}
	long := string(make([]byte, protocol.MaxUniqueKey+1))
	for _, tc := range []struct {
		arg   int
		value string
		bad   string
	}{
		{AddPriority, "1001", "priority"},
		{AddPriority, "01", "priority"},
		{AddDelay, "315360000001", "delay"},
		{AddAttempts, "0", "attempts"},
		{AddAttempts, "1000001", "attempts"},
		{AddBackoff, "Fixed", "backoff"},
		{AddBackoffMS, "86400001", "backoff_ms"},
		{AddUnique, long, "unique_key"},
		{AddUniqueTTL, "-1", "unique_ttl"},
	} {
		j := plainJob
		j[tc.arg] = tc.value
		// the first bad job decides, whatever follows it
		bad := plainJob
		bad[AddPriority] = "x"
		if _, err := AddValues(addArgs(plainJob, j, bad), 3, 0, noColumns, nil); !errors.Is(err, grammar.Refusal(protocol.ErrBadArg("add", tc.bad))) {
			t.Errorf("%s %q: %v", tc.bad, tc.value, err)
		}
	}
	// a unique key needs a TTL of at least 1; no unique key takes 0
	j := plainJob
	j[AddUnique] = "k"
	if _, err := AddValues(addArgs(j), 1, 0, noColumns, nil); !errors.Is(err, grammar.Refusal(protocol.ErrBadArg("add", "unique_ttl"))) {
		t.Errorf("unique key with TTL 0: %v", err)
	}
	// values go job by job: job 1's last value before job 2's first
	j = plainJob
	j[AddUniqueTTL] = "x"
	k := plainJob
	k[AddPriority] = "x"
	if _, err := AddValues(addArgs(j, k), 2, 0, noColumns, nil); !errors.Is(err, grammar.Refusal(protocol.ErrBadArg("add", "unique_ttl"))) {
		t.Errorf("job by job: %v", err)
	}
}

func TestAddOptions(t *testing.T) {
	t.Parallel()
	badOption := grammar.Refusal(protocol.ErrBadArg("add", "option"))
	for _, tc := range []struct {
		names []string
		lane  int
		err   error
	}{
		{nil, -1, nil},
		{[]string{"lane"}, 0, nil},
		{[]string{"Lane"}, -1, badOption},
		{[]string{"lane", "lane"}, -1, badOption},
		{[]string{"prio"}, -1, badOption},
	} {
		var names [][]byte
		for _, n := range tc.names {
			names = append(names, []byte(n))
		}
		cols, err := AddOptions(names)
		if lane := cols.Lane; lane != tc.lane || !errors.Is(err, tc.err) {
			t.Errorf("%q: %d %v", tc.names, lane, err)
		}
	}
	// the lane column: its value after the job's 8, 0..128 bytes, empty for
	// none; checked after the job's other values
	args := [][]byte{[]byte("3"), []byte("1"), []byte("lane")}
	for _, l := range []string{"a", "", string(make([]byte, protocol.MaxLaneName))} {
		for _, a := range plainJob {
			args = append(args, []byte(a))
		}
		args = append(args, []byte(l))
	}
	jobs, err := AddValues(args, 3, 1, laneColumn, nil)
	if err != nil || string(jobs[0].Lane) != "a" || jobs[1].Lane != nil || len(jobs[2].Lane) != protocol.MaxLaneName || jobs[1].Arg != 12 {
		t.Fatalf("lanes: %+v %v", jobs, err)
	}
	if !jobs[0].Waits() || jobs[1].Waits() {
		t.Errorf("Waits: %+v", jobs)
	}
	args[len(args)-1] = make([]byte, protocol.MaxLaneName+1)
	args[len(args)-2] = []byte("x") // the unique ttl, before the lane
	if _, err := AddValues(args, 3, 1, laneColumn, nil); !errors.Is(err, grammar.Refusal(protocol.ErrBadArg("add", "unique_ttl"))) {
		t.Errorf("order: %v", err)
	}
	args[len(args)-2] = []byte("0")
	if _, err := AddValues(args, 3, 1, laneColumn, nil); !errors.Is(err, grammar.Refusal(protocol.ErrBadArg("add", "lane"))) {
		t.Errorf("long lane: %v", err)
	}
}

type addScript struct {
	version, seq, added      Reply[Field]
	pending, delayed, signal Reply[int64]
	holders                  map[string]Reply[Field] // by unique key; absent: not held
	rows                     Reply[int64]
}

func (sc addScript) run(t *testing.T, jobs []AddJob) ([]AddRead, AddStep, []string) {
	t.Helper()
	var s AddSeen
	var read []string
	needs := drive(t, func() AddRead { return Add(jobs, &s).Need }, func(n AddRead) {
		switch n {
		case AddFirst:
			s.Version, s.Seq, s.Added = wire(sc.version), sc.seq, sc.added
			s.Pending, s.Delayed, s.Signal = sc.pending, sc.delayed, sc.signal
			s.Seq.Made, s.Added.Made, s.Pending.Made, s.Delayed.Made, s.Signal.Made = true, true, true, true, true
		case AddKeys:
			s.Holders = make([]Reply[Field], len(jobs))
			for i, j := range jobs {
				if len(j.Unique) > 0 {
					read = append(read, string(j.Unique))
					s.Holders[i] = sc.holders[string(j.Unique)]
					s.Holders[i].Made = true
				}
			}
			s.Rows = sc.rows
			s.Rows.Made = true
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, Add(jobs, &s), read
}

func TestAdd(t *testing.T) {
	t.Parallel()
	first, both := []AddRead{AddFirst}, []AddRead{AddFirst, AddKeys}
	now := []AddJob{{Arg: 1}}
	later := []AddJob{{Arg: 1, Delay: 5}}
	two := []AddJob{{Arg: 1, Delay: 5}, {Arg: 9}}
	uniq := func(keys ...string) []AddJob {
		var jobs []AddJob
		for i, k := range keys {
			jobs = append(jobs, AddJob{Arg: 1 + 8*i, Unique: []byte(k)})
		}
		return jobs
	}
	for _, tc := range []struct {
		name  string
		sc    addScript
		jobs  []AddJob
		needs []AddRead
		v     AddVerdict
		err   error
	}{
		{"first job", addScript{}, now, both, AddVerdict{First: 1, Seq: 1, Added: 1, Signal: true}, nil},
		{"after seq 41", addScript{seq: Got(Str("41")), added: Got(Str("7")), pending: Got[int64](3)}, two, both, AddVerdict{First: 42, Seq: 43, Added: 9}, nil},
		{"delayed only: no signal", addScript{}, later, both, AddVerdict{First: 1, Seq: 1, Added: 1}, nil},
		{"one of two pending: signal", addScript{}, two, both, AddVerdict{First: 1, Seq: 2, Added: 2, Signal: true}, nil},
		{"meta not a hash", addScript{seq: Failed[Field](errA), added: Failed[Field](errB)}, now, first, AddVerdict{}, errA},
		{"seq not an integer", addScript{seq: Got(Str("1 "))}, now, first, AddVerdict{}, grammar.Refusal(protocol.ErrHashNotInteger)},
		{"seq overflows", addScript{seq: Got(Str("9223372036854775807"))}, now, first, AddVerdict{}, grammar.Refusal(protocol.ErrOverflow)},
		{"id space", addScript{seq: Got(Str("4398046511102"))}, two, first, AddVerdict{}, grammar.Refusal(protocol.ErrAddIDSpace)},
		{"negative seq", addScript{seq: Got(Str("-1"))}, two, first, AddVerdict{}, grammar.Refusal(protocol.ErrAddIDSpace)},
		{"last id", addScript{seq: Got(Str("4398046511101"))}, two, both, AddVerdict{First: 4398046511102, Seq: 4398046511103, Added: 2, Signal: true}, nil},
		{"duplicate in batch", addScript{holders: map[string]Reply[Field]{"c": Got(Str("9"))}}, uniq("a", "b", "a", "c"), both, AddVerdict{}, grammar.Refusal(protocol.ErrAddDuplicateInBatch)},
		{"held before the duplicate", addScript{holders: map[string]Reply[Field]{"b": Got(Str("9"))}}, uniq("a", "b", "b"), both, AddVerdict{}, grammar.Refusal(protocol.ErrAddDuplicate("9"))},
		{"held by the empty id", addScript{holders: map[string]Reply[Field]{"a": Got(Str(""))}}, uniq("a"), both, AddVerdict{}, grammar.Refusal(protocol.ErrAddDuplicate(""))},
		{"holder text ends at NUL", addScript{holders: map[string]Reply[Field]{"a": Got(Str("9\x00x"))}}, uniq("a"), both, AddVerdict{}, grammar.Refusal(protocol.ErrAddDuplicate("9"))},
		{"unique key not a string, before the rows", addScript{holders: map[string]Reply[Field]{"a": Failed[Field](errA)}, rows: Failed[int64](errB)}, uniq("a"), both, AddVerdict{}, errA},
		{"row exists", addScript{rows: Got[int64](1), added: Failed[Field](errB)}, now, both, AddVerdict{}, grammar.Refusal(protocol.ErrAddIDExists)},
		{"rows denied", addScript{rows: Failed[int64](errA), added: Failed[Field](errB)}, now, both, AddVerdict{}, errA},
		{"stats not a hash", addScript{added: Failed[Field](errA), pending: Failed[int64](errB)}, now, both, AddVerdict{}, errA},
		{"added overflows", addScript{added: Got(Str("9223372036854775807")), pending: Failed[int64](errB)}, now, both, AddVerdict{}, grammar.Refusal(protocol.ErrOverflow)},
		{"pending not a zset", addScript{pending: Failed[int64](errA), delayed: Failed[int64](errB)}, later, both, AddVerdict{}, errA},
		{"delayed not a zset", addScript{delayed: Failed[int64](errA), signal: Failed[int64](errB)}, now, both, AddVerdict{}, errA},
		{"signal not a list", addScript{signal: Failed[int64](errA)}, now, both, AddVerdict{}, errA},
	} {
		needs, st, _ := tc.sc.run(t, tc.jobs)
		if !reflect.DeepEqual(needs, tc.needs) || st.Verdict != tc.v && tc.err == nil || !errors.Is(st.Err, tc.err) || (tc.err == nil && st.Err != nil) {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
	}
	for _, tc := range fenceCases {
		needs, st, _ := addScript{version: tc.version, seq: Failed[Field](errB)}.run(t, now)
		if !reflect.DeepEqual(needs, first) || !errors.Is(st.Err, tc.want) {
			t.Errorf("fence %s: %v %+v", tc.name, needs, st)
		}
	}
	// a denied unique key is its read's error, in job order; the keys after
	// it and the rows are not read
	jobs := uniq("a", "b", "c")
	s := AddSeen{Version: wire(Reply[Field]{}), Seq: Got(Field{}), Added: Got(Field{}), Pending: Got[int64](0), Delayed: Got[int64](0), Signal: Got[int64](0)}
	s.Holders = []Reply[Field]{Got(Field{}), Failed[Field](errA), {}}
	if st := Add(jobs, &s); !errors.Is(st.Err, errA) {
		t.Errorf("denied unique key: %+v", st)
	}
	s.Holders[0] = Got(Str("4"))
	if st := Add(jobs, &s); !errors.Is(st.Err, grammar.Refusal(protocol.ErrAddDuplicate("4"))) {
		t.Errorf("held before a denied key: %+v", st)
	}
	// more unique keys than the pairwise scan: the map finds the repeat
	var keys []string
	for i := range 100 {
		keys = append(keys, strconv.Itoa(i))
	}
	keys = append(keys, "57")
	if _, st, read := (addScript{}).run(t, uniq(keys...)); !errors.Is(st.Err, grammar.Refusal(protocol.ErrAddDuplicateInBatch)) || len(read) != 101 {
		t.Errorf("duplicate among many: %+v", st)
	}
	if _, st, _ := (addScript{}).run(t, uniq(keys[:100]...)); st.Err != nil || st.Verdict.Added != 100 {
		t.Errorf("many unique keys: %+v", st)
	}
}

func TestAddFlowValues(t *testing.T) {
	t.Parallel()
	// columns parent onfail wait, after the job's 8
	args := func(rows ...[3]string) [][]byte {
		out := [][]byte{[]byte(strconv.Itoa(len(rows))), []byte("3"), []byte("parent"), []byte("onfail"), []byte("wait")}
		for _, r := range rows {
			for _, a := range plainJob {
				out = append(out, []byte(a))
			}
			out = append(out, []byte(r[0]), []byte(r[1]), []byte(r[2]))
		}
		return out
	}
	cols := AddColumns{-1, 0, 1, 2, -1, -1, -1, -1}
	jobs, err := AddValues(args([3]string{"", "ignore", "5"}, [3]string{"1", "continue", ""}, [3]string{"1", "fail", "0"}), 3, 3, cols, nil)
	if err != nil || jobs[0].Kids != 2 || jobs[0].OnFail != nil || string(jobs[0].Wait) != "5" ||
		jobs[1].Parent != 0 || string(jobs[1].OnFail) != "continue" || jobs[2].OnFail != nil || jobs[2].Wait != nil || jobs[0].Ready() || !jobs[1].Ready() {
		t.Fatalf("%+v %v", jobs, err)
	}
	for _, tc := range []struct {
		rows [][3]string
		bad  string
	}{
		{[][3]string{{"1", "", ""}}, "parent"},
		{[][3]string{{"", "", ""}, {"2", "", ""}}, "parent"},
		{[][3]string{{"", "", ""}, {"01", "", ""}}, "parent"},
		{[][3]string{{"", "nope", ""}}, "onfail"},
		{[][3]string{{"", "", "86400001"}}, "wait"},
	} {
		if _, err := AddValues(args(tc.rows...), len(tc.rows), 3, cols, nil); !errors.Is(err, grammar.Refusal(protocol.ErrBadArg("add", tc.bad))) {
			t.Errorf("%v: %v", tc.rows, err)
		}
	}
	// depth: a chain of 16 passes, of 17 does not
	chain := [][3]string{{"", "", ""}}
	for i := 1; i < protocol.MaxFlowDepth; i++ {
		chain = append(chain, [3]string{strconv.Itoa(i), "", ""})
	}
	if _, err := AddValues(args(chain...), len(chain), 3, cols, nil); err != nil {
		t.Fatalf("depth 16: %v", err)
	}
	chain = append(chain, [3]string{strconv.Itoa(len(chain)), "", ""})
	if _, err := AddValues(args(chain...), len(chain), 3, cols, nil); !errors.Is(err, grammar.Refusal(protocol.ErrBadArg("add", "parent"))) {
		t.Fatalf("depth 17: %v", err)
	}
}

// The job options: their values in the order due, timeout, kind, headers
// whatever the columns' order; a parent with a due time; the due time
// folded into the delay.
func TestAddJobOptions(t *testing.T) {
	t.Parallel()
	names := []string{"headers", "kind", "timeout", "due", "parent"}
	cols, err := AddOptions(func() (out [][]byte) {
		for _, n := range names {
			out = append(out, []byte(n))
		}
		return out
	}())
	if err != nil || cols != (AddColumns{-1, 4, -1, -1, 3, 2, 1, 0}) {
		t.Fatalf("%+v %v", cols, err)
	}
	args := func(rows ...[5]string) [][]byte {
		out := [][]byte{[]byte(strconv.Itoa(len(rows))), []byte("5")}
		for _, n := range names {
			out = append(out, []byte(n))
		}
		for _, r := range rows {
			for _, a := range plainJob {
				out = append(out, []byte(a))
			}
			for _, a := range r {
				out = append(out, []byte(a))
			}
		}
		return out
	}
	jobs, err := AddValues(args([5]string{"h", "k", "30000", "", ""}, [5]string{"", "", "0", "2000", ""}, [5]string{"", "", "", "0", "1"}), 3, 5, cols, nil)
	if err != nil || string(jobs[0].Headers) != "h" || string(jobs[0].Kind) != "k" || string(jobs[0].Timeout) != "30000" || jobs[0].Due != 0 ||
		jobs[1].Headers != nil || jobs[1].Kind != nil || jobs[1].Timeout != nil || jobs[1].Due != 2000 || jobs[2].Parent != 0 {
		t.Fatalf("%+v %v", jobs, err)
	}
	AddDue(jobs, 1000)
	if jobs[0].Delay != 0 || jobs[1].Delay != 1000 || jobs[2].Delay != 0 {
		t.Fatalf("due: %+v", jobs)
	}
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		rows [][5]string
		bad  string
	}{
		{[][5]string{{"", "", "", "01", ""}}, "due"},
		{[][5]string{{"", "", "", "253402300800000", ""}}, "due"},
		{[][5]string{{"", "", "86400001", "x", ""}}, "due"}, // due is checked first
		{[][5]string{{"", "", "86400001", "", ""}}, "timeout"},
		{[][5]string{{"", long(protocol.MaxKind + 1), "-1", "", ""}}, "timeout"},
		{[][5]string{{long(protocol.MaxHeaders + 1), long(protocol.MaxKind + 1), "", "", ""}}, "kind"},
		{[][5]string{{long(protocol.MaxHeaders + 1), long(protocol.MaxKind), "", "", ""}}, "headers"},
		{[][5]string{{"", "", "", "5", ""}, {"", "", "", "", "1"}}, "parent"},
	} {
		if _, err := AddValues(args(tc.rows...), len(tc.rows), 5, cols, nil); !errors.Is(err, grammar.Refusal(protocol.ErrBadArg("add", tc.bad))) {
			t.Errorf("%v: %v", tc.rows, err)
		}
	}
	// a parent whose due is 0 is one of no due time
	if _, err := AddValues(args([5]string{"", "", "", "0", ""}, [5]string{"", "", "", "", "1"}), 2, 5, cols, nil); err != nil {
		t.Fatal(err)
	}
}
