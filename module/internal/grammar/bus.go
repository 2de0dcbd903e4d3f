package grammar

import (
	"bytes"
	"math"

	"github.com/trafikey/trafikey/internal/protocol"
)

// The bus verbs' and the TRA family's pure checks (docs/PROTOCOL.md, "Bus
// verbs", "The TRA family").

// NamedKey reports whether key is base, prefix and a bus name
// (protocol.ValidBusName). The key starts with the base, so its hash tag is
// the queue's.
func NamedKey(base []byte, prefix string, key []byte) bool {
	if len(key) <= len(base)+len(prefix) || !bytes.HasPrefix(key, base) || string(key[len(base):len(base)+len(prefix)]) != prefix {
		return false
	}
	return protocol.ValidBusName(key[len(base)+len(prefix):])
}

// EntriesArity judges APPEND's ARGV: a count n of entries (1..MaxCount),
// then n entries of an id, a count of field/value pairs (1..MaxEntryFields;
// "bad fields") and the pairs. Walking the entries in order, a missing
// argument is the arity refusal, and so is anything left after the last. It
// returns the index in args of each entry's id.
func EntriesArity(v *protocol.Verb, args [][]byte, starts []int) ([]int, error) {
	if len(args) == 0 {
		return nil, Refusal(protocol.ErrArity(v.Name))
	}
	n, ok := Decimal(args[0], 1, protocol.MaxCount)
	if !ok {
		return nil, Refusal(protocol.ErrBadArg(v.Name, "count"))
	}
	starts = starts[:0]
	at := 1
	for range n {
		if at+1 >= len(args) {
			return nil, Refusal(protocol.ErrArity(v.Name))
		}
		nf, ok := Decimal(args[at+1], 1, protocol.MaxEntryFields)
		if !ok {
			return nil, Refusal(protocol.ErrBadArg(v.Name, "fields"))
		}
		starts = append(starts, at)
		at += 2 + 2*int(nf)
		if at > len(args) {
			return nil, Refusal(protocol.ErrArity(v.Name))
		}
	}
	if at != len(args) {
		return nil, Refusal(protocol.ErrArity(v.Name))
	}
	return starts, nil
}

// PublishArity judges PUBLISH's ARGV: an event, an id, then at most
// MaxEntryFields field/value pairs.
func PublishArity(v *protocol.Verb, args [][]byte) error {
	if len(args) < 2 || len(args)%2 != 0 || len(args) > 2+2*protocol.MaxEntryFields {
		return Refusal(protocol.ErrArity(v.Name))
	}
	return nil
}

// StreamID splits an APPEND id: ms-seq, each half a canonical decimal of at
// most 15 digits, not 0-0.
func StreamID(b []byte) (ms, seq []byte, ok bool) {
	ms, seq, found := bytes.Cut(b, []byte("-"))
	if !found {
		return nil, nil, false
	}
	if _, ok := Decimal(ms, 0, protocol.MaxStreamPart); !ok {
		return nil, nil, false
	}
	if _, ok := Decimal(seq, 0, protocol.MaxStreamPart); !ok {
		return nil, nil, false
	}
	if string(ms) == "0" && string(seq) == "0" {
		return nil, nil, false
	}
	return ms, seq, true
}

// SplitTop splits a stream's last generated id, as XINFO STREAM spells it
// (two decimals of up to 20 digits), or reports false.
func SplitTop(b []byte) (ms, seq []byte, ok bool) {
	ms, seq, found := bytes.Cut(b, []byte("-"))
	if !found || !digits(ms) || !digits(seq) {
		return nil, nil, false
	}
	return ms, seq, true
}

func digits(b []byte) bool {
	if len(b) == 0 || len(b) > 20 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// decimalLess compares two canonical decimals of any length, exactly.
func decimalLess(a, b []byte) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return bytes.Compare(a, b) < 0
}

// IDAfter reports whether stream id ms-seq is after tms-tseq.
func IDAfter(ms, seq, tms, tseq []byte) bool {
	if !bytes.Equal(ms, tms) {
		return decimalLess(tms, ms)
	}
	return decimalLess(tseq, seq)
}

// LastStreamID is the stream id after which there is none: XADD * refuses
// on a stream whose top it is.
const LastStreamID = "18446744073709551615-18446744073709551615"

// PredictIncr predicts INCR's reply on a string holding stored (or absent):
// the new value, or INCR's own refusal text.
func PredictIncr(stored []byte, present bool) (int64, error) {
	var cur int64
	if present {
		v, ok := String2LL(stored)
		if !ok {
			return 0, Refusal(protocol.ErrNotInteger)
		}
		cur = v
	}
	if cur == math.MaxInt64 {
		return 0, Refusal(protocol.ErrOverflow)
	}
	return cur + 1, nil
}

// BitOffset parses a TRA offset: a canonical decimal in 0..MaxBitOffset.
func BitOffset(b []byte) (int64, error) {
	v, ok := String2LL(b)
	if !ok || v < 0 || v > protocol.MaxBitOffset {
		return 0, Refusal(protocol.ErrTRAOffset)
	}
	return v, nil
}

// Bit parses a TRA bit value: exactly 0 or 1.
func Bit(b []byte) (int64, error) {
	if len(b) != 1 || (b[0] != '0' && b[0] != '1') {
		return 0, Refusal(protocol.ErrTRABit)
	}
	return int64(b[0] - '0'), nil
}
