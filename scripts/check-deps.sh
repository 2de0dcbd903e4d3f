#!/usr/bin/env bash
# Builds a producer-and-worker program in a fresh module outside the
# repository that requires only github.com/trafikey/trafikey (replaced by
# this checkout, as nothing is published), and fails when its module graph
# holds a dependency of the CLI (its dashboard and browser tests too), the
# benchmark, the tests' property checker or the Prometheus adapter: a
# library user inherits valkey-go and nothing of those.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cat >"$dir/go.mod" <<MOD
module example.com/consumer

go 1.25.0

require github.com/trafikey/trafikey v0.0.0

replace github.com/trafikey/trafikey => $root
MOD
cat >"$dir/main.go" <<'GO'
// A producer and a worker on one queue.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	client, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	q, err := trafikey.Open(ctx, client, "emails", nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := q.Add(ctx, []byte("hello"), &trafikey.JobOptions{Priority: 10}); err != nil {
		log.Fatal(err)
	}
	w, err := trafikey.NewWorker(q, func(ctx context.Context, job *trafikey.Job) error {
		return nil
	}, trafikey.WorkerOptions{Concurrency: 10})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
GO
(cd "$dir" && GOWORK=off GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 && GOWORK=off go build -o /dev/null .)
graph="$(cd "$dir" && GOWORK=off go list -m all)"
bad=0
for dep in hibiken/asynq redis/go-redis spf13/cobra schollz/progressbar prometheus/client_golang chromedp/chromedp pgregory.net/rapid google.golang.org/protobuf; do
	if grep -qF "$dep" <<<"$graph"; then
		echo "check-deps: a library user's module graph holds $dep" >&2
		bad=1
	fi
done
if [ "$bad" -ne 0 ]; then
	echo "$graph" >&2
	exit 1
fi
echo "check-deps: a library user's module graph: $(tr '\n' ' ' <<<"$graph")"
