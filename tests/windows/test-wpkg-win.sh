#!/bin/sh
# The package store on Windows, under wine: the real rocmd.exe (console mode)
# and rocmctl.exe over \\.\pipe\rocmd import archives built here on the Linux
# side, as the Linux tests build them (tests/fixtures/mkarchive.c, libarchive's
# writers), from Debian trixie's real rocBLAS 5.5.1 library files
# (tests/fixtures/fetch-files.sh; stand-ins when they cannot be had):
#   a 7z (LZMA2, solid), a zip under a top folder named with spaces and
#   parentheses, a 7z made by 7-Zip itself when it is installed, a Windows
#   package with a real PE rocblas.dll (mingw-w64: imports amdhip64_6.dll,
#   has a VERSIONINFO), and an unpacked folder;
# then pkg list / show / match / verify / rm, the store on disk (objects
# read-only, deduplicated), and hostile archives, each refused with the
# entry named and nothing left behind: "..\" escapes, absolute "C:\" names,
# a drive-relative "C:name", an alternate data stream "x:stream", device
# names (CON, NUL.txt), a trailing dot, an 8.3 short name, a name differing
# only in case, a symlink leading out; an unpacked folder holding a link to
# outside it (a symlink, which wine shows as a reparse point; a junction when
# mklink /J makes one: wine 8's does not, and says so); the drop folder, with
# a file name that is not ASCII (names go through the wide-character API as
# UTF-8); and the default store at %ProgramData%\rocmd\store.
#
# Usage: test-wpkg-win.sh BUILD-DIR     (a mingw-w64 build folder)
# Called by scripts/test-windows.sh with its WINEPREFIX; alone, it makes its own.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=$1
. "$(dirname "$0")/../lib/harness.sh"
. "$(dirname "$0")/../lib/harness-wine.sh"
win_prefix wpkg rocmd-pkg
STATE=$T/state
mkdir -p "$T/a"

objects() { find "$STATE/store/objects" -type f | wc -l; }
staging_empty() { [ -z "$(ls -A "$STATE/store/staging" 2>/dev/null)" ]; }

# ---- the archives, built on the Linux side ----
MK=$T/mk
if ! cc -O1 -DMKARCHIVE_MAIN -o "$MK" "$ROOT/tests/fixtures/mkarchive.c" \
	$(pkg-config --cflags --libs libarchive) 2>"$ERR"; then
	bad "build the archive maker (tests/fixtures/mkarchive.c against libarchive)"
	echo "# windows package store: $passed passed, $failed failed"
	exit 1
fi
REAL=$(sh "$ROOT/tests/fixtures/fetch-files.sh" 2>/dev/null || true)
LIB=$REAL/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library
if [ -n "$REAL" ] && [ -f "$LIB/TensileLibrary_gfx803.co" ]; then
	A=$LIB/TensileLibrary_gfx803.co B=$LIB/Kernels.so-000-gfx803.hsaco C1=$LIB/Kernels.so-000-gfx1030.hsaco
	echo "# real rocBLAS 5.5.1 files from $LIB"
else
	echo "# real rocBLAS files missing: stand-ins"
	head -c 300000 /dev/urandom >"$T/a/A"
	head -c 200000 /dev/urandom >"$T/a/B"
	head -c 100000 /dev/urandom >"$T/a/C"
	A=$T/a/A B=$T/a/B C1=$T/a/C
fi
GOOD=rocm.gfx803.AMD.V3.for.hip.sdk.5.7.7z
TOP="gfx803 gfx1030 (for HIP SDK 5.7).zip"
# A lazy index for each arch: rocBLAS serves no arch without an index (its
# bytes are not read here, its name is).
printf 'index' >"$T/a/index"
IDX=$T/a/index
"$MK" 7z "$T/a/$GOOD" "f:library/TensileLibrary_gfx803.co=$A" \
	"f:library/Kernels.so-000-gfx803.hsaco=$B" "f:library/TensileLibrary_lazy_gfx803.dat=$IDX" \
	>"$ERR" 2>&1 || bad "build $GOOD"
