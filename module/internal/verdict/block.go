package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// ClaimBlockMS is CLAIM's optional fourth value, block_ms: how long a call
// that finds nothing may wait for a job. Absent is 0, answer at once. It
// reports false for a value outside 0..protocol.MaxBlockMS or not spelled as
// a canonical decimal (ErrBadArg "block").
func ClaimBlockMS(args [][]byte) (int64, bool) {
	if len(args) < 4 {
		return 0, true
	}
	return grammar.Decimal(args[3], 0, protocol.MaxBlockMS)
}

// BlockPlace is what the server says of the context a command runs in,
// as far as blocking it goes (the module API's context flags). host.Place
// converts to it: the same fields in the same order, kept apart so that
// verdicts need nothing of the host.
type BlockPlace struct {
	// Script: the command runs inside a script (EVAL, FCALL).
	Script bool
	// Multi: the command runs inside MULTI/EXEC.
	Multi bool
	// DenyBlocking: the caller may not be blocked (a script's client, a
	// module's RM_Call without the K flag, …).
	DenyBlocking bool
	// Subscribed: the caller is subscribed to a channel; a server may not
	// answer a blocked command of such a client (host.Place).
	Subscribed bool
}

// ClaimBlocks reports whether a CLAIM that found nothing to return (found
// is the number of jobs it would return) waits for a job: only when it
// asked to (blockMS > 0) and the context may block: not a script, not a
// transaction, not a caller that denies blocking or is subscribed to a
// channel. Otherwise it answers the empty array at once, as the Lua
// executor always does.
func ClaimBlocks(found int, blockMS int64, at BlockPlace) bool {
	return found == 0 && blockMS > 0 && !at.Script && !at.Multi && !at.DenyBlocking && !at.Subscribed
}
