package grammar

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestString2LL(t *testing.T) {
	t.Parallel()
	good := map[string]int64{
		"0": 0, "1": 1, "-1": -1, "42": 42,
		"9223372036854775807":  math.MaxInt64,
		"-9223372036854775808": math.MinInt64,
	}
	for in, want := range good {
		got, ok := String2LL([]byte(in))
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "-", "+1", "01", "-0", " 1", "1 ", "1.5", "abc",
		"9223372036854775808", "-9223372036854775809", "99999999999999999999", "123456789012345678901"} {
		_, ok := String2LL([]byte(in))
		require.False(t, ok, in)
	}
}

func TestDecimal(t *testing.T) {
	t.Parallel()
	v, ok := Decimal([]byte("1000"), 0, 1000)
	require.True(t, ok)
	require.EqualValues(t, 1000, v)
	for _, in := range []string{"", "01", "-1", "+1", "1.5", "1001", "1234567890123456", " 1"} {
		_, ok := Decimal([]byte(in), 0, 1000)
		require.False(t, ok, in)
	}
	_, ok = Decimal([]byte("0"), 1, 10)
	require.False(t, ok, "below the domain")
	require.True(t, ID([]byte("1")))
	require.False(t, ID([]byte("0")))
	require.False(t, ID([]byte("4398046511104")), "past MaxJobID")
}

