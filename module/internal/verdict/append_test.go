package verdict

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

func ids(s ...string) []StreamID {
	out := make([]StreamID, len(s))
	for i, x := range s {
		ms, seq, ok := grammar.StreamID([]byte(x))
		if !ok {
			panic(x)
		}
		out[i] = StreamID{ms, seq}
	}
	return out
}

func TestAppend(t *testing.T) {
	t.Parallel()
	absent := &StreamSeen{Version: fenced(), Exists: Got[int64](0)}
	require.NoError(t, Append(ids("0-1", "0-2", "1-0", "10-0"), absent))
	notAfter := grammar.Refusal(protocol.ErrNotAfterTop("append"))
	require.Equal(t, notAfter, Append(ids("5-1", "5-1"), absent), "after the previous entry")
	require.Equal(t, notAfter, Append(ids("9-0", "10-0", "2-0"), absent))

	top := &StreamSeen{Version: fenced(), Exists: Got[int64](1), Top: []byte("100-5")}
	require.NoError(t, Append(ids("100-6"), top))
	require.NoError(t, Append(ids("101-0"), top))
	require.Equal(t, notAfter, Append(ids("100-5"), top))
	require.Equal(t, notAfter, Append(ids("99-9"), top))
	require.Equal(t, notAfter, Append(ids("100-6", "100-6"), top), "a bad id later in the batch refuses all")
	big := &StreamSeen{Version: fenced(), Exists: Got[int64](1), Top: []byte(grammar.LastStreamID)}
	require.Equal(t, notAfter, Append(ids("999999999999999-999999999999999"), big), "compared exactly past 2^53")

	wrong := &StreamSeen{Version: fenced(), Exists: Got[int64](1), Info: Failed[struct{}](grammar.Refusal(protocol.ErrWrongType))}
	require.Equal(t, grammar.Refusal(protocol.ErrWrongType), Append(ids("1-1"), wrong))
	unfenced := &StreamSeen{Version: Got(Field{}), Exists: Got[int64](0)}
	require.Equal(t, grammar.Refusal(protocol.ErrWireMissing), Append(ids("1-1"), unfenced), "the fence first")
}
