package verdict

import (
	"testing"
)

func TestLaneInfoReply(t *testing.T) {
	t.Parallel()
	got, err := LaneInfoReply(Got([3]Field{Str("2"), Str("x"), Str("1")}), Got[int64](4))
	if err != nil || got != [4]int64{4, 2, 0, 1} {
		t.Errorf("%v %v", got, err)
	}
	if _, err := LaneInfoReply(Failed[[3]Field](errA), Failed[int64](errB)); err != errA {
		t.Errorf("laneinfo first: %v", err)
	}
}
