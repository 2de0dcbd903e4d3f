#!/usr/bin/env bash
# Installs Chromium (Debian's chromium package) for the dashboard's browser
# tests when no chromium binary is on PATH. Idempotent: an installed
# chromium is left as it is.
set -euo pipefail

have_chromium() {
	command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1
}

if ! have_chromium; then
	sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		sudo=(sudo)
	fi
	"${sudo[@]}" apt-get update
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y --no-install-recommends chromium fonts-dejavu-core
	if ! have_chromium; then
		echo "install-chromium: chromium still not on PATH" >&2
		exit 1
	fi
fi

{ chromium --version 2>/dev/null || chromium-browser --version; } | head -n1
