package verdict

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

func fenced() Reply[Field] { return Got(Str(protocol.WireString)) }

func TestJobEvents(t *testing.T) {
	t.Parallel()
	// no fence: the call fenced itself before its other reads
	require.NoError(t, JobEvents(&StreamSeen{Exists: Got[int64](0)}, 3))
	branded := &StreamSeen{Exists: Got[int64](1), Top: []byte("1-1"), HasFirst: true, FirstField: Str("brand"), FirstValue: Str("emq")}
	require.NoError(t, JobEvents(branded, 1000))
	require.NoError(t, JobEvents(&StreamSeen{Exists: Got[int64](1), Top: []byte("7-0")}, 2), "a stream without entries is taken")
	wrong := &StreamSeen{Exists: Got[int64](1), Info: Failed[struct{}](grammar.Refusal(protocol.ErrWrongType))}
	require.Equal(t, grammar.Refusal(protocol.ErrWrongType), JobEvents(wrong, 2))
	foreign := *branded
	foreign.FirstValue = Str("bull")
	require.NoError(t, JobEvents(&foreign, 2), "the brand is not read: the stream is the queue's key")
	// room for n ids after the top: seq <= 2^64-1-n, else XADD's own text
	exhausted := grammar.Refusal(protocol.ErrStreamExhausted)
	for _, c := range []struct {
		top string
		n   int
		ok  bool
	}{
		{"18446744073709551615-18446744073709551612", 3, true},
		{"18446744073709551615-18446744073709551613", 3, false},
		{"18446744073709551615-18446744073709551613", 2, true},
		{grammar.LastStreamID, 2, false},
		{"18446744073709551614-18446744073709551615", 2, true},
	} {
		s := *branded
		s.Top = []byte(c.top)
		if c.ok {
			require.NoError(t, JobEvents(&s, c.n), c.top)
		} else {
			require.Equal(t, exhausted, JobEvents(&s, c.n), c.top)
		}
	}
}
