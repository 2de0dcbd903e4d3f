package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// syncBuffer is a buffer that a command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestDashCommand(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	_, err := trafikey.Open(t.Context(), valkeytest.Client(t, s), "mail", nil)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := newRootCmd(envOf(map[string]string{"TRAFIKEY_ADDR": s.Addr()}))
	var stderr syncBuffer
	cmd.SetOut(io.Discard)
	cmd.SetErr(&stderr)
	cmd.SetArgs([]string{"dash", "--listen", "127.0.0.1:0", "--read-only", "--sample", "100ms"})
	done := make(chan int, 1)
	go func() { done <- exitCode(cmd.ExecuteContext(ctx)) }()

	var base string
	require.Eventually(t, func() bool {
		m := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(stderr.String())
		base = m
		return m != ""
	}, 10*time.Second, 10*time.Millisecond, "dash never said where it listens: %s", stderr.String())
	require.Contains(t, stderr.String(), "(read-only)")

	get := func(path string) (int, string) {
		res, err := http.Get(base + path)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b)
	}
	code, body := get("api/info")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"read_only":true`)
	require.Contains(t, body, `"where":"`+s.Addr()+`"`)
	require.Eventually(t, func() bool {
		_, body := get("metrics")
		return strings.Contains(body, `trafikey_queue_paused{queue="mail"} 0`)
	}, 10*time.Second, 50*time.Millisecond)

	cancel()
	select {
	case code := <-done:
		require.Equal(t, exitOK, code, "an interrupted dash stops cleanly")
	case <-time.After(10 * time.Second):
		t.Fatal("dash did not stop")
	}
}
