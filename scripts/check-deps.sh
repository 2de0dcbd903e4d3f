#!/usr/bin/env bash
# Builds the README's Quick Start (a producer and a worker) in a fresh module outside the
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
# The program is the README's Quick Start, so that it keeps compiling.
awk '/^## Quick start/ { quick = 1 } quick && /^```go$/ { code = 1; next } code && /^```$/ { exit } code' README.md >"$dir/main.go"
if ! grep -q '^package main' "$dir/main.go"; then
	echo "check-deps: README.md's Quick Start has no Go program" >&2
	exit 1
fi
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
