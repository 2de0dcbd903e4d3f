package verdict

// SetBitVerdict is what TRA.SETBIT does: reply Previous, and write (SETBIT,
// replicated verbatim) only when Write.
type SetBitVerdict struct {
	Previous int64
	Write    bool
}

// SetBit decides TRA.SETBIT from the previous bit and the string's length
// (GETBIT <key> <offset> and STRLEN <key>): the bit already holds value and
// the string needs no growth (offset within its length) means nothing to
// write.
func SetBit(offset, value, previous, strlen int64) SetBitVerdict {
	return SetBitVerdict{Previous: previous, Write: SetBitPlanFor(value).Write(previous, offset/8 < strlen)}
}

// SetBitPlan is TRA.SETBIT's write decision for every outcome its one host
// call can see, decided before the call: the call reads the previous bit
// and whether the offset's byte is inside the string, and writes exactly
// when the plan says so for what it saw. Bit 2·previous+inside is set for
// a write.
type SetBitPlan uint8

// SetBitPlanFor is the plan of TRA.SETBIT with this value: write when the
// bit differs from value, or when the string must grow to hold it.
func SetBitPlanFor(value int64) SetBitPlan {
	var p SetBitPlan
	for previous := range int64(2) {
		for _, inside := range []bool{false, true} {
			if previous != value || !inside {
				p |= planBit(previous, inside)
			}
		}
	}
	return p
}

// Write reports whether the plan writes for a previous bit and a byte
// inside the string or past its end.
func (p SetBitPlan) Write(previous int64, inside bool) bool { return p&planBit(previous, inside) != 0 }

func planBit(previous int64, inside bool) SetBitPlan {
	i := 2 * previous
	if inside {
		i++
	}
	return 1 << i
}
