package host

import "testing"

// The numkeys parser answers key-position requests (cluster routing,
// COMMAND GETKEYS, ACL): digits only, no sign, no leading zero except "0",
// and the keys must be present.
func TestNumkeys(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		argc int
		want int
	}{
		{"0", 2, 0},
		{"1", 3, 1},
		{"3", 5, 3},
		{"3", 6, 3}, // arguments after the keys
		{"3", 4, -1},
		{"12", 20, 12},
		{"", 5, -1},
		{"03", 5, -1},
		{"00", 5, -1},
		{"+1", 5, -1},
		{"-1", 5, -1},
		{"-0", 5, -1},
		{" 1", 5, -1},
		{"1 ", 5, -1},
		{"1a", 5, -1},
		{"0x1", 5, -1},
		{"1\x00", 5, -1},
		{"999999999", 5, -1},
		{"9999999999", 1 << 30, -1}, // too long to be a count
		{"1", 1, -1},
		{"0", 1, -1}, // no numkeys argument at all
	} {
		if got := numkeys([]byte(tc.arg), tc.argc); got != tc.want {
			t.Errorf("numkeys(%q, argc %d) = %d, want %d", tc.arg, tc.argc, got, tc.want)
		}
	}
}
