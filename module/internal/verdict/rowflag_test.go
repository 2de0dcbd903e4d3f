package verdict

import (
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestAddFlagsJobFields(t *testing.T) {
	t.Parallel()
	plain := []AddJob{{Parent: -1}, {Parent: -1, Lane: []byte("l")}}
	for _, c := range []struct {
		name string
		jobs []AddJob
		flag Field
		want bool
	}{
		{"plain jobs", plain, Field{}, false},
		{"a kind", append(plain[:1:1], AddJob{Kind: []byte("k")}), Field{}, true},
		{"a timeout", []AddJob{{Timeout: []byte("5")}}, Field{}, true},
		{"headers", []AddJob{{Headers: []byte("h")}}, Field{}, true},
		{"already set", []AddJob{{Kind: []byte("k")}}, Str("1"), false},
		{"set to another value", []AddJob{{Kind: []byte("k")}}, Str("2"), true},
		{"empty value", []AddJob{{Kind: []byte("k")}}, Str(""), true},
		{"plain jobs on a set queue", plain, Str("1"), false},
	} {
		if got := AddFlagsJobFields(c.jobs, c.flag); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAddRowOpts(t *testing.T) {
	t.Parallel()
	plain := []AddJob{{Parent: -1}, {Parent: -1, Kind: []byte("k"), Unique: []byte("u"), Delay: 5}}
	lane := []AddJob{{Parent: -1}, {Parent: -1, Lane: []byte("l")}}
	for _, c := range []struct {
		name     string
		jobs     []AddJob
		keep, ev bool
		flag     Field
		want     string
	}{
		{"plain jobs, a queue's first", plain, false, false, Field{}, "0"},
		{"plain jobs, flag already 0", plain, false, false, Str("0"), ""},
		{"plain jobs, flag 1 by hand", plain, false, false, Str("1"), ""},
		{"plain jobs, flag of other bytes", plain, false, false, Str(""), ""},
		{"plain jobs on an events queue", plain, false, false, Str("2"), ""},
		{"no jobs", nil, true, true, Field{}, ""},
		{"a lane, first", lane, false, false, Field{}, "1"},
		{"a lane, plain queue", lane, false, false, Str("0"), "1"},
		{"a lane, events queue", lane, false, true, Str("2"), "1"},
		{"a child", []AddJob{{Parent: -1, Kids: 1}, {Parent: 0}}, false, false, Field{}, "1"},
		{"a parent", []AddJob{{Parent: -1, Kids: 1}}, false, false, Str("0"), "1"},
		{"a wait", []AddJob{{Parent: -1, Wait: []byte("5")}}, false, false, Str("0"), "1"},
		{"retention on", plain, true, false, Field{}, "1"},
		{"retention and events on", plain, true, true, Str("2"), "1"},
		{"already set", lane, true, true, Str("1"), ""},
		{"set to another value", lane, false, false, Str("3"), "1"},
		{"empty value", plain, true, false, Str(""), "1"},
		{"events on, a queue's first", plain, false, true, Field{}, "2"},
		{"events on, a plain queue", plain, false, true, Str("0"), "2"},
		{"events on, an events queue", plain, false, true, Str("2"), ""},
		{"events on, a set queue", plain, false, true, Str("1"), ""},
		{"events on, flag of other bytes", plain, false, true, Str("00"), ""},
	} {
		if got := AddRowOpts(c.jobs, c.keep, c.ev, c.flag); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestRowFlagOff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		flag Field
		want bool
	}{
		{Field{}, true},
		{Str("0"), true},
		{Str("00"), false},
		{Str(""), false},
		{Str("1"), false},
		{Str("2"), false},
		{Str("0\x00"), false},
	} {
		if got := RowFlagOff(c.flag); got != c.want {
			t.Errorf("flag %+v: got %v, want %v", c.flag, got, c.want)
		}
	}
}

func TestClaimRowFields(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ext  bool
		flag Field
		want int
	}{
		{false, Field{}, 0},
		{false, Str("1"), 0},
		{true, Field{}, 1},
		{true, Str("0"), 1},
		{true, Str("1 "), 1},
		{true, Str("1"), len(protocol.ClaimExtendedFields)},
	} {
		if got := ClaimRowFields(c.ext, c.flag); got != c.want {
			t.Errorf("ext %v flag %+v: got %d, want %d", c.ext, c.flag, got, c.want)
		}
	}
}

func TestClaimWait(t *testing.T) {
	t.Parallel()
	const now = 10_000
	for _, c := range []struct {
		state, at Field
		want      int64
		known     bool
	}{
		{Field{}, Str("9000"), 1000, true},
		{Field{}, Str("10000"), 0, true},
		{Field{}, Str("12000"), 0, true}, // added ahead of this clock
		{Field{}, Str("0"), now, true},
		{Str("pending"), Str("9000"), 0, false}, // moved since: a retry, promoted or recovered
		{Str(""), Str("9000"), 0, false},
		{Field{}, Field{}, 0, false},
		{Field{}, Str("x"), 0, false},
		{Field{}, Str("-1"), 0, false},
		{Field{}, Str("09000"), 0, false},
		{Field{}, Str("1000000000000000"), 0, false}, // above a row number
	} {
		got, known := ClaimWait(c.state, c.at, now)
		if got != c.want || known != c.known {
			t.Errorf("state %+v at %+v: got %d %v, want %d %v", c.state, c.at, got, known, c.want, c.known)
		}
	}
}
