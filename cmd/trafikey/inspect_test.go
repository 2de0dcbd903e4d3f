package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// inspect cuts a large payload to 4 KiB in text and JSON, says how much is
// left out, and prints or writes it whole when asked.
func TestInspectLargePayload(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, s *valkeyserver.Server, c valkey.Client) {
		ctx := t.Context()
		q, err := trafikey.Open(ctx, c, "mail", nil)
		require.NoError(t, err)
		// 100 KiB of text with a two-byte character across the 4 KiB mark
		payload := []byte(strings.Repeat("a", 4095) + "é" + strings.Repeat("b", 100<<10-4097))
		id, err := q.Add(ctx, payload, nil)
		require.NoError(t, err)
		small, err := q.Add(ctx, []byte("hello"), nil)
		require.NoError(t, err)

		out, errOut, code := run(t, "inspect", "mail", id, "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Less(t, len(out), 6<<10, "bounded")
		require.Contains(t, out, " 102400 bytes: "+strings.Repeat("a", 4095)+" … (98305 bytes more; --full prints it all, --payload-out FILE writes it)\n",
			"cut before the character that crosses the mark")

		out, errOut, code = run(t, "inspect", "mail", id, "--full", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Contains(t, out, "102400 bytes: "+string(payload)+"\n")

		file := filepath.Join(t.TempDir(), "payload.bin")
		out, errOut, code = run(t, "inspect", "mail", id, "--payload-out", file, "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Regexp(t, `payload\s+102400 bytes, written to `+file+`\n`, out)
		got, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Equal(t, payload, got)
		out, errOut, code = run(t, "inspect", "mail", id, "--payload-out", "-", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.True(t, bytes.Equal(payload, []byte(out)), "the raw bytes alone")

		out, errOut, code = run(t, "inspect", "mail", id, "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Less(t, len(out), 32<<10, "bounded")
		v := decode[map[string]any](t, out)
		require.Equal(t, true, v["payload_truncated"])
		require.EqualValues(t, 102400, v["payload_size"])
		require.Equal(t, base64.StdEncoding.EncodeToString(payload[:4096]), v["payload"])
		out, errOut, code = run(t, "inspect", "mail", id, "--json", "--full", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		v = decode[map[string]any](t, out)
		require.Nil(t, v["payload_truncated"])
		require.Equal(t, base64.StdEncoding.EncodeToString(payload), v["payload"])

		out, errOut, code = run(t, "inspect", "mail", small, "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		v = decode[map[string]any](t, out)
		require.Nil(t, v["payload_truncated"], "a small payload is whole")
		require.Equal(t, "aGVsbG8=", v["payload"])

		_, _, code = run(t, "inspect", "mail", id, "--json", "--payload-out", "-", "--addr", s.Addr())
		require.Equal(t, exitUsage, code)
	})
}
