package verdict

import "github.com/trafikey/trafikey/internal/protocol"

// The values ADD leaves out of a row (docs/PROTOCOL.md, "Job row fields"),
// which a present row's absent field reads as.
var (
	defaultState    = []byte(protocol.DefaultState)
	defaultMax      = []byte(protocol.DefaultMax)
	defaultPriority = []byte(protocol.DefaultPriority)
	defaultBackoff  = []byte(protocol.DefaultBackoff)
)

// orDefault is f, or def when f is unset.
func orDefault(f Field, def []byte) Field {
	if f.Set {
		return f
	}
	return Field{Bytes: def, Set: true}
}

// RowState is a row's state as read with its att: the state when set, else
// pending when att is set (a present row leaves out state pending), else
// unset (no row).
func RowState(state, att Field) Field {
	if state.Set || !att.Set {
		return state
	}
	return Field{Bytes: defaultState, Set: true}
}

// RowMax is a present row's max as read: unset reads as protocol.DefaultMax.
func RowMax(f Field) Field { return orDefault(f, defaultMax) }

// RowPriority is a present row's prio as read: unset reads as
// protocol.DefaultPriority.
func RowPriority(f Field) Field { return orDefault(f, defaultPriority) }

// RowBackoff is a present row's bo as read: unset reads as
// protocol.DefaultBackoff.
func RowBackoff(f Field) Field { return orDefault(f, defaultBackoff) }
