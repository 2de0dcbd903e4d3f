package verdict

import (
	"errors"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestScheduleDueLimit(t *testing.T) {
	t.Parallel()
	bad := refusal(protocol.ErrBadArg(protocol.ScheduleDue.Name, "limit"))
	for _, tc := range []struct {
		limit string
		n     int64
		err   error
	}{
		{"1", 1, nil},
		{protocol.FormatInt(protocol.MaxCount), protocol.MaxCount, nil},
		{protocol.FormatInt(protocol.MaxCount + 1), 0, bad},
		{"0", 0, bad},
		{"-1", 0, bad},
		{"+1", 0, bad},
		{"", 0, bad},
	} {
		n, err := ScheduleDueLimit([]byte(tc.limit))
		if n != tc.n || !errors.Is(err, tc.err) {
			t.Errorf("%q: %d %v", tc.limit, n, err)
		}
	}
}
