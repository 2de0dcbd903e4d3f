#!/usr/bin/env bash
# The trafikey demo: installs Valkey 8 when it is missing, builds the native
# module into build/trafikey.so when its source is here, then runs
# `trafikey demo`, which starts its own valkey-server on a free loopback port
# (with the module when it built, else on the Lua executor), runs jobs
# through it and prints throughput and latency. Arguments go to the demo,
# e.g. `bash scripts/demo.sh --jobs 20000 --executor lua`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-valkey.sh

if [ -d module ]; then
	mkdir -p build
	# A module left from an earlier build must not stand in for one that
	# no longer builds.
	rm -f build/trafikey.so build/trafikey.h
	if CGO_ENABLED=1 go build -buildmode=c-shared -o build/trafikey.so ./module; then
		# valkey-server refuses to load a module without the execute bit.
		chmod 755 build/trafikey.so
	else
		echo "demo.sh: the module did not build; the demo runs on the Lua executor" >&2
	fi
fi

# The demo finds build/trafikey.so by itself and falls back to Lua when the
# module cannot serve every verb.
exec go run ./cmd/trafikey demo "$@"