"$MK" zip "$T/a/$TOP" "f:rocBLAS gfx803 (HIP 5.7)/library/TensileLibrary_gfx803.co=$A" \
	"f:rocBLAS gfx803 (HIP 5.7)/library/Kernels.so-000-gfx1030.hsaco=$C1" \
	"f:rocBLAS gfx803 (HIP 5.7)/library/TensileLibrary_lazy_gfx803.dat=$IDX" \
	"f:rocBLAS gfx803 (HIP 5.7)/library/TensileLibrary_lazy_gfx1030.dat=$IDX" >"$ERR" 2>&1 ||
	bad "build $TOP"
# A Windows package: a real PE rocblas.dll importing amdhip64_6.dll, with a VERSIONINFO.
W=$T/a/w
WINPKG=rocm.gfx1103.AMD.780M.phoenix.V5.0.for.hip.sdk.6.2.4.7z
mkdir -p "$W"
head -c 4096 /dev/urandom >"$W/index"
if make_rocblas_dll "$W" "$W/rocblas.dll" "4,2,0,7" &&
	"$MK" 7z "$T/a/$WINPKG" "f:rocBLAS (gfx1103)/rocblas.dll=$W/rocblas.dll" \
		"f:rocBLAS (gfx1103)/library/TensileLibrary_lazy_gfx1103.dat=$W/index" \
		"f:rocBLAS (gfx1103)/library/TensileLibrary_gfx1103.co=$W/index" >"$ERR" 2>&1; then
	:
else
	bad "build the Windows package (mingw-w64 rocblas.dll)"
fi
# For the drop folder: other content, so it is a package of its own.
"$MK" zip "$T/a/drop.zip" "f:library/Kernels.so-000-gfx1030.hsaco=$C1" \
	"z:library/TensileLibrary_lazy_gfx1030.dat=64" >"$ERR" 2>&1 || bad "build drop.zip"
# hostile NAME SPEC...: a zip holding a good file and SPEC.
hostile() {
	f=$1
	shift
	"$MK" zip "$T/a/$f" "f:library/TensileLibrary_gfx803.co=$A" "$@" >"$ERR" 2>&1 ||
		bad "build $f"
}
hostile escape.zip 'z:..\..\..\evil.dll=10'
hostile absolute.zip 'z:C:\Windows\evil.dll=10'
hostile drive-relative.zip 'z:C:evil.dll=10'
hostile stream.zip 'z:library\TensileLibrary_gfx803.co:evil=10'
hostile device-con.zip 'z:library\CON=10'
hostile device-nul.zip 'z:library/NUL.txt=10'
hostile trailing-dot.zip 'z:library/Kernels.co.=10'
hostile short-name.zip 'z:library/TENSIL~1.CO=10'
hostile case.zip 'z:library/tensilelibrary_GFX803.co=10'
"$MK" tar "$T/a/link-out.tar" "f:library/TensileLibrary_gfx803.co=$A" \
	'l:library/x=../../../Windows/win.ini' >"$ERR" 2>&1 || bad "build link-out.tar"

# ---- the daemon ----
cp "$BUILD/daemon/rocmd.exe" "$BUILD/client/rocmctl.exe" "$T/"
cat >"$T/pkg.json" <<'JSON'
{
	"state_dir": "C:\\rocmd-pkg\\state",
	"log": { "level": "info", "file": "C:\\rocmd-pkg\\rocmd.log" }
}
JSON
start=$(date +%s)
wine 'C:\rocmd-pkg\rocmd.exe' --foreground --config 'C:\rocmd-pkg\pkg.json' >"$T/console.out" 2>&1 &
DAEMON=$!
if wait_until 60 ctl status && [ -d "$STATE/store/objects" ]; then
	ok "rocmd.exe runs with its store at C:\\rocmd-pkg\\state\\store"
else
	bad "rocmd.exe starts with a store"
fi

