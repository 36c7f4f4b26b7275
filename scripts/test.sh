#!/bin/sh
# Installs dependencies, builds, and runs every test twice: a normal build,
# then an AddressSanitizer + UndefinedBehaviorSanitizer build. GPU tests skip
# with their reason on machines without a GPU. Then every fuzz target under
# libFuzzer for 30 s (tests/fuzz/fuzz.sh), and the service stages: the
# systemd units and the Debian package, and the Windows build under wine.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JOBS=$(nproc)

echo "== build (RelWithDebInfo) =="
"$ROOT/scripts/build.sh" "$ROOT/build" -DROCMD_WERROR=ON
echo "== tests =="
(cd "$ROOT/build" && ctest --output-on-failure -j"$JOBS")

echo "== build (ASan + UBSan) =="
"$ROOT/scripts/build.sh" "$ROOT/build-asan" -DROCMD_SANITIZE=ON -DROCMD_WERROR=ON -DROCMD_BUILD_BENCH=OFF
echo "== tests under ASan + UBSan =="
(cd "$ROOT/build-asan" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j"$JOBS")

echo "== fuzz: libFuzzer from the seed corpora, 30 s per target, two at a time =="
rc=0
sh "$ROOT/tests/fuzz/fuzz.sh" --time 30 "$ROOT/build-fuzz" || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || exit "$rc"

echo "== service: systemd units, exposure score, cmake --install, Debian package =="
"$ROOT/scripts/test-service.sh" "$ROOT/build"
echo "== Windows: mingw-w64 cross-build (deps cached outside the repo), tests under wine =="
"$ROOT/scripts/test-windows.sh"
