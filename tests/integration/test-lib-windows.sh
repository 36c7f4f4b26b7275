#!/bin/sh
# Deploy on a Windows-shaped SDK tree, through the real rocmd on Linux
# (--root with --sdk-layout windows): C:\Program Files\AMD\ROCm\6.2\bin holding
# amdhip64_6.dll, rocblas.dll and rocblas\library from Debian's real library
# files, and a Windows package whose rocblas.dll is a real PE built here with
# mingw-w64 (importing amdhip64_6.dll, with a VERSIONINFO). Checks: the target
# is the Windows layout's (bin\rocblas.dll + bin\rocblas\library), deploy
# replaces both, the originals are also kept under the names people know
# (rocblas_backup.dll, rocblas_backup\), rollback to the originals restores
# both byte for byte, and the smoke test says it is not run for a Windows
# target on Linux.
#
# Usage: test-lib-windows.sh ROCMD ROCMCTL
set -u
ROCMD=$1
CTL=$2
TREES=${ROCMD_SDK_TREES:-/var/cache/rocmd-test-debs/trees}
L=$TREES/trixie/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library
if [ ! -f "$L/TensileLibrary.dat" ]; then
	echo "skip: no real SDK trees in $TREES (tests/sdk/make-trees.sh)"
	exit 77
fi
for t in x86_64-w64-mingw32-gcc x86_64-w64-mingw32-windres x86_64-w64-mingw32-dlltool; do
	command -v $t >/dev/null 2>&1 || { echo "skip: $t missing (mingw-w64)"; exit 77; }
done
DIR=$(mktemp -d /tmp/rocmd-test-libwin-XXXXXX)
chmod 755 "$DIR"
SOCK=$DIR/rocmd.sock
W=$DIR/root
B="$W/c/Program Files/AMD/ROCm/6.2/bin"
passed=0
failed=0

cleanup() {
	[ -S "$SOCK" ] && "$CTL" --socket "$SOCK" shutdown >/dev/null 2>&1
	sleep 0.3
	rm -rf "$DIR"
}
trap cleanup EXIT

ok() { passed=$((passed + 1)); printf "ok - %s\n" "$1"; }
bad() { failed=$((failed + 1)); printf "not ok - %s\n" "$1"; }
check() { # check NAME EXPECTED-EXIT COMMAND...
	name=$1 want=$2
	shift 2
	"$@" >"$DIR/out" 2>"$DIR/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok "$name"; else
		bad "$name (exit $got, wanted $want)"
		sed 's/^/#   /' "$DIR/out" "$DIR/err"
	fi
}
contains() { # contains NAME FILE TEXT
	if grep -q -- "$3" "$2"; then ok "$1"; else
		bad "$1 ('$3' not in $2)"
		sed 's/^/#   /' "$2"
	fi
}
same() { # same NAME A B
	if diff -r --no-dereference "$2" "$3" >"$DIR/diff" 2>&1; then ok "$1"; else
		bad "$1"
		head -20 "$DIR/diff" | sed 's/^/#   /'
	fi
}
ctl() { "$CTL" --socket "$SOCK" "$@"; }
wait_for() { # wait_for NAME SECONDS COMMAND...
	name=$1 secs=$2
	shift 2
	i=0
	while [ $i -lt $((secs * 10)) ]; do
		if "$@" >/dev/null 2>&1; then ok "$name"; return 0; fi
		sleep 0.1
		i=$((i + 1))
	done
	bad "$name (not within ${secs}s)"
	return 1
}
has_event() { ctl events --all --kind "$1" | grep -q -- "$2"; }

# Two real PE DLLs: the SDK's rocblas.dll and the package's, different versions.
M=$DIR/mingw
mkdir -p "$M"
printf 'LIBRARY amdhip64_6.dll\nEXPORTS\nhipMalloc\n' >"$M/hip.def"
printf '__declspec(dllimport) int hipMalloc(void **p, unsigned long long n);\n__declspec(dllexport) int rocblas_create_handle(void **h) { return hipMalloc(h, VALUE); }\n' >"$M/rb.c"
dll() { # dll OUT FILEVERSION VALUE
	printf '1 VERSIONINFO\nFILEVERSION %s\nPRODUCTVERSION 6,2,4,0\nBEGIN\nEND\n' "$2" >"$M/rb.rc"
	x86_64-w64-mingw32-windres "$M/rb.rc" -O coff -o "$M/rb.res" &&
		x86_64-w64-mingw32-gcc -DVALUE="$3" -shared -o "$1" "$M/rb.c" "$M/rb.res" -L"$M" -lamdhip64_6
}
if ! x86_64-w64-mingw32-dlltool -d "$M/hip.def" -l "$M/libamdhip64_6.a" ||
	! dll "$M/sdk-rocblas.dll" "4,2,0,0" 64 || ! dll "$M/pkg-rocblas.dll" "4,2,0,7" 128; then
	echo "skip: mingw-w64 could not build a DLL"
	exit 77
