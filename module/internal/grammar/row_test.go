package grammar

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestRowInt(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"0": 0, "7": 7, "1000": 1000, "999999999999999": MaxRowInt,
		"1001": 0, "01": 0, "-1": 0, "+1": 0, " 1": 0, "1.5": 0, "": 0, "abc": 0,
		"1000000000000000": 0, // 16 digits
	} {
		hi := int64(MaxRowInt)
		if len(in) <= 4 {
			hi = protocol.MaxPriority
		}
		require.Equal(t, want, RowInt([]byte(in), true, hi), "%q", in)
	}
	require.Equal(t, int64(0), RowInt(nil, false, MaxRowInt), "absent")
	require.Equal(t, int64(0), RowInt([]byte("5"), false, MaxRowInt), "absent whatever the bytes")
	require.Equal(t, int64(123456), RowInt([]byte("123456"), true, MaxRowInt))
}
