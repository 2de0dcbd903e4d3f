package admin

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPayloadText(t *testing.T) {
	t.Parallel()
	f, text, cut := PayloadText([]byte(`{"to":"ada@example.com","n":[1,2]}`))
	require.Equal(t, PayloadJSON, f)
	require.False(t, cut)
	require.Equal(t, "{\n  \"to\": \"ada@example.com\",\n  \"n\": [\n    1,\n    2\n  ]\n}", text)

	f, text, _ = PayloadText([]byte("hi\x00<b>"))
	require.Equal(t, PayloadBinary, f)
	require.Equal(t, "00000000  68 69 00 3c 62 3e                                 |hi.<b>|\n", text)

	f, text, _ = PayloadText(nil)
	require.Equal(t, PayloadBinary, f)
	require.Empty(t, text)

	big := []byte(strings.Repeat("x", MaxPayloadView+10))
	f, text, cut = PayloadText(big)
	require.Equal(t, PayloadBinary, f)
	require.True(t, cut)
	require.Equal(t, MaxPayloadView/16, strings.Count(text, "\n"))
}
