package verdict

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSetBit(t *testing.T) {
	t.Parallel()
	require.Equal(t, SetBitVerdict{Previous: 0, Write: true}, SetBit(0, 1, 0, 0), "a new key grows")
	require.Equal(t, SetBitVerdict{Previous: 0, Write: true}, SetBit(8, 0, 0, 1), "an equal bit past the end grows")
	require.Equal(t, SetBitVerdict{Previous: 0, Write: false}, SetBit(7, 0, 0, 1), "an equal bit inside changes nothing")
	require.Equal(t, SetBitVerdict{Previous: 1, Write: false}, SetBit(3, 1, 1, 1))
	require.Equal(t, SetBitVerdict{Previous: 1, Write: true}, SetBit(3, 0, 1, 1))
}

func TestSetBitPlan(t *testing.T) {
	t.Parallel()
	for value := range int64(2) {
		p := SetBitPlanFor(value)
		for previous := range int64(2) {
			require.True(t, p.Write(previous, false), "past the end the string grows: value %d previous %d", value, previous)
			require.Equal(t, previous != value, p.Write(previous, true), "inside: value %d previous %d", value, previous)
		}
	}
	require.Equal(t, SetBitPlan(0b0111), SetBitPlanFor(1), "only an equal bit inside writes nothing")
	require.Equal(t, SetBitPlan(0b1101), SetBitPlanFor(0))
}
