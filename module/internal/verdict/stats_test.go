package verdict

import (
	"errors"
	"reflect"
	"testing"
)

func TestStats(t *testing.T) {
	t.Parallel()
	run := func(fill func(s *StatsSeen)) ([]StatsRead, StatsStep) {
		var s StatsSeen
		needs := drive(t, func() StatsRead { return Stats(&s).Need }, func(StatsRead) {
			s.Version = wire(Reply[Field]{})
			s.Sets = [4]Reply[int64]{Got[int64](1), Got[int64](2), Got[int64](3), Got[int64](4)}
			s.Meta = Got([4]Field{{}, Str("7"), Str("x"), {}})
			s.Counters = Got(fields("=5", "", "", "", "", "", "", "=x", "", ""))
			s.Waiting, s.Retained = Got[int64](3), Got[int64](4)
			s.Lanes = Got[int64](2)
			fill(&s)
		})
		return needs, Stats(&s)
	}
	all := []StatsRead{StatsAll}
	needs, st := run(func(*StatsSeen) {})
	want := StatsVerdict{Sets: [4]int64{1, 2, 3, 4}, Counters: [10][]byte(members("5", "0", "0", "0", "0", "0", "0", "x", "0", "0")), Extras: [6]int64{2, 7, 0, 0, 3, 4}}
	if !reflect.DeepEqual(needs, all) || st.Err != nil || !reflect.DeepEqual(st.Verdict, want) {
		t.Fatalf("%v %+v", needs, st)
	}
	_, st = run(func(s *StatsSeen) { s.Meta.Val[0] = Str("1") })
	if st.Verdict.Paused != 1 {
		t.Fatalf("paused 1: %+v", st)
	}
	_, st = run(func(s *StatsSeen) { s.Meta.Val[0] = Str("yes") })
	if st.Verdict.Paused != 0 {
		t.Fatalf("paused yes: %+v", st)
	}
	for _, f := range fenceCases {
		_, st := run(func(s *StatsSeen) { s.Version, s.Sets[0] = f.version, Failed[int64](errB) })
		if !errors.Is(st.Err, f.want) {
			t.Errorf("fence %s: %+v", f.name, st)
		}
	}
	// errors in read order: the sets, then meta, then stats
	for i, fill := range []func(s *StatsSeen){
		func(s *StatsSeen) { s.Sets[0], s.Sets[3] = Failed[int64](errA), Failed[int64](errB) },
		func(s *StatsSeen) { s.Sets[2], s.Meta = Failed[int64](errA), Failed[[4]Field](errB) },
		func(s *StatsSeen) { s.Sets[3], s.Counters = Failed[int64](errA), Failed[[]Field](errB) },
		func(s *StatsSeen) { s.Meta, s.Counters = Failed[[4]Field](errA), Failed[[]Field](errB) },
		func(s *StatsSeen) { s.Counters = Failed[[]Field](errA) },
		func(s *StatsSeen) { s.Counters, s.Lanes = Failed[[]Field](errA), Failed[int64](errB) },
		func(s *StatsSeen) { s.Lanes = Failed[int64](errA) },
	} {
		needs, st := run(fill)
		if !reflect.DeepEqual(needs, all) || st.Err != errA {
			t.Errorf("case %d: %v %+v", i, needs, st)
		}
	}
}

func TestInspect(t *testing.T) {
	t.Parallel()
	row := fields("=pending", "=\x00data", "=0", "=3", "=0", "=fixed:0", "=17", "", "", "")
	type tcase struct {
		name    string
		version Reply[Field]
		row     Reply[[]Field]
		logs    Reply[[][]byte]
		want    InspectVerdict
		err     error
	}
	cases := []tcase{
		{"gone", Reply[Field]{}, Got(fields("=dead", "=d", "", "", "", "", "", "", "", "")), Failed[[][]byte](errB), InspectVerdict{Gone: true}, nil},
		{"row not a hash", Reply[Field]{}, Failed[[]Field](errA), Failed[[][]byte](errB), InspectVerdict{}, errA},
		{"present", Reply[Field]{}, Got(row), Got(members("a", "b")), InspectVerdict{Fields: row, Logs: members("a", "b")}, nil},
		{"logs not a list", Reply[Field]{}, Got(row), Failed[[][]byte](errA), InspectVerdict{}, errA},
	}
	for _, f := range fenceCases {
		cases = append(cases, tcase{"fence " + f.name, f.version, Failed[[]Field](errB), Failed[[][]byte](errB), InspectVerdict{}, f.want})
	}
	for _, tc := range cases {
		var s InspectSeen
		needs := drive(t, func() InspectRead { return Inspect(&s).Need }, func(InspectRead) {
			s.Version, s.Row, s.Logs = wire(tc.version), tc.row, tc.logs
			s.Row.Made, s.Logs.Made = true, true
		})
		st := Inspect(&s)
		if !reflect.DeepEqual(needs, []InspectRead{InspectFirst}) || !errors.Is(st.Err, tc.err) || (tc.err == nil && st.Err != nil) || !reflect.DeepEqual(st.Verdict, tc.want) {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
	}
}
