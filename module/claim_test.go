package main

import (
	"slices"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

// CLAIM reads and replies the extended rows' fields in the protocol's order.
func TestClaimExtendedFields(t *testing.T) {
	t.Parallel()
	if !slices.Equal(claimExtended[:], protocol.ClaimExtendedFields) {
		t.Fatalf("claimExtended %q, protocol %q", claimExtended, protocol.ClaimExtendedFields)
	}
	if !slices.Equal(claimWait[:], protocol.ClaimWaitFields) {
		t.Fatalf("claimWait %q, protocol %q", claimWait, protocol.ClaimWaitFields)
	}
	// id data attempt, the extended fields and lane
	if n := 3 + len(claimExtended) + 1; n != protocol.ClaimExtendedReply {
		t.Fatalf("an extended entry of %d, protocol %d", n, protocol.ClaimExtendedReply)
	}
}
