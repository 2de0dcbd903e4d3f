package verdict

import (
	"errors"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestChildrenValues(t *testing.T) {
	t.Parallel()
	bad := func(arg string) error { return refusal(protocol.ErrBadArg(protocol.Children.Name, arg)) }
	maxID := protocol.FormatInt(protocol.MaxJobID)
	for _, tc := range []struct {
		id, after, count string
		from, n          int64
		err              error
	}{
		{"1", "0", "10", 0, 10, nil},
		{"7", "3", "2", 3, 2, nil},
		{maxID, maxID, protocol.FormatInt(protocol.MaxCount), protocol.MaxJobID, protocol.MaxCount, nil},
		{"0", "0", "10", 0, 0, bad("id")},
		{"01", "0", "10", 0, 0, bad("id")},
		{"x", "x", "x", 0, 0, bad("id")}, // id, after, count in that order
		{"1", "-1", "0", 0, 0, bad("after")},
		{"1", protocol.FormatInt(protocol.MaxJobID + 1), "10", 0, 0, bad("after")},
		{"1", "0", "0", 0, 0, bad("count")},
		{"1", "0", protocol.FormatInt(protocol.MaxCount + 1), 0, 0, bad("count")},
	} {
		from, n, err := ChildrenValues([]byte(tc.id), []byte(tc.after), []byte(tc.count))
		if from != tc.from || n != tc.n || !errors.Is(err, tc.err) {
			t.Errorf("%q %q %q: %d %d %v", tc.id, tc.after, tc.count, from, n, err)
		}
	}
}
