package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
)

// TrimBounds is the retention meta fields TRIM reads (HMGET meta keep_done
// keep_done_max keep_dead keep_dead_max), read as numbers: the dead bound
// defaults to protocol.DefaultKeepDead when absent.
type TrimBounds struct {
	KeepDone, KeepDoneMax, KeepDead, KeepDeadMax int64
}

// ReadTrimBounds reads meta's retention fields.
func ReadTrimBounds(f [4]Field) TrimBounds {
	b := TrimBounds{KeepDone: rowInt(f[0]), KeepDoneMax: rowInt(f[1]), KeepDead: rowInt(f[2]), KeepDeadMax: rowInt(f[3])}
	if !f[3].Set {
		b.KeepDeadMax = protocol.DefaultKeepDead
	}
	return b
}
