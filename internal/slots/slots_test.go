package slots

import "testing"

// TestOf holds Of to CRC16/XMODEM: its check value (of "123456789", 0x31C3)
// and the slots the cluster specification gives.
func TestOf(t *testing.T) {
	for tag, want := range map[string]uint16{"123456789": 0x31C3, "": 0, "foo": 12182, "bar": 5061} {
		if got := Of(tag); got != want {
			t.Errorf("Of(%q) = %d, want %d", tag, got, want)
		}
	}
}
