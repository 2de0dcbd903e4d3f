package verdict

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

func TestFailuresIncr(t *testing.T) {
	t.Parallel()
	v, err := FailuresIncr(&FailuresSeen{Version: fenced(), Counter: Got(Field{}), PTTL: Got[int64](-2)})
	require.NoError(t, err)
	require.Equal(t, FailuresVerdict{Count: 1, Expire: true}, v)
	v, err = FailuresIncr(&FailuresSeen{Version: fenced(), Counter: Got(Str("41")), PTTL: Got[int64](900)})
	require.NoError(t, err)
	require.Equal(t, FailuresVerdict{Count: 42}, v)
	v, err = FailuresIncr(&FailuresSeen{Version: fenced(), Counter: Got(Str("-5")), PTTL: Got[int64](-1)})
	require.NoError(t, err)
	require.Equal(t, FailuresVerdict{Count: -4, Expire: true}, v)
	for _, bad := range []string{"abc", "", "01", "+1", " 1", "1.5", "9223372036854775808", "-0"} {
		_, err := FailuresIncr(&FailuresSeen{Version: fenced(), Counter: Got(Str(bad)), PTTL: Got[int64](-1)})
		require.Equal(t, grammar.Refusal(protocol.ErrNotInteger), err, bad)
	}
	_, err = FailuresIncr(&FailuresSeen{Version: fenced(), Counter: Got(Str("9223372036854775807")), PTTL: Got[int64](-1)})
	require.Equal(t, grammar.Refusal(protocol.ErrOverflow), err)
	_, err = FailuresIncr(&FailuresSeen{Version: Got(Str("1")), Counter: Got(Str("abc"))})
	require.Equal(t, grammar.Refusal(protocol.ErrWireFound("1")), err, "the fence before the counter")
}
