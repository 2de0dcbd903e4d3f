package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

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
