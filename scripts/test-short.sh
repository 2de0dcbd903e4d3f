#!/usr/bin/env bash
# The fast tier: every test of every module with -short, for the edit-test
# loop. -short skips what takes minutes (the conformance suites, the
# outage, crash, cluster and soak tests, the module's large comparisons,
# the dashboard's browser test) and bounds the random differential and
# fuzz runs to seconds; each skip says which full run covers it.
# scripts/test.sh (CI) runs everything. Arguments go to go test:
#
#   bash scripts/test-short.sh
#   bash scripts/test-short.sh -count=1 -v
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/modules.sh

patterns=()
for m in "${modules[@]}"; do
	patterns+=("./$m/...")
done

go test -short "$@" "${patterns[@]}"
