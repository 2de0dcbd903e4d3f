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

// runDash runs `trafikey dash` with args and env until the test ends, and
// returns its stderr and the base address it says it serves on.
func runDash(t *testing.T, env map[string]string, args ...string) (*syncBuffer, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	cmd := newRootCmd(envOf(env))
	var stderr syncBuffer
	cmd.SetOut(io.Discard)
	cmd.SetErr(&stderr)
	cmd.SetArgs(append([]string{"dash"}, args...))
	done := make(chan int, 1)
	go func() { done <- exitCode(cmd.ExecuteContext(ctx)) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	var base string
	require.Eventually(t, func() bool {
		base = regexp.MustCompile(`http://[0-9.\[\]:]+/`).FindString(stderr.String())
		return base != ""
	}, 10*time.Second, 10*time.Millisecond, "dash never said where it listens: %s", stderr.String())
	return &stderr, base
}

// Beyond loopback, dash asks for a login, or an explicit --allow-no-auth
// that it warns about.
func TestDashLogin(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	env := map[string]string{"TRAFIKEY_ADDR": s.Addr()}

	cmd := newRootCmd(envOf(env))
	var stderr syncBuffer
	cmd.SetOut(io.Discard)
	cmd.SetErr(&stderr)
	cmd.SetArgs([]string{"dash", "--listen", "0.0.0.0:0"})
	require.Equal(t, exitUsage, exitCode(cmd.ExecuteContext(t.Context())))
	require.Contains(t, stderr.String(), "has no login")

	for _, bad := range [][]string{{"--token", "short"}, {"--basic-auth", "nopassword"}} {
		cmd := newRootCmd(envOf(env))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		cmd.SetArgs(append([]string{"dash", "--listen", "0.0.0.0:0"}, bad...))
		require.Equal(t, exitUsage, exitCode(cmd.ExecuteContext(t.Context())), bad)
	}

	out, _ := runDash(t, env, "--listen", "0.0.0.0:0", "--allow-no-auth", "--sample", "100ms")
	require.Contains(t, out.String(), "WARNING: trafikey dash listens on ")
	require.Contains(t, out.String(), "NO LOGIN")

	// A token from the environment: asked on every request.
	const token = "an-operator-token-of-32-characters"
	env["TRAFIKEY_DASH_TOKEN"] = token
	out, base := runDash(t, env, "--listen", "0.0.0.0:0", "--sample", "100ms")
	require.NotContains(t, out.String(), "WARNING")
	require.Contains(t, out.String(), "(login asked)")
	base = "http://127.0.0.1:" + base[strings.LastIndex(base, ":")+1:]
	res, err := http.Get(base + "api/info")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	req, err := http.NewRequest(http.MethodGet, base+"api/info", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
}

// dash starts while the server is down, and reads it once it is up.
func TestDashServerDown(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{Dir: t.TempDir()})
	require.NoError(t, s.Stop())
	_, base := runDash(t, map[string]string{"TRAFIKEY_ADDR": s.Addr()}, "--listen", "127.0.0.1:0", "--sample", "100ms", "--discover", "100ms")
	get := func(path string) (int, string) {
		res, err := http.Get(base + path)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b)
	}
	require.Eventually(t, func() bool {
		_, body := get("api/queues")
		return strings.Contains(body, `"unreachable":"connect to `+s.Addr())
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, s.Restart(t.Context()))
	_, err := trafikey.Open(t.Context(), valkeytest.Client(t, s), "mail", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, body := get("api/queues")
		return strings.Contains(body, `"name":"mail"`) && !strings.Contains(body, `"unreachable"`)
	}, 15*time.Second, 20*time.Millisecond)
}
