package verdict

import (
	"errors"
	"reflect"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestPromoteAll(t *testing.T) {
	t.Parallel()
	all := func(card Reply[int64]) func(*PromoteSeen) PromoteStep {
		return func(s *PromoteSeen) PromoteStep { return PromoteAll(s, card) }
	}
	both := []PromoteRead{PromoteFirst, PromoteRows}
	t.Run("delayed empty", func(t *testing.T) {
		// the head is not looked at: nothing to do
		needs, st := promoteScript{due: Failed[[][]byte](errA)}.runWith(t, all(Got[int64](0)))
		if !reflect.DeepEqual(needs, []PromoteRead{PromoteFirst}) || st.Err != nil || st.Verdict.Moves != nil {
			t.Fatalf("%v %+v", needs, st)
		}
	})
	for _, tc := range fenceCases {
		t.Run("fence "+tc.name, func(t *testing.T) {
			needs, st := promoteScript{version: tc.version, due: Failed[[][]byte](errB)}.runWith(t, all(Failed[int64](errB)))
			if !reflect.DeepEqual(needs, []PromoteRead{PromoteFirst}) || !errors.Is(st.Err, tc.want) {
				t.Fatalf("%v %+v", needs, st)
			}
		})
	}
	t.Run("delayed not a zset", func(t *testing.T) {
		needs, st := promoteScript{due: Failed[[][]byte](errB)}.runWith(t, all(Failed[int64](errA)))
		if !reflect.DeepEqual(needs, []PromoteRead{PromoteFirst}) || st.Err != errA {
			t.Fatalf("%v %+v", needs, st)
		}
	})
	t.Run("the head, due or not, as PROMOTE's", func(t *testing.T) {
		needs, st := promoteScript{
			due:  Got(members("7", "x", "2")),
			rows: map[string]Reply[[]Field]{"7": Got(fields("=1", "=3"))},
		}.runWith(t, all(Got[int64](10)))
		// x is no id and 2's row is gone: both leave delayed, unmoved
		want := PromoteVerdict{Moved: 1, Moves: []Move{{To: ToPending, Score: protocol.PendingScore(3, 7)}, {}, {}}, Signal: true}
		if !reflect.DeepEqual(needs, both) || st.Err != nil || !reflect.DeepEqual(st.Verdict, want) {
			t.Fatalf("%v %+v", needs, st)
		}
	})
	t.Run("a row's refusal", func(t *testing.T) {
		needs, st := promoteScript{due: Got(members("1")), rows: map[string]Reply[[]Field]{"1": Failed[[]Field](errA)}}.runWith(t, all(Got[int64](1)))
		if !reflect.DeepEqual(needs, both) || st.Err != errA {
			t.Fatalf("%v %+v", needs, st)
		}
	})
}
