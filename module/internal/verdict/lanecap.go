package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
)

// LaneCapChange is what LANECAP writes to the cap field, from the stored
// field and the new cap (0 clears): HSET cap:<l> when cap > 0 and the stored
// value differs, HDEL cap:<l> when cap = 0 and the field is present.
func LaneCapChange(stored Field, capTo int64) (set, del bool) {
	if capTo > 0 {
		return !stored.Is(protocol.FormatInt(capTo)), false
	}
	return false, stored.Set
}