fi

mkdir -p "$B/rocblas/library" "$W/registry"
: >"$B/amdhip64_6.dll"
: >"$B/hiprtc0602.dll"
cp "$M/sdk-rocblas.dll" "$B/rocblas.dll"
printf 'HIP_VERSION_MAJOR=6\nHIP_VERSION_MINOR=2\nHIP_VERSION_PATCH=41134\n' >"$B/.hipVersion"
cp "$L/TensileLibrary.dat" "$L/TensileLibrary_gfx803.co" "$L/Kernels.so-000-gfx803.hsaco" "$B/rocblas/library/"
cp -a "$B" "$DIR/bin-original"

P=$DIR/pkg/rocm.gfx1030.V5.0.for.hip.sdk.6.2.4
mkdir -p "$P/library"
cp "$M/pkg-rocblas.dll" "$P/rocblas.dll"
cp "$L/TensileLibrary.dat" "$L/Kernels.so-000-gfx1030.hsaco" "$P/library/"

printf '{"sdk": {"debounce_ms": 300}, "deploy": {"sync": "off"}}\n' >"$DIR/rocmd.json"
HIP_PATH='C:\Program Files\AMD\ROCm\6.2\' HIP_PATH_62='C:\Program Files\AMD\ROCm\6.2\' \
	"$ROCMD" --state-dir "$DIR/state" --socket "$SOCK" --config "$DIR/rocmd.json" \
	--root "$W" --sdk-layout windows || { echo "not ok - rocmd did not start"; exit 1; }
wait_for "the Windows SDK is found" 60 has_event sdk.library_inspected 'ROCm\\6.2'
check "import the Windows package" 0 ctl --json pkg import "$P"
contains "it is a Windows package" "$DIR/out" '"platform":[[:space:]]*"windows"'

check "lib status" 0 ctl --json lib status
contains "the target is the Windows layout's library" "$DIR/out" 'ROCm\\\\6.2\\\\bin\\\\rocblas\\\\library'
contains "and its rocblas.dll" "$DIR/out" 'ROCm\\\\6.2\\\\bin\\\\rocblas.dll'

check "deploy to the Windows tree" 0 ctl lib deploy sdk-1 --package 1
contains "the smoke test says why it did not run" "$DIR/out" "not run for a Windows target on Linux"
same "bin\\rocblas\\library = the package's library" "$P/library" "$B/rocblas/library"
if cmp -s "$P/rocblas.dll" "$B/rocblas.dll"; then ok "bin\\rocblas.dll = the package's"; else
	bad "bin\\rocblas.dll = the package's"; fi
if cmp -s "$DIR/bin-original/rocblas.dll" "$B/rocblas_backup.dll"; then
	ok "the original DLL is also kept as rocblas_backup.dll"
else bad "the original DLL is also kept as rocblas_backup.dll"; ls -la "$B" | sed 's/^/#   /'; fi
if [ -d "$B/rocblas_backup" ]; then ok "and the original folder as rocblas_backup"; else
	bad "and the original folder as rocblas_backup"; fi
check "verify" 0 ctl lib verify sdk-1
contains "binary and library pair" "$DIR/out" "same package: yes"

check "rollback to the originals" 0 ctl lib rollback sdk-1 --to original
same "bin\\rocblas\\library is the original" "$DIR/bin-original/rocblas/library" "$B/rocblas/library"
if cmp -s "$DIR/bin-original/rocblas.dll" "$B/rocblas.dll"; then ok "bin\\rocblas.dll is the original"; else
	bad "bin\\rocblas.dll is the original"; fi

echo "# $passed passed, $failed failed"
[ "$failed" -eq 0 ]
