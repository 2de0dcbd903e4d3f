#!/usr/bin/env bash
# Fetches a server build of the test matrix from Debian's archive into
# .servers/NAME (git-ignored) and prints the path of its server wrapper, for
# TRAFIKEY_VALKEY_SERVER. The valkey-cli (or redis-cli) wrapper is beside it.
#
#   bash scripts/fetch-server.sh valkey-9.1   # Debian sid
#   bash scripts/fetch-server.sh valkey-8.1   # Debian trixie
#   bash scripts/fetch-server.sh redis-7.0    # Debian bookworm (Lua executor only)
#   bash scripts/fetch-server.sh valkey-8.0   # the valkey-server on PATH
#
# The newer builds need a newer libc than this machine's, so nothing is
# installed: the packages and the libraries they link are downloaded with a
# private sources list, lists and cache (nothing under /etc/apt changes),
# unpacked with dpkg-deb -x, and run through their own loader with
# --library-path. No Debian revision is pinned: the archive keeps only the
# current ones. A build whose version is not the one named is an error.
set -euo pipefail
cd "$(dirname "$0")/.."

name="${1:-}"
case "$name" in
valkey-8.0)
	# The default server: scripts/install-valkey.sh puts it on PATH.
	bash scripts/install-valkey.sh >&2
	command -v valkey-server
	exit 0
	;;
valkey-8.1) suite=trixie pkgs=(valkey-server valkey-tools) prog=valkey want='v=8.1.' ;;
valkey-9.1) suite=sid pkgs=(valkey-server valkey-tools) prog=valkey want='v=9.1.' ;;
redis-7.0) suite=bookworm pkgs=(redis-server redis-tools liblua5.1-0 lua-bitop lua-cjson) prog=redis want='v=7.0.' ;;
*)
	echo "usage: $0 valkey-8.0|valkey-8.1|valkey-9.1|redis-7.0" >&2
	exit 2
	;;
esac

top="$PWD/.servers"
dest="$top/$name"
server="$dest/bin/$prog-server"
if [ -x "$server" ] && "$server" --version 2>/dev/null | grep -q "$want"; then
	echo "$server"
	exit 0
fi

# Every shared library the servers link beyond the base system, from the
# same suite, so the unpacked loader never mixes in this machine's copies
# of libraries it needs newer versions of.
libs=(libc6 libssl3t64 libatomic1 libjemalloc2 liblzf1 libsystemd0 libcap2
	libgcrypt20 libgpg-error0 liblzma5 libzstd1 liblz4-1 libstdc++6 libgcc-s1)
if [ "$suite" = bookworm ]; then
	libs=("${libs[@]/libssl3t64/libssl3}")
fi

apt_dir="$top/apt/$suite"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" >"$apt_dir/sources.list"
apt_opts=(
	-o "Dir::Etc::sourcelist=$apt_dir/sources.list"
	-o Dir::Etc::sourceparts=/nonexistent
	-o "Dir::State::Lists=$apt_dir/lists"
	-o "Dir::Cache=$apt_dir/cache"
	-o Dir::State::status=/dev/null
	-o Debug::NoLocking=1
	-o APT::Sandbox::User=root
	-o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
	-o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
	-o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false
	-o Acquire::IndexTargets::deb::CNF::DefaultEnabled=false
)
if ! apt-get -q "${apt_opts[@]}" update >&2; then
	echo "fetch-server: cannot read Debian $suite's package lists for $name" >&2
	exit 1
fi

debs="$dest.debs"
rm -rf "$dest" "$debs"
mkdir -p "$debs" "$dest/bin"
if ! (cd "$debs" && apt-get -q "${apt_opts[@]}" download "${pkgs[@]}" "${libs[@]}" >&2); then
	echo "fetch-server: cannot download $name (${pkgs[*]}) from Debian $suite" >&2
	exit 1
fi
for deb in "$debs"/*.deb; do
	dpkg-deb -x "$deb" "$dest/root"
done
rm -rf "$debs"

# Debian before trixie keeps the loader and libc under /lib, after it under
# /usr/lib.
loader="$(find "$dest/root" -name ld-linux-x86-64.so.2 -path '*x86_64-linux-gnu*' | head -n1)"
libpath="$dest/root/usr/lib/x86_64-linux-gnu:$dest/root/lib/x86_64-linux-gnu"
for tool in server cli benchmark; do
	real="$dest/root/usr/bin/$prog-$tool"
	[ -x "$real" ] || continue
	# --argv0 keeps the program name the server sees as its own.
	cat >"$dest/bin/$prog-$tool" <<EOF
#!/bin/sh
exec "$loader" --library-path "$libpath" --argv0 "$real" "$real" "\$@"
EOF
	chmod 755 "$dest/bin/$prog-$tool"
done

if ! "$server" --version | grep -q "$want"; then
	echo "fetch-server: $name from Debian $suite is not the version named:" >&2
	"$server" --version >&2 || true
	exit 1
fi
"$server" --version >&2
echo "$server"
