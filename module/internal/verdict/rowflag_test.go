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
	fresh, old := Field{}, Str("7")
	for _, c := range []struct {
		name      string
		jobs      []AddJob
		keep, ev  bool
		seq, flag Field
		want      string
	}{
		{"plain jobs, a queue's first", plain, false, false, fresh, Field{}, "0"},
		{"plain jobs, a queue older than the flag", plain, false, false, old, Field{}, ""},
		{"plain jobs, a fresh queue", plain, false, false, old, Str("0"), ""},
		{"plain jobs, first, flag already 0", plain, false, false, fresh, Str("0"), ""},
		{"plain jobs, first, flag 1 by hand", plain, false, false, fresh, Str("1"), ""},
		{"plain jobs, first, flag of other bytes", plain, false, false, fresh, Str(""), ""},
		{"plain jobs on a set queue", plain, false, false, old, Str("1"), ""},
		{"plain jobs on an events queue", plain, false, false, old, Str("2"), ""},
		{"no jobs", nil, true, true, fresh, Field{}, ""},
		{"a lane, first", lane, false, false, fresh, Field{}, "1"},
		{"a lane, older queue", lane, false, false, old, Field{}, "1"},
		{"a lane, fresh queue", lane, false, false, old, Str("0"), "1"},
		{"a lane, events queue", lane, false, true, old, Str("2"), "1"},
		{"a child", []AddJob{{Parent: -1, Kids: 1}, {Parent: 0}}, false, false, fresh, Field{}, "1"},
		{"a parent", []AddJob{{Parent: -1, Kids: 1}}, false, false, old, Str("0"), "1"},
		{"a wait", []AddJob{{Parent: -1, Wait: []byte("5")}}, false, false, old, Str("0"), "1"},
		{"retention on", plain, true, false, fresh, Field{}, "1"},
		{"retention and events on", plain, true, true, old, Str("2"), "1"},
		{"already set", lane, true, true, old, Str("1"), ""},
		{"set to another value", lane, false, false, old, Str("3"), "1"},
		{"empty value", plain, true, false, old, Str(""), "1"},
		{"events on, a queue's first", plain, false, true, fresh, Field{}, "2"},
		{"events on, a plain queue", plain, false, true, old, Str("0"), "2"},
		{"events on, first, flag 0", plain, false, true, fresh, Str("0"), "2"},
		{"events on, an events queue", plain, false, true, old, Str("2"), ""},
		{"events on, a set queue", plain, false, true, old, Str("1"), ""},
		{"events on, a queue older than the flag", plain, false, true, old, Field{}, ""},
		{"events on, flag of other bytes", plain, false, true, fresh, Str("00"), ""},
	} {
		if got := AddRowOpts(c.jobs, c.keep, c.ev, c.seq, c.flag); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
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
