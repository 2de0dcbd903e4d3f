package trafikey

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestThrottledLog(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	l := &throttledLog{l: slog.New(slog.NewTextHandler(&out, nil)), every: time.Hour}
	for range 100 {
		l.warn("claim failed", "err", "refused")
	}
	l.error("recover failed") // another kind has its own turn
	require.Equal(t, 2, strings.Count(out.String(), "\n"), out.String())

	// Once the period has passed, the next line says how many were left out.
	l.mu.Lock()
	l.last["claim failed"].at = time.Now().Add(-2 * time.Hour)
	l.mu.Unlock()
	l.warn("claim failed", "err", "refused")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	require.Contains(t, lines[2], "left_out=99")
	require.Contains(t, lines[2], "level=WARN")
	require.Contains(t, lines[1], "level=ERROR")
}
