package verdict

import (
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestRemoveDeadJob(t *testing.T) {
	t.Parallel()
	f := DeadFilter{Max: protocol.MaxScore, Lane: []byte("l1")}
	if RemoveDeadJob(&f, 1, nil) != DeadRowless || RemoveDeadJob(&f, 1, []Field{{}, Str("dead")}) != DeadRowless {
		t.Error("a member without a row is not dropped")
	}
	if RemoveDeadJob(&f, 1, []Field{Str("1"), Str("dead"), Str("l1"), {}, {}}) != DeadTaken {
		t.Error("a matching job is not taken")
	}
	if RemoveDeadJob(&f, 1, []Field{Str("1"), Str("dead"), Str("l2"), {}, {}}) != DeadLeft {
		t.Error("a job of another lane is taken")
	}
}
