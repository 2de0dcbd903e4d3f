package verdict

import (
	"testing"
)

func TestLaneCapChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stored   Field
		cap      int64
		set, del bool
	}{
		{Field{}, 3, true, false},
		{Str("3"), 3, false, false},
		{Str("03"), 3, true, false}, // compared as stored bytes
		{Str("2"), 3, true, false},
		{Str("2"), 0, false, true},
		{Str(""), 0, false, true},
		{Field{}, 0, false, false},
	} {
		if set, del := LaneCapChange(tc.stored, tc.cap); set != tc.set || del != tc.del {
			t.Errorf("%+v: %v %v", tc, set, del)
		}
	}
}
