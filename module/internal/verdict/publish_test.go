package verdict

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

func TestPublish(t *testing.T) {
	t.Parallel()
	require.NoError(t, Publish(&StreamSeen{Version: fenced(), Exists: Got[int64](0)}))
	branded := &StreamSeen{Version: fenced(), Exists: Got[int64](1), Top: []byte("1-1"), HasFirst: true, FirstField: Str("brand"), FirstValue: Str("emq")}
	require.NoError(t, Publish(branded))
	empty := &StreamSeen{Version: fenced(), Exists: Got[int64](1), Top: []byte("1-1")}
	require.NoError(t, Publish(empty), "a stream without entries is taken")
	kind := grammar.Refusal(protocol.ErrKind("publish"))
	for _, f := range [][2]Field{{Str("brand"), Str("bull")}, {Str("event"), Str("emq")}, {Str("Brand"), Str("emq")}} {
		s := *branded
		s.FirstField, s.FirstValue = f[0], f[1]
		require.Equal(t, kind, Publish(&s))
	}
	last := *branded
	last.Top = []byte(grammar.LastStreamID)
	require.Equal(t, grammar.Refusal(protocol.ErrNotAfterTop("publish")), Publish(&last))
}