check "pkg import of a 7z (LZMA2, solid) of real rocBLAS files" 0 ctl pkg import "C:\\rocmd-pkg\\a\\$GOOD"
contains "the import names the package" "$OUT" "Imported package #1"
contains "arch gfx803 from the index and the code object" "$OUT" "gfx803"
contains "SDK 5.7 from the name" "$OUT" "5.7 (generation 5.7, from name)"
check "the same 7z again" 0 ctl --json pkg import "C:\\rocmd-pkg\\a\\$GOOD"
contains "is the same package" "$OUT" '"already_stored":[[:space:]]*true'
check "pkg import of a zip under a top folder with spaces and parentheses" 0 ctl \
	pkg import "C:\\rocmd-pkg\\a\\$TOP"
contains "its top folder is stripped" "$OUT" "rocBLAS gfx803 (HIP 5.7)"
if command -v 7z >/dev/null 2>&1; then
	mkdir -p "$T/a/7zip/library"
	cp "$A" "$T/a/7zip/library/TensileLibrary_gfx803.co"
	cp "$C1" "$T/a/7zip/library/Kernels.so-000-gfx1030.hsaco"
	cp "$IDX" "$T/a/7zip/library/TensileLibrary_lazy_gfx803.dat"
	cp "$IDX" "$T/a/7zip/library/TensileLibrary_lazy_gfx1030.dat"
	(cd "$T/a/7zip" && 7z a -bd -bso0 -m0=lzma2 -ms=on ../rocm.gfx1030.V2.0.for.hip.sdk.5.7.7z library)
	check "pkg import of a 7z made by 7-Zip itself" 0 ctl pkg import 'C:\rocmd-pkg\a\rocm.gfx1030.V2.0.for.hip.sdk.5.7.7z'
	contains "the same files as the zip: the same package, by content" "$OUT" "Already stored: package #2"
else
	echo "# 7z not installed: the 7-Zip-made archive is skipped"
fi
check "pkg import of the Windows package" 0 ctl --json pkg import "C:\\rocmd-pkg\\a\\$WINPKG"
contains "its DLL's version resource" "$OUT" '"file_version":[[:space:]]*"4.2.0.7"'
contains "its DLL's HIP runtime" "$OUT" '"hip_runtime":[[:space:]]*"amdhip64_6.dll"'
contains "a Windows package" "$OUT" '"platform":[[:space:]]*"windows"'
WID=$(sed -n 's/^[[:space:]]*"id":[[:space:]]*\([0-9]*\).*/\1/p' "$OUT" | head -n 1)
# An unpacked folder, read through the wide-character listing.
U="$T/a/unpacked V5.0 for hip sdk 6.2.4"
mkdir -p "$U/library"
cp "$C1" "$U/library/Kernels.so-000-gfx1030.hsaco"
printf 'index' >"$U/library/TensileLibrary_lazy_gfx1030.dat"
check "pkg import of an unpacked folder" 0 ctl pkg import 'C:\rocmd-pkg\a\unpacked V5.0 for hip sdk 6.2.4'
contains "the folder's SDK from its name" "$OUT" "6.2.4"

# A folder holding a link to outside it: refused, whatever form the link
# takes (a junction made by mklink /J; a symlink made on the Unix side, which
# wine 8 shows as a reparse point).
J="$T/a/linked V5.0 for hip sdk 6.2.4"
n0=$(objects)
mkdir -p "$J/library" "$T/a/secret"
cp "$C1" "$J/library/Kernels.so-000-gfx1030.hsaco"
printf 'secret' >"$T/a/secret/TensileLibrary_lazy_gfx1030.dat"
if wine cmd /c mklink /J 'C:\rocmd-pkg\a\linked V5.0 for hip sdk 6.2.4\library\more' \
	'C:\rocmd-pkg\a\secret' >/dev/null 2>&1 && [ -e "$J/library/more" ]; then
	check "a folder with a junction leading out is refused" 1 ctl pkg import 'C:\rocmd-pkg\a\linked V5.0 for hip sdk 6.2.4'
	contains "the junction is named" "$ERR" "library/more"
	rm -rf "$J/library/more"
