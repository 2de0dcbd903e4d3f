package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

func TestRemoveCheck(t *testing.T) {
	t.Parallel()
	active := grammar.Refusal(protocol.ErrRemoveActive)
	children := grammar.Refusal(protocol.ErrRemoveHasChildren)
	for _, tc := range []struct {
		state   Field
		cascade bool
		want    error
	}{
		{Str("pending"), false, nil},
		{Str("active"), true, active},
		{Str("waiting"), false, children},
		{Str("waiting"), true, nil},
		{Str("completed"), false, nil},
		{Field{}, false, nil},
	} {
		if err := RemoveCheck(tc.state, tc.cascade); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%+v %v: %v", tc.state, tc.cascade, err)
		}
	}
}

func TestRemovePlan(t *testing.T) {
	t.Parallel()
	p := []byte("1")
	moves, n := RemovePlan([]RemoveJob{
		{State: Str("waiting")},
		{State: Str("pending"), Lane: []byte("l"), Parent: p, InRemoval: true},
		{State: Str("delayed"), Parent: p},
		{State: Str("dead"), Parent: p},
		{State: Str("completed"), Parent: p},
		{State: Str("odd")},
		{State: Str("pending")},
	}, nil)
	want := []RemoveMove{
		{Set: RemoveWaiting, Unfinished: true},
		{Set: RemoveLane, Unfinished: true},
		{Set: RemoveDelayed, Unfinished: true, Tell: true},
		{Set: RemoveDead},
		{Set: RemoveCompleted},
		{Set: RemoveNone},
		{Set: RemovePending, Unfinished: true},
	}
	if !reflect.DeepEqual(moves, want) || n != 6 {
		t.Fatalf("%+v %d", moves, n)
	}
}
