package host

import (
	"errors"
	"fmt"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

// refusal stands for a registry type of another package (grammar.Refusal).
type refusal string

func (r refusal) Error() string { return string(r) }

func TestReplyText(t *testing.T) {
	for _, tc := range []struct {
		err  error
		text string
		ok   bool
	}{
		{ErrWritePaused, protocol.ErrWritePaused, true},
		{Error("EMQSTALE complete token mismatch"), "EMQSTALE complete token mismatch", true},
		{fmt.Errorf("claim: %w", ErrNoPerm), protocol.ErrNoPerm, true},
		{refusal("ERR EMQ add bad key layout"), "ERR EMQ add bad key layout", true},
		{fmt.Errorf("wrapped: %w", refusal("EMQWIRE wire not installed")), "EMQWIRE wire not installed", true},
		{errors.New("some bug"), "", false},
	} {
		text, ok := replyText(tc.err)
		if text != tc.text || ok != tc.ok {
			t.Errorf("replyText(%v) = %q, %v; want %q, %v", tc.err, text, ok, tc.text, tc.ok)
		}
	}
	var he Error
	if !errors.As(fmt.Errorf("x: %w", ErrHostReply), &he) || string(he) != protocol.ErrHostReply {
		t.Errorf("errors.As: %q", he)
	}
}