func argv(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

func TestShape(t *testing.T) {
	t.Parallel()
	v := protocol.Extend
	k := protocol.KeysOf("q")
	ok := append([]string{v.Command, "3"}, v.KeyNames(k)...)
	c, err := Shape(v, argv(append(ok, "1", "1", "100")...))
	require.NoError(t, err)
	require.Len(t, c.Keys, 3)
	require.Len(t, c.Args, 3)
	require.NoError(t, Layout(v, c))

	cases := map[string]string{
		"03":                   protocol.ErrNotInteger,
		"+3":                   protocol.ErrNotInteger,
		" 3":                   protocol.ErrNotInteger,
		"99999999999999999999": protocol.ErrNotInteger,
		"-1":                   protocol.ErrNumkeysNegative,
		"9":                    protocol.ErrNumkeysTooMany,
		"2":                    protocol.ErrNumkeys("extend", 3),
	}
	for nk, want := range cases {
		in := append([]string{v.Command, nk}, v.KeyNames(k)...)
		_, err := Shape(v, argv(in...))
		require.EqualError(t, err, want, nk)
	}
	_, err = Shape(v, argv(v.Command))
	require.EqualError(t, err, protocol.ErrArity("extend"))
}

func TestLayout(t *testing.T) {
	t.Parallel()
	v := protocol.Complete
	good := v.KeyNames(protocol.KeysOf("orders"))
	require.NoError(t, Layout(v, Call{Keys: argv(good...)}))
	bad := [][]string{
		{"emq:{orders}", good[1], good[2], good[3]},
		{good[0], good[1], good[3], good[2]},
		{good[0], good[1], good[2], "emq:{other}:active"},
		{"emq:{a{b}:", "emq:{a{b}:version", "emq:{a{b}:stats", "emq:{a{b}:active"},
		{"emq:{}:", "emq:{}:version", "emq:{}:stats", "emq:{}:active"},
	}
	for _, keys := range bad {
		err := Layout(v, Call{Keys: argv(keys...)})
		require.EqualError(t, err, protocol.ErrLayout("complete"), "%q", keys)
	}
	require.NoError(t, SameTag(v, []byte("emq:{q}:"), []byte("emq:{q}:job:1")))
	require.Error(t, SameTag(v, []byte("emq:{q}:"), []byte("emq:{r}:job:1")))
}

func TestFence(t *testing.T) {
	t.Parallel()
	require.NoError(t, Fence([]byte("2"), true))
	require.EqualError(t, Fence(nil, false), protocol.ErrWireMissing)
	require.EqualError(t, Fence([]byte("1"), true), protocol.ErrWireFound("1"))
	var r Refusal
	require.True(t, errors.As(Fence(nil, false), &r))
	// the text ends where the server ends an error reply: at the first NUL
	require.EqualError(t, Fence([]byte("1\x00x"), true), "EMQWIRE wire 1")
	require.Equal(t, "ab", Clip("ab\x00c\x00"))
	require.Equal(t, "a\r\nb", Clip("a\r\nb"))
}

func TestPredictHincrby(t *testing.T) {
	t.Parallel()
	v, err := PredictHincrby(nil, false, 3)
	require.NoError(t, err)
	require.EqualValues(t, 3, v)
	v, err = PredictHincrby([]byte("41"), true, 1)
	require.NoError(t, err)
	require.EqualValues(t, 42, v)
	_, err = PredictHincrby([]byte("abc"), true, 1)
	require.EqualError(t, err, protocol.ErrHashNotInteger)
	_, err = PredictHincrby([]byte("01"), true, 1)
	require.EqualError(t, err, protocol.ErrHashNotInteger)
	_, err = PredictHincrby([]byte("9223372036854775807"), true, 1)
	require.EqualError(t, err, protocol.ErrOverflow)
	_, err = PredictHincrby([]byte("-9223372036854775808"), true, -1)
	require.EqualError(t, err, protocol.ErrOverflow)
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	require.EqualValues(t, 500, RetryDelay([]byte("fixed:500"), 7))
	require.EqualValues(t, 1000, RetryDelay([]byte("exponential:1000"), 1))
	require.EqualValues(t, 8000, RetryDelay([]byte("exponential:1000"), 4))
	require.EqualValues(t, protocol.MaxRetryDelay, RetryDelay([]byte("exponential:1000"), 40))
	require.EqualValues(t, protocol.MaxRetryDelay, RetryDelay([]byte("exponential:1"), 1_000_000))
	require.EqualValues(t, 0, RetryDelay([]byte("exponential:0"), 1_000_000))
	require.EqualValues(t, 0, RetryDelay([]byte("bogus"), 2))
}

func TestCountedArity(t *testing.T) {
	t.Parallel()
	v := protocol.Add
	arity, count := Refusal(protocol.ErrArity("add")), Refusal(protocol.ErrBadArg("add", "count"))
	cases := []struct {
		args []string
		n    int
		err  error
	}{
		{nil, 0, arity},
		{[]string{"0"}, 0, count},
		{[]string{"01", "a", "b"}, 0, count},
		{[]string{"1001"}, 0, count},
		{[]string{"x"}, 0, count},
		{[]string{"1"}, 0, arity},
		{[]string{"1", "a", "b"}, 0, arity},
		{[]string{"2", "a", "b", "c", "d"}, 0, arity},
		{[]string{"1", "a", "b", "c"}, 1, nil},
		{[]string{"2", "a", "b", "c", "d", "e", "f"}, 2, nil},
	}
	for _, tc := range cases {
		n, err := CountedArity(v, argv(tc.args...), 3)
		require.Equal(t, tc.err, err, "%q", tc.args)
		require.Equal(t, tc.n, n, "%q", tc.args)
	}
}

func TestOptionArity(t *testing.T) {
	t.Parallel()
	v := protocol.Add
	arity, count, options := Refusal(protocol.ErrArity("add")), Refusal(protocol.ErrBadArg("add", "count")), Refusal(protocol.ErrBadArg("add", "options"))
	cases := []struct {
		args []string
		n, k int
		err  error
	}{
		{nil, 0, 0, arity},
		{[]string{"0"}, 0, 0, count},
		{[]string{"x", "y"}, 0, 0, count},
		{[]string{"1"}, 0, 0, arity}, // no ARGV[2]
		{[]string{"1", "9"}, 0, 0, options},
		{[]string{"1", "01"}, 0, 0, options},
		{[]string{"1", "-1"}, 0, 0, options},
		{[]string{"1", "x", "a", "b", "c"}, 0, 0, options},
		{[]string{"1", "0", "a", "b"}, 0, 0, arity},
		{[]string{"1", "0", "a", "b", "c"}, 1, 0, nil},
		{[]string{"2", "0", "a", "b", "c", "d", "e", "f"}, 2, 0, nil},
		{[]string{"1", "1", "lane", "a", "b", "c"}, 0, 0, arity},
		{[]string{"1", "1", "lane", "a", "b", "c", "l"}, 1, 1, nil},
		{[]string{"2", "2", "x", "y", "a", "b", "c", "1", "2", "a", "b", "c", "1", "2"}, 2, 2, nil},
		{[]string{"1", "8", "1", "2", "3", "4", "5", "6", "7", "8", "a", "b", "c", "1", "2", "3", "4", "5", "6", "7", "8"}, 1, 8, nil},
	}
	for _, tc := range cases {
		n, k, err := OptionArity(v, argv(tc.args...), 3)
		require.Equal(t, tc.err, err, "%q", tc.args)
		require.Equal(t, tc.n, n, "%q", tc.args)
		require.Equal(t, tc.k, k, "%q", tc.args)
	}
}
