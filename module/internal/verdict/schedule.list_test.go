package verdict

import (
	"errors"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestScheduleListValues(t *testing.T) {
	t.Parallel()
	badAfter := refusal(protocol.ErrBadArg(protocol.ScheduleList.Name, "after"))
	badCount := refusal(protocol.ErrBadArg(protocol.ScheduleList.Name, "count"))
	for _, tc := range []struct {
		after, count string
		n            int64
		err          error
	}{
		{"", "10", 10, nil},
		{"nightly", "1", 1, nil},
		{strings.Repeat("s", protocol.MaxScheduleID), "5", 5, nil},
		{strings.Repeat("s", protocol.MaxScheduleID+1), "5", 0, badAfter},
		{"a b", "5", 0, badAfter},
		{"a b", "0", 0, badAfter}, // after before count
		{"", "0", 0, badCount},
		{"", "01", 0, badCount},
		{"", "x", 0, badCount},
		{"", protocol.FormatInt(protocol.MaxCount + 1), 0, badCount},
	} {
		n, err := ScheduleListValues([]byte(tc.after), []byte(tc.count))
		if n != tc.n || !errors.Is(err, tc.err) {
			t.Errorf("%q %q: %d %v", tc.after, tc.count, n, err)
		}
	}
}
