#!/usr/bin/env bash
# Static checks and the whole test suite, over every module of the
# repository: go vet, gofmt, staticcheck, go mod tidy, the library's own
# dependency graph, then every test on real valkey-server processes (the
# default build, Valkey 8.0), then the server matrix (scripts/test-matrix.sh:
# Valkey 8.1 and 9.1, Redis 7.0). It first installs what the tests need on a
# fresh machine: Valkey 8 and Chromium, for the dashboard's browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/modules.sh

bash scripts/install-valkey.sh
bash scripts/install-chromium.sh

patterns=()
for m in "${modules[@]}"; do
	patterns+=("./$m/...")
done

go vet "${patterns[@]}"

unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
	echo "gofmt: these files need formatting (run gofmt -w):" >&2
	echo "$unformatted" >&2
	exit 1
fi

bash scripts/lint.sh "${patterns[@]}"

for m in "${modules[@]}"; do
	# Each module on its own, as a user or go install sees it.
	if ! (cd "$m" && GOWORK=off go mod tidy -diff); then
		echo "go mod tidy: $m/go.mod or go.sum is not tidy (run: cd $m && GOWORK=off go mod tidy)" >&2
		exit 1
	fi
done

bash scripts/check-deps.sh

go test -count=1 -timeout 20m "${patterns[@]}"

bash scripts/test-matrix.sh
