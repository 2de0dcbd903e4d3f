package verdict

import (
	"errors"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestScheduleSet(t *testing.T) {
	t.Parallel()
	wrong := errors.New("WRONGTYPE")
	fields := func(state string, set bool) Reply[[2]Field] {
		return Got([2]Field{Str("def"), {Bytes: []byte(state), Set: set}})
	}
	ok := Got(int64(0))
	st, err := ScheduleSet(&ScheduleSetSeen{Version: wire(Reply[Field]{}), Fields: fields("", false), Due: ok, IDs: ok}, 100)
	if err != nil || st != (State{Rev: 1, Last: 100, Next: 100}) {
		t.Fatalf("new: %+v %v", st, err)
	}
	st, _ = ScheduleSet(&ScheduleSetSeen{Version: wire(Reply[Field]{}), Fields: fields("4 9 50 60 0", true), Due: ok, IDs: ok}, 100)
	if st != (State{Rev: 5, Count: 9, Last: 50, Next: 100}) {
		t.Fatalf("existing: %+v", st)
	}
	st, _ = ScheduleSet(&ScheduleSetSeen{Version: wire(Reply[Field]{}), Fields: fields("4 9 50 0 1", true), Due: ok, IDs: ok}, 100)
	if st != (State{Rev: 5, Count: 9, Last: 50, Paused: true}) {
		t.Fatalf("paused: %+v", st)
	}
	// the order: fence, fields, scheddue, schedids
	_, err = ScheduleSet(&ScheduleSetSeen{Version: Got(Field{}), Fields: Failed[[2]Field](wrong)}, 100)
	refusedWith(t, err, protocol.ErrWireMissing)
	_, err = ScheduleSet(&ScheduleSetSeen{Version: wire(Reply[Field]{}), Fields: Failed[[2]Field](wrong), Due: Failed[int64](errors.New("x"))}, 100)
	if err != wrong {
		t.Fatalf("fields first: %v", err)
	}
	_, err = ScheduleSet(&ScheduleSetSeen{Version: wire(Reply[Field]{}), Fields: fields("", false), Due: ok, IDs: Failed[int64](wrong)}, 100)
	if err != wrong {
		t.Fatalf("schedids: %v", err)
	}
}
