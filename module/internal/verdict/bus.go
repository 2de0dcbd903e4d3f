package verdict

import (
	"math"
	"strconv"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// What the bus verbs' verdicts share (docs/PROTOCOL.md, "Bus verbs"), and the
// job events' stream check. Each verb reads in one batch after its values:
// the fence, then its stream or counter; the verdict takes the replies in
// that order. A verb's own verdict is in the file named for it.

// StreamSeen is what APPEND and PUBLISH read of their stream: the fence, then
// EXISTS <stream> and, for a stream that exists, XINFO STREAM <stream> (not a
// stream: WRONGTYPE), reduced to its last generated id and its first entry's
// first field/value pair.
type StreamSeen struct {
	Version Reply[Field]
	Exists  Reply[int64]
	// Info is XINFO STREAM's error, when it failed; Top and the first entry
	// are its reply.
	Info Reply[struct{}]
	// Top is the last generated id, as XINFO spells it.
	Top []byte
	// HasFirst: the stream has an entry; FirstField and FirstValue are its
	// first pair (unset when it has none).
	HasFirst               bool
	FirstField, FirstValue Field
}

// stream is the shared part of the stream verdicts: the fence, then the
// stream's type, then its top ("0-0" for an absent stream).
func stream(s *StreamSeen) (tms, tseq []byte, err error) {
	if err := Fence(s.Version); err != nil {
		return nil, nil, err
	}
	if s.Exists.Err != nil {
		return nil, nil, s.Exists.Err
	}
	if s.Exists.Val == 0 {
		return []byte("0"), []byte("0"), nil
	}
	if s.Info.Err != nil {
		return nil, nil, s.Info.Err
	}
	tms, tseq, ok := grammar.SplitTop(s.Top)
	if !ok {
		return nil, nil, refusal(protocol.ErrHostReply)
	}
	return tms, tseq, nil
}

// JobEvents decides the events stream of a call that publishes its job
// events in n ≥ 2 entries (docs/PROTOCOL.md, "Job events"), over the
// stream reads without a fence: not a stream is WRONGTYPE; its top must
// leave n ids, else the server's own XADD text for an exhausted stream, as
// one of the call's XADDs would reply (a call of one entry lets its XADD
// decide). The brand is not read: the stream is the queue's own key.
func JobEvents(s *StreamSeen, n int) error {
	if s.Exists.Err != nil {
		return s.Exists.Err
	}
	if s.Exists.Val == 0 {
		return nil
	}
	if s.Info.Err != nil {
		return s.Info.Err
	}
	tms, tseq, ok := grammar.SplitTop(s.Top)
	if !ok {
		return refusal(protocol.ErrHostReply)
	}
	if string(tms) == maxStreamPart {
		seq, err := strconv.ParseUint(string(tseq), 10, 64)
		if err == nil && seq > math.MaxUint64-uint64(n) {
			return refusal(protocol.ErrStreamExhausted)
		}
	}
	return nil
}

// maxStreamPart is the largest ms (or seq) of a stream id, 2^64-1.
const maxStreamPart = "18446744073709551615"
