package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

func TestLog(t *testing.T) {
	t.Parallel()
	first := []LogRead{LogFirst}
	stale := grammar.Refusal(protocol.ErrStale("log"))
	type tcase struct {
		name    string
		version Reply[Field]
		att     Reply[Field]
		len     Reply[int64]
		token   string
		cap     int64
		want    LogVerdict
		err     error
	}
	cases := []tcase{
		{"gone", Reply[Field]{}, Got(Field{}), Failed[int64](errB), "1", 10, LogVerdict{Gone: true}, nil},
		{"row not a hash", Reply[Field]{}, Failed[Field](errA), Failed[int64](errB), "1", 10, LogVerdict{}, errA},
		{"stale before the logs", Reply[Field]{}, Got(Str("2")), Failed[int64](errB), "1", 10, LogVerdict{}, stale},
		{"a token is bytes, not a number", Reply[Field]{}, Got(Str("1")), Got[int64](0), "01", 10, LogVerdict{}, stale},
		{"first line", Reply[Field]{}, Got(Str("1")), Got[int64](0), "1", 10, LogVerdict{Pushed: 1, Reply: 1}, nil},
		{"up to cap", Reply[Field]{}, Got(Str("1")), Got[int64](9), "1", 10, LogVerdict{Pushed: 10, Reply: 10}, nil},
		{"past cap", Reply[Field]{}, Got(Str("1")), Got[int64](10), "1", 10, LogVerdict{Pushed: 11, Trim: true, Reply: 10}, nil},
		{"far past a lowered cap", Reply[Field]{}, Got(Str("1")), Got[int64](50), "1", 1, LogVerdict{Pushed: 51, Trim: true, Reply: 1}, nil},
		{"logs not a list", Reply[Field]{}, Got(Str("1")), Failed[int64](errA), "1", 10, LogVerdict{}, errA},
		{"an empty token", Reply[Field]{}, Got(Str("")), Got[int64](0), "", 10, LogVerdict{Pushed: 1, Reply: 1}, nil},
	}
	for _, f := range fenceCases {
		cases = append(cases, tcase{"fence " + f.name, f.version, Failed[Field](errB), Failed[int64](errB), "1", 10, LogVerdict{}, f.want})
	}
	for _, tc := range cases {
		var s LogSeen
		needs := drive(t, func() LogRead { return Log([]byte(tc.token), tc.cap, &s).Need }, func(n LogRead) {
			s.Version, s.Att, s.Len = wire(tc.version), tc.att, tc.len
			s.Att.Made, s.Len.Made = true, true
		})
		st := Log([]byte(tc.token), tc.cap, &s)
		if !reflect.DeepEqual(needs, first) || !errors.Is(st.Err, tc.err) || (tc.err == nil && st.Err != nil) || st.Verdict != tc.want {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
	}
}

func TestProgress(t *testing.T) {
	t.Parallel()
	stale := grammar.Refusal(protocol.ErrStale("progress"))
	type tcase struct {
		name    string
		version Reply[Field]
		att     Reply[Field]
		token   string
		want    ProgressVerdict
		err     error
	}
	cases := []tcase{
		{"gone", Reply[Field]{}, Got(Field{}), "1", ProgressVerdict{Gone: true}, nil},
		{"row not a hash", Reply[Field]{}, Failed[Field](errA), "1", ProgressVerdict{}, errA},
		{"stale", Reply[Field]{}, Got(Str("3")), "2", ProgressVerdict{}, stale},
		{"binary token", Reply[Field]{}, Got(Str("\x00\xff")), "\x00\xff", ProgressVerdict{}, nil},
		{"current", Reply[Field]{}, Got(Str("3")), "3", ProgressVerdict{}, nil},
	}
	for _, f := range fenceCases {
		cases = append(cases, tcase{"fence " + f.name, f.version, Failed[Field](errB), "1", ProgressVerdict{}, f.want})
	}
	for _, tc := range cases {
		var s ProgressSeen
		needs := drive(t, func() ProgressRead { return Progress([]byte(tc.token), &s).Need }, func(n ProgressRead) {
			s.Version, s.Att = wire(tc.version), tc.att
			s.Att.Made = true
		})
		st := Progress([]byte(tc.token), &s)
		if !reflect.DeepEqual(needs, []ProgressRead{ProgressFirst}) || !errors.Is(st.Err, tc.err) || (tc.err == nil && st.Err != nil) || st.Verdict != tc.want {
			t.Errorf("%s: %v %+v", tc.name, needs, st)
		}
	}
}
