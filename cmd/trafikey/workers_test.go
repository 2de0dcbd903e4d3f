package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// workers lists the workers running on a queue, with their jobs in hand,
// in text and JSON, and none once they stopped.
func TestWorkersCommand(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, s *valkeyserver.Server, c valkey.Client) {
		ctx := t.Context()
		q, err := trafikey.Open(ctx, c, "mail", nil)
		require.NoError(t, err)
		out, errOut, code := run(t, "workers", "mail", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Equal(t, "no worker runs on mail\n", out)

		release := make(chan struct{})
		started := make(chan struct{})
		w, err := trafikey.NewWorker(q, func(context.Context, *trafikey.Job) error {
			close(started)
			<-release
			return nil
		}, trafikey.WorkerOptions{Concurrency: 4})
		require.NoError(t, err)
		wctx, stop := context.WithCancel(ctx)
		ran := make(chan error, 1)
		go func() { ran <- w.Run(wctx) }()
		id, err := q.Add(ctx, []byte("x"), nil)
		require.NoError(t, err)
		<-started
		var listed []trafikey.WorkerInfo
		require.Eventually(t, func() bool {
			out, errOut, code = run(t, "workers", "mail", "--json", "--addr", s.Addr())
			require.Equal(t, exitOK, code, errOut)
			require.NoError(t, json.Unmarshal([]byte(out), &listed))
			return len(listed) == 1 && listed[0].Running == 1
		}, 15e9, 20e6, "the worker registers with its job in hand")
		require.Equal(t, os.Getpid(), listed[0].PID)
		require.Equal(t, []string{id}, listed[0].Jobs)
		require.Equal(t, 4, listed[0].Concurrency)

		out, errOut, code = run(t, "workers", "mail", "--addr", s.Addr())
		require.Equal(t, exitOK, code, errOut)
		require.Regexp(t, `(?m)^worker\s+queues\s+running\s+processed\s+failed\s+up\s+beat\s+jobs$`, out)
		require.Regexp(t, `(?m)^`+listed[0].ID+`\s+mail\s+1/4\s+0\s+0\s+\S+\s+\S+ ago\s+`+id+`$`, out)

		close(release)
		stop()
		require.NoError(t, <-ran)
		out, _, code = run(t, "workers", "mail", "--json", "--addr", s.Addr())
		require.Equal(t, exitOK, code)
		require.JSONEq(t, `[]`, out)
	})
}
