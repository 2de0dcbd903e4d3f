package verdict

import (
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestRequeueDeadJob(t *testing.T) {
	t.Parallel()
	f := DeadFilter{Max: protocol.MaxScore}
	row := []Field{Str("dead"), Str("3"), Str("3"), Str("10"), Str("l1"), {}, {}, {}, Str("boom")}
	mv, mx, ok := RequeueDeadJob(&f, []byte("7"), 100, row)
	if !ok || mv.To != ToLane || string(mv.Lane) != "l1" || mv.Score != protocol.PendingScore(10, 7) || mx != 6 {
		t.Errorf("%+v %d %v", mv, mx, ok)
	}
	row[4] = Field{}
	if mv, _, _ := RequeueDeadJob(&f, []byte("7"), 100, row); mv.To != ToPending {
		t.Errorf("no lane: %+v", mv)
	}
	row[0] = Str("pending")
	if _, _, ok := RequeueDeadJob(&f, []byte("7"), 100, row); ok {
		t.Error("took a job that is not dead")
	}
}
