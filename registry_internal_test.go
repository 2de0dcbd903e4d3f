package trafikey

import (
	"testing"
	"time"
)

// TestWaitBucket: WorkerInfo.Waited's bucket i counts waits under 4^i ms,
// the last one the rest.
func TestWaitBucket(t *testing.T) {
	for d, want := range map[time.Duration]int{
		0:                         0,
		999 * time.Microsecond:    0,
		time.Millisecond:          1,
		3 * time.Millisecond:      1,
		4 * time.Millisecond:      2,
		262143 * time.Millisecond: 9,
		262144 * time.Millisecond: 10,
		time.Hour:                 10,
		time.Duration(1<<63 - 1):  10,
	} {
		if got := waitBucket(d); got != want {
			t.Errorf("waitBucket(%v) = %d, want %d", d, got, want)
		}
	}
}