else
	echo "# mklink /J did not make a junction here: that case is skipped"
fi
ln -s ../../secret "$J/library/unix-link"
check "a folder with a symlink leading out is refused" 1 ctl pkg import 'C:\rocmd-pkg\a\linked V5.0 for hip sdk 6.2.4'
contains "the link is named" "$ERR" "library/unix-link"
if [ "$(objects)" -eq "$n0" ] && staging_empty; then
	ok "the refused folders left nothing behind"
else
	bad "the refused folders left something behind"
fi

# A path outside the ANSI code page on rocmctl.exe's command line (Ł is not in
# code page 1252): rocmctl.exe takes its arguments from GetCommandLineW.
mkdir -p "$T/a/Łódź"
cp "$T/a/$GOOD" "$T/a/Łódź/$GOOD"
LC_ALL=C.UTF-8 wine "$CTL" pkg import "C:\\rocmd-pkg\\a\\Łódź\\$GOOD" >"$OUT.raw" 2>"$ERR.raw"
rc=$?
tr -d '\r' <"$OUT.raw" >"$OUT"
tr -d '\r' <"$ERR.raw" >"$ERR"
if [ $rc -eq 0 ] && grep -q "Already stored: package #1" "$OUT"; then
	ok "pkg import of C:\\rocmd-pkg\\a\\Łódź\\... (a non-ANSI path on the command line)"
else
	bad "pkg import of a non-ANSI path (exit $rc)"
fi

check "pkg list" 0 ctl pkg list
tr -d '\r' <"$OUT" | sed 's/^/#   /'
contains "the list shows the zip's archs" "$OUT" "gfx1030,gfx803"
contains "the list shows the deduplication" "$OUT" "deduplication saves"
check "pkg show --files" 0 ctl pkg show 1 --files
contains "show lists the files" "$OUT" "library/TensileLibrary_gfx803.co"
check "pkg match for SDK 5.7.1 and gfx803" 0 ctl pkg match --sdk 5.7.1 --arch gfx803
contains "match names the rule" "$OUT" "5.7=V3,V2.0"
check "pkg match for SDK 6.2.4 and gfx1103 on Windows" 0 ctl pkg match --sdk 6.2.4 --arch gfx1103
contains "match picks the Windows package" "$OUT" "package #$WID"
check "pkg match never crosses generations" 1 ctl pkg match --sdk 6.2.4 --arch gfx803
contains "match says why" "$OUT" "not 6.2"

# The store on disk: one file per distinct content, read-only.
n=$(objects)
obj=$(find "$STATE/store/objects" -type f | head -n 1)
# (wine keeps the read-only attribute as the file's missing write bits; -w is
# no test when the tests run as root.)
if [ "$n" -ge 5 ] && [ -n "$obj" ] && [ -z "$(find "$STATE/store/objects" -type f -perm /222)" ]; then
	ok "the store holds $n objects, all read-only (the read-only attribute: $(stat -c %A "$obj"))"
else
	bad "the objects on disk ($n, $obj)"
fi
staging_empty && ok "nothing left in the staging folder" || bad "staging left behind"

