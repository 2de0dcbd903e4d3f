package trafikey

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHashSlot: the slots of the cluster specification's examples, and its
// hash tag rules (TestClusterMultiQueueWorker checks queue keys against a
// server's CLUSTER KEYSLOT).
func TestHashSlot(t *testing.T) {
	t.Parallel()
	require.Equal(t, uint16(12182), hashSlot("foo"))
	require.Equal(t, uint16(5061), hashSlot("bar"))
	require.Equal(t, uint16(0x31c3), hashSlot("123456789")) // CRC16/XMODEM's check value
	require.Equal(t, hashSlot("user1000"), hashSlot("{user1000}.following"))
	require.Equal(t, hashSlot("bar"), hashSlot("foo{bar}{zap}"), "the first tag")
	require.Equal(t, hashSlot("{bar"), hashSlot("foo{{bar}}zap"), "from the first {")
	require.NotEqual(t, hashSlot("bar"), hashSlot("foo{}{bar}"), "an empty first tag: the whole key, no later tag")
	require.Equal(t, hashSlot("q"), hashSlot("emq:{q}:signal"))
}
