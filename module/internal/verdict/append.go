package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// StreamID is one APPEND id, split (grammar.StreamID).
type StreamID struct{ Ms, Seq []byte }

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
