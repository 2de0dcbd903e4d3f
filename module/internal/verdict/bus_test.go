package verdict

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

func fenced() Reply[Field] { return Got(Str(protocol.WireString)) }

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

func TestSetBit(t *testing.T) {
	t.Parallel()
	require.Equal(t, SetBitVerdict{Previous: 0, Write: true}, SetBit(0, 1, 0, 0), "a new key grows")
	require.Equal(t, SetBitVerdict{Previous: 0, Write: true}, SetBit(8, 0, 0, 1), "an equal bit past the end grows")
	require.Equal(t, SetBitVerdict{Previous: 0, Write: false}, SetBit(7, 0, 0, 1), "an equal bit inside changes nothing")
	require.Equal(t, SetBitVerdict{Previous: 1, Write: false}, SetBit(3, 1, 1, 1))
	require.Equal(t, SetBitVerdict{Previous: 1, Write: true}, SetBit(3, 0, 1, 1))
}

func TestSetBitPlan(t *testing.T) {
	t.Parallel()
	for value := range int64(2) {
		p := SetBitPlanFor(value)
		for previous := range int64(2) {
			require.True(t, p.Write(previous, false), "past the end the string grows: value %d previous %d", value, previous)
			require.Equal(t, previous != value, p.Write(previous, true), "inside: value %d previous %d", value, previous)
		}
	}
	require.Equal(t, SetBitPlan(0b0111), SetBitPlanFor(1), "only an equal bit inside writes nothing")
	require.Equal(t, SetBitPlan(0b1101), SetBitPlanFor(0))
}
