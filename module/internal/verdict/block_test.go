package verdict

import (
	"strconv"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
)

func TestClaimBlockMS(t *testing.T) {
	t.Parallel()
	base := [][]byte{[]byte("600000"), []byte("1"), []byte("0")}
	if ms, ok := ClaimBlockMS(base); !ok || ms != 0 {
		t.Fatalf("absent: %d %v, want 0 true", ms, ok)
	}
	good := map[string]int64{"0": 0, "1": 1, "5000": 5000, strconv.Itoa(protocol.MaxBlockMS): protocol.MaxBlockMS}
	for s, want := range good {
		ms, ok := ClaimBlockMS(append(base[:3:3], []byte(s)))
		if !ok || ms != want {
			t.Errorf("%q: %d %v, want %d true", s, ms, ok, want)
		}
	}
	for _, s := range []string{"", "-1", "01", "1.5", "x", " 1", strconv.Itoa(protocol.MaxBlockMS + 1), "9999999999999999"} {
		if _, ok := ClaimBlockMS(append(base[:3:3], []byte(s))); ok {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestClaimBlocks(t *testing.T) {
	t.Parallel()
	free := BlockPlace{}
	cases := []struct {
		found int
		ms    int64
		at    BlockPlace
		want  bool
	}{
		{0, 100, free, true},
		{1, 100, free, false}, // jobs to return: answer them
		{0, 0, free, false},   // asked not to block
		{0, 100, BlockPlace{Script: true}, false},
		{0, 100, BlockPlace{Multi: true}, false},
		{0, 100, BlockPlace{DenyBlocking: true}, false},
		{0, 100, BlockPlace{Subscribed: true}, false},
		{3, 0, BlockPlace{Multi: true}, false},
	}
	for _, c := range cases {
		if got := ClaimBlocks(c.found, c.ms, c.at); got != c.want {
			t.Errorf("ClaimBlocks(%d, %d, %+v) = %v, want %v", c.found, c.ms, c.at, got, c.want)
		}
	}
}
