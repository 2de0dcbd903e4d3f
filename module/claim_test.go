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
}
