#!/usr/bin/env bash
# Installs Valkey 8 (valkey-server, valkey-cli) from Debian bookworm-backports
# when valkey-server is missing or not 8.x. Never starts the system service:
# tests and tools start their own servers.
set -euo pipefail

have_valkey8() {
	command -v valkey-server >/dev/null 2>&1 &&
		valkey-server --version 2>/dev/null | grep -Eq '(^| )v=8\.'
}

if ! have_valkey8; then
	sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		sudo=(sudo)
	fi

	list=/etc/apt/sources.list.d/bookworm-backports.list
	line='deb http://deb.debian.org/debian bookworm-backports main'
	if ! grep -qxF "$line" "$list" 2>/dev/null; then
		echo "$line" | "${sudo[@]}" tee -a "$list" >/dev/null
	fi

	# Keep the package's maintainer scripts from starting the service: a
	# policy-rc.d that exits 101 makes invoke-rc.d refuse every action. An
	# existing policy is left as it is.
	policy=/usr/sbin/policy-rc.d
	own_policy=0
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
		"${sudo[@]}" chmod 0755 "$policy"
		own_policy=1
	fi
	cleanup() {
		if [ "$own_policy" -eq 1 ]; then
			"${sudo[@]}" rm -f "$policy"
		fi
	}
	trap cleanup EXIT

	"${sudo[@]}" apt-get update
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -t bookworm-backports valkey-server valkey-tools

	if ! have_valkey8; then
		echo "install-valkey: valkey-server 8.x still not available" >&2
		valkey-server --version >&2 || true
		exit 1
	fi
fi

valkey-server --version
