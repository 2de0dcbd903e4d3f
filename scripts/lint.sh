#!/usr/bin/env bash
# staticcheck at a pinned version, installed through the Go module proxy
# into build/bin when it is missing. Arguments are package patterns
# (default: every module's packages).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/modules.sh

version=v0.8.2 # staticcheck 2026.2.2
bin="$PWD/build/bin/staticcheck"
# `staticcheck -version` prints e.g. "staticcheck 2026.2.2 (0.8.2)".
if ! "$bin" -version 2>/dev/null | grep -qF "(${version#v})"; then
	GOBIN="$PWD/build/bin" GOWORK=off GOFLAGS=-mod=mod go install "honnef.co/go/tools/cmd/staticcheck@$version"
fi

if [ "$#" -eq 0 ]; then
	set --
	for m in "${modules[@]}"; do
		set -- "$@" "./$m/..."
	done
fi
"$bin" "$@"