# Hostile archives: refused, the entry named, nothing written anywhere.
for h in escape.zip:"leads outside" absolute.zip:"drive letter" drive-relative.zip:"drive letter" \
	stream.zip:"stream" device-con.zip:"device name" device-nul.zip:"device name" \
	trailing-dot.zip:"dot or a space" short-name.zip:"8.3 short name" case.zip:"only in case" \
	link-out.tar:"outside"; do
	f=${h%%:*} words=${h#*:}
	check "hostile $f refused" 1 ctl pkg import "C:\\rocmd-pkg\\a\\$f"
	contains "$f: the refusal says why ($words)" "$ERR" "$words"
	if [ "$(objects)" -eq "$n" ] && staging_empty; then ok "$f left nothing behind"; else
		bad "$f left something behind"
	fi
done
if [ ! -e "$C/evil.dll" ] && [ ! -e "$C/Windows/evil.dll" ] && [ ! -e "$T/evil.dll" ] &&
	[ -z "$(find "$C" -name 'evil*' 2>/dev/null)" ]; then
	ok "no evil.dll anywhere in the prefix"
else
	bad "a hostile entry was written"
fi
check "refusals are events" 0 ctl events --kind pkg.refused
contains "refusal event" "$OUT" "pkg.refused"

# The drop folder, with a file name that is not ASCII.
cp "$T/a/drop.zip" "$STATE/drop/Jürgen gfx1030 V2.0 for hip sdk 5.7.zip"
cp "$T/a/escape.zip" "$STATE/drop/escape.zip"
if wait_until 60 test -f "$STATE/drop/imported/Jürgen gfx1030 V2.0 for hip sdk 5.7.zip"; then
	ok "the drop folder imports an archive named Jürgen..."
else
	ls -lR "$STATE/drop" >"$OUT" 2>&1
	bad "the drop folder imports an archive"
fi
if wait_until 60 test -f "$STATE/drop/refused/escape.zip.why" &&
	grep -q "leads outside" "$STATE/drop/refused/escape.zip.why"; then
	ok "the drop folder refuses a hostile one, with the reason in escape.zip.why"
else
	bad "the drop folder refuses a hostile one"
fi
check "the dropped package is listed" 0 ctl pkg list
contains "listed under its UTF-8 name" "$OUT" "Jürgen gfx1030"

check "pkg verify" 0 ctl pkg verify
contains "verify counts no damage" "$OUT" "0 missing or corrupt"
chmod u+w "$obj"
printf 'X' | dd of="$obj" bs=1 seek=10 conv=notrunc 2>/dev/null
check "pkg verify finds a damaged object" 1 ctl pkg verify
contains "verify names it" "$OUT" "corrupt"

# An object cut short is replaced by importing a package that holds it again
# (the object stays read-only meanwhile, as the store leaves it; Windows
# refuses to replace a read-only file, wine 8 does not, so this passes under
# wine with or without the store clearing the attribute first).
h=$(sha256sum "$A" | cut -c1-64)
o="$STATE/store/objects/$(printf %s "$h" | cut -c1-2)/$(printf %s "$h" | cut -c3-)"
chmod u+w "$o" && truncate -s 100 "$o" && chmod a-w "$o"
check "importing a package again over an object cut short" 0 ctl pkg import "C:\\rocmd-pkg\\a\\$GOOD"
if [ "$(sha256sum <"$o" | cut -c1-64)" = "$h" ]; then ok "the object is whole again"; else
	bad "the object cut short was not replaced"
fi

before=$(objects)
check "pkg rm of the Windows package" 0 ctl pkg rm "$WID"
after=$(objects)
if [ "$after" -lt "$before" ]; then ok "its objects were collected ($before -> $after)"; else
	bad "collection after pkg rm ($before -> $after)"
fi
check "it is gone" 1 ctl pkg show "$WID"

ctl shutdown >/dev/null
wait $DAEMON

# Without a state_dir, the store is %ProgramData%\rocmd\store.
printf '{ "log": { "level": "info", "file": "C:\\\\rocmd-pkg\\\\default.log" } }\n' >"$T/default.json"
wine 'C:\rocmd-pkg\rocmd.exe' --foreground --config 'C:\rocmd-pkg\default.json' >"$T/default.out" 2>&1 &
DAEMON=$!
if wait_until 60 ctl status && ctl --json pkg list >"$OUT" && grep -q '"path":[[:space:]]*"C:\\\\ProgramData\\\\rocmd' "$OUT" &&
	[ -d "$C/ProgramData/rocmd/store/objects" ]; then
	ok "by default the store is %ProgramData%\\rocmd\\store"
else
	bad "the default store location"
fi
ctl shutdown >/dev/null
wait $DAEMON
echo "# package store under wine: $(($(date +%s) - start)) s"
harness_done "windows package store"
