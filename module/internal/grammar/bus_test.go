package grammar

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestBusGrammar(t *testing.T) {
	t.Parallel()
	base := []byte("emq:{q}:")
	require.True(t, NamedKey(base, "bus:", []byte("emq:{q}:bus:main")))
	require.True(t, NamedKey(base, "bus:", []byte("emq:{q}:bus:a-b_c.d:e/f@g")))
	for _, k := range []string{"emq:{q}:bus:", "emq:{q}:bus:a b", "emq:{q}:bus:a\x00", "emq:{q}:bus:{x}", "emq:{r}:bus:a", "emq:{q}:failures:a", "emq:{q}:bus:" + strings.Repeat("x", 129)} {
		require.False(t, NamedKey(base, "bus:", []byte(k)), k)
	}
	for _, ok := range []string{"1-0", "0-1", "999999999999999-999999999999999"} {
		_, _, good := StreamID([]byte(ok))
		require.True(t, good, ok)
	}
	for _, bad := range []string{"0-0", "1", "1-", "-1", "01-1", "1-01", "1-2-3", "*", "1000000000000000-0", "+1-0"} {
		_, _, good := StreamID([]byte(bad))
		require.False(t, good, bad)
	}
	require.True(t, IDAfter([]byte("10"), []byte("0"), []byte("9"), []byte("99")))
	require.False(t, IDAfter([]byte("10"), []byte("0"), []byte("10"), []byte("0")))
	require.True(t, IDAfter([]byte("10"), []byte("1"), []byte("10"), []byte("0")))
	for _, bad := range []string{"", "-1", "4294967296", "01", "x", "1.0"} {
		_, err := BitOffset([]byte(bad))
		require.Equal(t, Refusal(protocol.ErrTRAOffset), err, bad)
	}
	off, err := BitOffset([]byte("4294967295"))
	require.NoError(t, err)
	require.EqualValues(t, protocol.MaxBitOffset, off)
	for _, bad := range []string{"", "2", "01", "-1", "true"} {
		_, err := Bit([]byte(bad))
		require.Equal(t, Refusal(protocol.ErrTRABit), err, bad)
	}
	n, err := PredictIncr(nil, false)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
}

func TestEntriesArity(t *testing.T) {
	t.Parallel()
	args := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i, x := range s {
			out[i] = []byte(x)
		}
		return out
	}
	starts, err := EntriesArity(protocol.Append, args("2", "1-1", "1", "f", "v", "1-2", "2", "a", "b", "c", "d"), nil)
	require.NoError(t, err)
	require.Equal(t, []int{1, 5}, starts)
	arity := Refusal(protocol.ErrArity("append"))
	for _, tc := range []struct {
		args []string
		want error
	}{
		{nil, arity},
		{[]string{"0"}, Refusal(protocol.ErrBadArg("append", "count"))},
		{[]string{"1"}, arity},
		{[]string{"1", "1-1"}, arity},
		{[]string{"1", "1-1", "0"}, Refusal(protocol.ErrBadArg("append", "fields"))},
		{[]string{"1", "1-1", "1", "f"}, arity},
		{[]string{"1", "1-1", "1", "f", "v", "extra"}, arity},
	} {
		_, err := EntriesArity(protocol.Append, args(tc.args...), nil)
		require.Equal(t, tc.want, err, tc.args)
	}
}
