#!/usr/bin/env bash
# Runs the full benchmark: trafikey (native and Lua executors), asynq, BullMQ
# and the floor of primitive commands, on one valkey-server, 3 interleaved
# rounds of every workload. Writes docs/BENCHMARKS.md and docs/bench.svg.
#
#   scripts/bench.sh                  # the full run
#   scripts/bench.sh -smoke           # seconds: checks that every system processes every job
#   scripts/bench.sh -json out.json   # also keep every run's raw numbers
#
# Extra arguments go to `go run ./bench` (see `go run ./bench -h`). Run it on
# an otherwise idle machine: the server is pinned to CPU 0 and the load
# generators to CPU 1, and anything else running there skews the numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valkey-server >/dev/null || { echo "bench.sh: valkey-server not on PATH" >&2; exit 1; }
command -v node >/dev/null || { echo "bench.sh: node not on PATH (BullMQ runs in Node)" >&2; exit 1; }
exec go run ./bench "$@"
