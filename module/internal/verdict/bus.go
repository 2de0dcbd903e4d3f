package verdict

import (
	"math"
	"strconv"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// The bus verbs' verdicts (docs/PROTOCOL.md, "Bus verbs"). Each reads in one
// batch after its values: the fence, then its stream or counter; the verdict
// takes the replies in that order.

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

// StreamID is one APPEND id, split (grammar.StreamID).
type StreamID struct{ Ms, Seq []byte }

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

// Append decides EMQ.APPEND over ids in call order: each must be after the
// stream's top and after the id before it, else EMQSTATE append id not
// after the stream top and nothing is written.
func Append(ids []StreamID, s *StreamSeen) error {
	tms, tseq, err := stream(s)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !grammar.IDAfter(id.Ms, id.Seq, tms, tseq) {
			return refusal(protocol.ErrNotAfterTop(protocol.Append.Name))
		}
		tms, tseq = id.Ms, id.Seq
	}
	return nil
}

// Publish decides EMQ.PUBLISH: a stream with entries must start with the
// pair brand emq (else EMQKIND publish wrong brand), and must have an id
// left for XADD * (else EMQSTATE publish id not after the stream top).
func Publish(s *StreamSeen) error {
	if _, _, err := stream(s); err != nil {
		return err
	}
	if s.Exists.Val == 0 {
		return nil
	}
	if s.HasFirst && (!s.FirstField.Is(protocol.EventBrandField) || !s.FirstValue.Is(protocol.EventBrand)) {
		return refusal(protocol.ErrKind(protocol.Publish.Name))
	}
	if string(s.Top) == grammar.LastStreamID {
		return refusal(protocol.ErrNotAfterTop(protocol.Publish.Name))
	}
	return nil
}

// FailuresSeen is what FAILURES.INCR reads, in one batch: the fence, GET
// <counter> (not a string: WRONGTYPE), PTTL <counter>.
type FailuresSeen struct {
	Version Reply[Field]
	Counter Reply[Field]
	PTTL    Reply[int64]
}

// FailuresVerdict is what FAILURES.INCR writes: INCR <counter>, whose reply
// must be Count, then PEXPIRE <counter> <ttl> when Expire (the counter had
// no TTL).
type FailuresVerdict struct {
	Count  int64
	Expire bool
}

// FailuresIncr decides EMQ.FAILURES.INCR: the fence, the counter's type, INCR
// predicted with the server's rules (INCR's own texts), then its TTL.
func FailuresIncr(s *FailuresSeen) (FailuresVerdict, error) {
	if err := Fence(s.Version); err != nil {
		return FailuresVerdict{}, err
	}
	if s.Counter.Err != nil {
		return FailuresVerdict{}, s.Counter.Err
	}
	n, err := grammar.PredictIncr(s.Counter.Val.Bytes, s.Counter.Val.Set)
	if err != nil {
		return FailuresVerdict{}, err
	}
	if s.PTTL.Err != nil {
		return FailuresVerdict{}, s.PTTL.Err
	}
	return FailuresVerdict{Count: n, Expire: s.PTTL.Val < 0}, nil
}

// SetBitVerdict is what TRA.SETBIT does: reply Previous, and write (SETBIT,
// replicated verbatim) only when Write.
type SetBitVerdict struct {
	Previous int64
	Write    bool
}

// SetBit decides TRA.SETBIT from the previous bit and the string's length
// (GETBIT <key> <offset> and STRLEN <key>): the bit already holds value and
// the string needs no growth (offset within its length) means nothing to
// write.
func SetBit(offset, value, previous, strlen int64) SetBitVerdict {
	return SetBitVerdict{Previous: previous, Write: SetBitPlanFor(value).Write(previous, offset/8 < strlen)}
}

// SetBitPlan is TRA.SETBIT's write decision for every outcome its one host
// call can see, decided before the call: the call reads the previous bit
// and whether the offset's byte is inside the string, and writes exactly
// when the plan says so for what it saw. Bit 2·previous+inside is set for
// a write.
type SetBitPlan uint8

// SetBitPlanFor is the plan of TRA.SETBIT with this value: write when the
// bit differs from value, or when the string must grow to hold it.
func SetBitPlanFor(value int64) SetBitPlan {
	var p SetBitPlan
	for previous := range int64(2) {
		for _, inside := range []bool{false, true} {
			if previous != value || !inside {
				p |= planBit(previous, inside)
			}
		}
	}
	return p
}

// Write reports whether the plan writes for a previous bit and a byte
// inside the string or past its end.
func (p SetBitPlan) Write(previous int64, inside bool) bool { return p&planBit(previous, inside) != 0 }

func planBit(previous int64, inside bool) SetBitPlan {
	i := 2 * previous
	if inside {
		i++
	}
	return 1 << i
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
