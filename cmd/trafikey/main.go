// Command trafikey runs the trafikey demo and inspects queues.
//
//	trafikey demo                  start a local valkey-server and run jobs through it
//	trafikey stats <queue>         a queue's counts and lifetime counters
//	trafikey inspect <queue> <id>  one job
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		stop()
		os.Exit(1)
	}
}
