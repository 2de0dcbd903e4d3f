package grammar

// MaxRowInt is the largest value a numeric row field (att, max) is read as:
// the verbs write them as canonical decimals of at most
// protocol.MaxDecimalSize digits.
const MaxRowInt = 999_999_999_999_999

// RowInt reads a numeric row field as docs/PROTOCOL.md ("Rows as read")
// states: a canonical non-negative decimal within [0, hi] is its value;
// anything else, or an absent field, reads as 0. Both executors read a
// planted or damaged field alike, so neither refuses on it.
func RowInt(b []byte, present bool, hi int64) int64 {
	if !present {
		return 0
	}
	v, ok := Decimal(b, 0, hi)
	if !ok {
		return 0
	}
	return v
}
