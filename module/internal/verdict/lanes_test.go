package verdict

import (
	"errors"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestLanesValues(t *testing.T) {
	t.Parallel()
	badAfter := refusal(protocol.ErrBadArg(protocol.Lanes.Name, "after"))
	badCount := refusal(protocol.ErrBadArg(protocol.Lanes.Name, "count"))
	for _, tc := range []struct {
		after, count string
		n            int64
		err          error
	}{
		{"", "10", 10, nil},
		{"a b\x00", "1", 1, nil}, // any bytes
		{strings.Repeat("l", protocol.MaxLaneName), "5", 5, nil},
		{strings.Repeat("l", protocol.MaxLaneName+1), "5", 0, badAfter},
		{strings.Repeat("l", protocol.MaxLaneName+1), "0", 0, badAfter}, // after before count
		{"", "0", 0, badCount},
		{"", "01", 0, badCount},
		{"", protocol.FormatInt(protocol.MaxCount + 1), 0, badCount},
	} {
		n, err := LanesValues([]byte(tc.after), []byte(tc.count))
		if n != tc.n || !errors.Is(err, tc.err) {
			t.Errorf("%q %q: %d %v", tc.after, tc.count, n, err)
		}
	}
}
