#!/usr/bin/env bash
# The server matrix: the suites that depend on the server build, run on each
# build other than the default one (scripts/test.sh runs everything on that).
# Each build is fetched by scripts/fetch-server.sh; one that cannot be
# fetched fails the run with a message, never a silent skip.
#
#   bash scripts/test-matrix.sh                # every build below
#   bash scripts/test-matrix.sh valkey-9.1     # one of them
#
# Valkey 8.1 and 9.1: the conformance suite (both executors), the module's
# tests, the differential test and the fuzz seeds (verify), the harness's,
# and the cluster and resharding tests. Redis 7.0: the Lua
# executor's conformance (no module loads there).
set -euo pipefail
cd "$(dirname "$0")/.."

builds=("$@")
if [ ${#builds[@]} -eq 0 ]; then
	builds=(valkey-8.1 valkey-9.1 redis-7.0)
fi

for build in "${builds[@]}"; do
	if ! server="$(bash scripts/fetch-server.sh "$build")"; then
		echo "test-matrix: cannot fetch $build (see above); the matrix needs every build" >&2
		exit 1
	fi
	echo "test-matrix: $build: $("$server" --version)"
	export TRAFIKEY_VALKEY_SERVER="$server"
	case "$build" in
	redis-*)
		go test -count=1 -timeout 10m -run '^TestLua' ./internal/conformance
		;;
	*)
		# The cluster and resharding tests mostly wait (for failovers,
		# migrations), so they run beside the suites rather than after them,
		# their output kept until they end. verify comes first: its
		# time-bounded differential run is the longest package.
		out="$(mktemp)"
		go test -count=1 -timeout 10m -run '^(TestCluster|TestReshard|TestPartition)' . >"$out" 2>&1 &
		cluster=$!
		status=0
		TRAFIKEY_DIFF_BUDGET=20s go test -count=1 -timeout 15m ./verify/... ./internal/conformance ./module/... ./internal/valkeyserver || status=$?
		wait "$cluster" || status=$?
		cat "$out"
		rm -f "$out"
		if [ "$status" -ne 0 ]; then
			exit "$status"
		fi
		;;
	esac
	unset TRAFIKEY_VALKEY_SERVER
done
