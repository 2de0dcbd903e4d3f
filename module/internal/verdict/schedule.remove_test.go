package verdict

import (
	"errors"
	"testing"
)

func TestScheduleRemove(t *testing.T) {
	t.Parallel()
	wrong := errors.New("WRONGTYPE")
	ok := Got(int64(0))
	if n, err := ScheduleRemove(&ScheduleRemoveSeen{Version: wire(Reply[Field]{}), Exists: Got(int64(1)), Due: ok, IDs: ok}); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	if n, err := ScheduleRemove(&ScheduleRemoveSeen{Version: wire(Reply[Field]{}), Exists: Got(int64(0)), Due: ok, IDs: ok}); n != 0 || err != nil {
		t.Fatal(n, err)
	}
	if _, err := ScheduleRemove(&ScheduleRemoveSeen{Version: wire(Reply[Field]{}), Exists: Got(int64(0)), Due: Failed[int64](wrong), IDs: ok}); err != wrong {
		t.Fatal(err)
	}
}
