package groupcommit

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGroupCommit drives a Queue with a send that blocks until
// the test lets it go: the first items leave alone, one per sender, and what
// queues behind them leaves together; the senders exit when the queue is
// empty.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	sent := make(chan []int)
	proceed := make(chan struct{})
	b := New(2, func(queue []int) ([]int, []int) {
		return slices.Clone(queue[:min(3, len(queue))]), queue[min(3, len(queue)):]
	}, func(batch []int) {
		sent <- batch
		<-proceed
	})
	b.Push(1)
	require.Equal(t, []int{1}, <-sent)
	b.Push(2)
	require.Equal(t, []int{2}, <-sent)
	// Both senders are busy: these wait, and leave in batches of at most 3.
	for i := 3; i <= 7; i++ {
		b.Push(i)
	}
	require.False(t, b.Idle())
	proceed <- struct{}{}
	require.Equal(t, []int{3, 4, 5}, <-sent)
	proceed <- struct{}{}
	require.Equal(t, []int{6, 7}, <-sent)
	proceed <- struct{}{}
	proceed <- struct{}{}
	b.Wait()
	require.True(t, b.Idle())
}
