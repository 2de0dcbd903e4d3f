package trafikey

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBatchCalls: AddBatch's calls hold at most MaxBatch jobs and 256 MiB of
// payloads, in order, a job as large as the bound alone.
func TestBatchCalls(t *testing.T) {
	t.Parallel()
	sized := func(sizes ...int) []JobSpec {
		jobs := make([]JobSpec, len(sizes))
		for i, n := range sizes {
			jobs[i].Payload = make([]byte, n)
		}
		return jobs
	}
	calls := func(jobs []JobSpec) [][2]int {
		var out [][2]int
		for start, end := range batchCalls(jobs) {
			out = append(out, [2]int{start, end})
		}
		return out
	}
	require.Empty(t, calls(nil))
	require.Equal(t, [][2]int{{0, 3}}, calls(sized(1, 2, 3)))
	many := make([]JobSpec, 2*MaxBatch+1)
	require.Equal(t, [][2]int{{0, MaxBatch}, {MaxBatch, 2 * MaxBatch}, {2 * MaxBatch, 2*MaxBatch + 1}}, calls(many))
	const half = maxCallPayload / 2
	require.Equal(t, [][2]int{{0, 2}, {2, 3}}, calls(sized(half, half, 1)), "up to the bound in one call")
	require.Equal(t, [][2]int{{0, 1}, {1, 2}, {2, 4}}, calls(sized(half+1, maxPayload, half, 0)))
	require.Equal(t, [][2]int{{0, 1}, {1, 2}}, calls(sized(maxPayload, 1)), "a job at the bound alone")
}
