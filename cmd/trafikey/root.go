package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
)

// defaultAddr is the server the inspection commands talk to by default.
const defaultAddr = "127.0.0.1:6379"

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "trafikey",
		Short:         "trafikey: a job queue inside Valkey",
		Long:          "trafikey is a job queue that lives inside Valkey. This tool runs a demo on a local server and inspects queues.",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(newDemoCmd(), newStatsCmd(), newInspectCmd())
	return root
}

// openReadOnly connects to addr and opens queue name without writing to it.
func openReadOnly(ctx context.Context, addr, name string) (*trafikey.Queue, func(), error) {
	client, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	q, err := trafikey.Open(ctx, client, name, trafikey.WithoutInstall())
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return q, client.Close, nil
}
