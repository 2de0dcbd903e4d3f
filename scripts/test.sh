#!/usr/bin/env bash
# Static checks and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

go vet ./...

unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
	echo "gofmt: these files need formatting (run gofmt -w):" >&2
	echo "$unformatted" >&2
	exit 1
fi

go test -count=1 -timeout 20m ./...
