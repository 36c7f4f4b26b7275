#!/bin/sh
# Installs the Debian packages rocmd needs to build, test and benchmark.
# Idempotent: packages already present are skipped by apt-get itself.
# mingw-w64: the tests build Windows DLLs (rocblas.dll with a version
# resource) as well as the Windows build itself.
set -eu
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PKGS="build-essential cmake pkg-config ninja-build git
libuv1-dev libsqlite3-dev libcjson-dev libarchive-dev libssl-dev libmsgpack-dev
libcmocka-dev libsystemd-dev sqlite3 libcurl4-openssl-dev
redis-server redis-tools util-linux procps clang
p7zip-full zip pci.ids chromium zlib1g-dev
clang-19 lld-19 libclang-rt-19-dev
zsh fish
mingw-w64"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
# bench/ipc.sh: strace counts the idle daemon's system calls (no periodic wake-ups).
if ! dpkg-query -W -f='${Status}' strace 2>/dev/null | grep -q "install ok installed"; then
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends strace
fi
