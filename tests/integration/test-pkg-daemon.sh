#!/bin/sh
# The package store through the real rocmd and rocmctl on a private socket and
# state folder: import a 7z (LZMA2, solid) built from real rocBLAS files,
# list/show/match, hostile archives refused with nothing left behind, the drop
# folder, verify catching a damaged object, rm with garbage collection, and a
# denied import from an unprivileged user.
#
# Usage: test-pkg-daemon.sh ROCMD ROCMCTL PKG-MKARCHIVE [REAL-FILES-DIR]
set -u
. "$(dirname "$0")/../lib/harness.sh"
harness_init pkg
ROCMD=$1
CTL=$2
MK=$3
REAL=${4:-}
LIB=$REAL/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library

objects() { find "$STATE/store/objects" -type f | wc -l; }
staging_empty() { [ -z "$(ls -A "$STATE/store/staging")" ]; }

# Package content: the real library files when fetched, else stand-ins.
mkdir -p "$DIR/src"
if [ -n "$REAL" ] && [ -f "$LIB/TensileLibrary_gfx803.co" ]; then
	A=$LIB/TensileLibrary_gfx803.co
	B=$LIB/Kernels.so-000-gfx803.hsaco
	C=$LIB/Kernels.so-000-gfx1030.hsaco
	echo "# using real rocBLAS files from $LIB"
else
	echo "# real rocBLAS files missing: using stand-ins"
	head -c 300000 /dev/urandom >"$DIR/src/a"
	head -c 200000 /dev/urandom >"$DIR/src/b"
	head -c 100000 /dev/urandom >"$DIR/src/c"
	A=$DIR/src/a B=$DIR/src/b C=$DIR/src/c
fi
# A lazy index for each arch: rocBLAS serves no arch without an index (its
# bytes are not read here, its name is).
mkdir -p "$DIR/src"
printf 'index' >"$DIR/src/index"
IDX=$DIR/src/index
GOOD="$DIR/rocm.gfx803.AMD.V3.for.hip.sdk.5.7.7z"
check "build a solid LZMA2 7z" 0 "$MK" 7z-fast "$GOOD" "f:library/TensileLibrary_gfx803.co=$A" \
	"f:library/Kernels.so-000-gfx803.hsaco=$B" "f:library/TensileLibrary_lazy_gfx803.dat=$IDX"
check "build a zip under a top folder with spaces" 0 "$MK" zip "$DIR/gfx803 gfx1030 (for HIP SDK 5.7).zip" \
	"f:rocBLAS gfx803 (HIP 5.7)/library/TensileLibrary_gfx803.co=$A" \
	"f:rocBLAS gfx803 (HIP 5.7)/library/Kernels.so-000-gfx1030.hsaco=$C" \
	"f:rocBLAS gfx803 (HIP 5.7)/library/TensileLibrary_lazy_gfx803.dat=$IDX" \
	"f:rocBLAS gfx803 (HIP 5.7)/library/TensileLibrary_lazy_gfx1030.dat=$IDX"
check "build a zip-slip archive" 0 "$MK" zip "$DIR/slip.zip" "f:library/TensileLibrary_gfx803.co=$A" \
	"z:../../evil.dll=100"
check "build a bomb" 0 "$MK" 7z "$DIR/bomb.7z" "f:library/TensileLibrary_gfx803.co=$A" \
	"z:library/huge.co=100000000"
check "build a symlink escape" 0 "$MK" tar "$DIR/escape.tar" "f:library/TensileLibrary_gfx803.co=$A" \
	"l:library/x=../../../etc/shadow"
check "build a zip holding a FIFO" 0 "$MK" zip-unix "$DIR/fifo.zip" "f:library/TensileLibrary_gfx803.co=$A" \
	"p:library/pipe.co=4096"
printf 'this is not an archive\n' >"$DIR/rocm.gfx1103.for.hip.skd.6.2.4.7z"

printf '{"store": {"max_file_size": 67108864}}\n' >"$DIR/rocmd.json"
check "daemon starts" 0 rocmd_start
wait_until 10 test -d "$STATE/store/objects"

check "pkg import of a 7z" 0 ctl pkg import "$GOOD"
contains "import names the package" "$DIR/out" "Imported package #1"
contains "import identifies the arch" "$DIR/out" "gfx803"
contains "import takes the SDK from the name" "$DIR/out" "5.7 (generation 5.7, from name)"
check "pkg import again" 0 ctl --json pkg import "$GOOD"
contains "a second import is the same package" "$DIR/out" '"already_stored":[[:space:]]*true'
check "importing it again with --sdk pins the generation" 0 ctl --json pkg import "$GOOD" --sdk 5.7.1
contains "sdk updated" "$DIR/out" '"sdk_updated":[[:space:]]*true'
check "show has the pinned SDK" 0 ctl --json pkg show 1
contains "pinned SDK shown" "$DIR/out" '"sdk":[[:space:]]*"5.7.1"'
check "pkg import of a zip with a top folder" 0 ctl pkg import "$DIR/gfx803 gfx1030 (for HIP SDK 5.7).zip"
contains "the top folder is stripped" "$DIR/out" "rocBLAS gfx803 (HIP 5.7)"
check "pkg list" 0 ctl pkg list
contains "list shows both" "$DIR/out" "gfx1030,gfx803"
contains "list shows the dedup" "$DIR/out" "deduplication saves"
check "pkg list --json" 0 ctl --json pkg list
contains "json list has the store" "$DIR/out" '"dedup_saved_bytes"'
check "pkg show --files" 0 ctl pkg show 1 --files
contains "show lists the files with hashes" "$DIR/out" "library/TensileLibrary_gfx803.co"
check "status counts packages" 0 ctl --json status
contains "status packages = 2" "$DIR/out" '"packages":[[:space:]]*2'

# Entry names outside ASCII (Cyrillic, Japanese, Arabic) in a 7z, which keeps
# them in UTF-16: the daemon sets no locale, and reads them as UTF-8 anyway.
if command -v 7z >/dev/null 2>&1; then
	mkdir -p "$DIR/names/library"
	cp "$A" "$DIR/names/library/TensileLibrary_gfx803.co"
	for n in Библиотека 日本語 مكتبة; do printf '%s' "$n" >"$DIR/names/library/$n.co"; done
	(cd "$DIR/names" && LC_ALL=C.UTF-8 7z a -bd -bso0 ../names.7z library)
	check "import a 7z with names in three scripts" 0 ctl --json pkg import "$DIR/names.7z"
	NID=$(jnum id <"$DIR/out")
	check "show its files" 0 ctl pkg show "$NID" --files
	for n in Библиотека 日本語 مكتبة; do contains "the name $n" "$DIR/out" "library/$n.co"; done
else
	skip "names outside ASCII" "7z (p7zip) missing"
fi

check "pkg match picks the 5.7 package" 0 ctl pkg match --sdk 5.7.1 --arch gfx803 --platform linux
contains "match names the rule" "$DIR/out" "5.7=V3,V2.0"
check "pkg match never crosses generations" 1 ctl pkg match --sdk 6.2.4 --arch gfx803
contains "match says why" "$DIR/out" "built for SDK generation 5.7, not 6.2"
check "pkg match --json" 1 ctl --json pkg match --sdk 6.2.4 --arch gfx1103 --platform windows
contains "json match explains each candidate" "$DIR/out" '"verdict":[[:space:]]*"refused"'
check "pkg match rejects a bad arch" 1 ctl pkg match --sdk 6.2.4 --arch sm_90

# A Windows package: a real PE rocblas.dll built here with mingw-w64 (importing
# amdhip64_6.dll, with a VERSIONINFO), when the cross tools are installed.
if command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 && command -v x86_64-w64-mingw32-windres >/dev/null 2>&1; then
	W=$DIR/win
	if make_rocblas_dll "$W" "$W/rocblas.dll" "4,2,0,7"; then
		head -c 4096 /dev/urandom >"$W/index"
		WIN="$DIR/rocm.gfx1103.AMD.780M.phoenix.V5.0.for.hip.sdk.6.2.4.7z"
		"$MK" 7z "$WIN" "f:rocBLAS (gfx1103)/rocblas.dll=$W/rocblas.dll" \
			"f:rocBLAS (gfx1103)/library/TensileLibrary_lazy_gfx1103.dat=$W/index" \
			"f:rocBLAS (gfx1103)/library/TensileLibrary_gfx1103.co=$W/index" >/dev/null
		check "import a Windows package" 0 ctl --json pkg import "$WIN"
		contains "its DLL's version resource" "$DIR/out" '"file_version":[[:space:]]*"4.2.0.7"'
		contains "its DLL's HIP runtime" "$DIR/out" '"hip_runtime":[[:space:]]*"amdhip64_6.dll"'
		contains "a Windows package" "$DIR/out" '"platform":[[:space:]]*"windows"'
		WID=$(sed -n 's/^[[:space:]]*"id":[[:space:]]*\([0-9]*\).*/\1/p' "$DIR/out" | head -n 1)
		check "match picks it for SDK 6.2.4 on Windows" 0 ctl pkg match --sdk 6.2.4 --arch gfx1103 --platform windows
		contains "match names it" "$DIR/out" "package #$WID"
		check "but not for 6.1.2" 1 ctl pkg match --sdk 6.1.2 --arch gfx1103 --platform windows
		check "nor on Linux" 1 ctl pkg match --sdk 6.2.4 --arch gfx1103 --platform linux
		contains "platform reason" "$DIR/out" "holds a windows binary, not a linux one"
		check "--sdk contradicting the DLL is refused" 1 ctl pkg import "$WIN" --sdk 5.7
		contains "contradiction named" "$DIR/err" "amdhip64_6.dll"
	else
		echo "# mingw-w64 could not build a DLL: Windows package checks skipped"
	fi
else
	echo "# mingw-w64 missing: Windows package checks skipped"
fi

n=$(objects)
for a in slip.zip bomb.7z escape.tar fifo.zip rocm.gfx1103.for.hip.skd.6.2.4.7z; do
	check "hostile $a refused" 1 ctl pkg import "$DIR/$a"
	if [ "$(objects)" -eq "$n" ] && staging_empty; then ok "$a left nothing behind"; else
		bad "$a left something behind"
		find "$STATE/store" | sed 's/^/#   /'
	fi
done
check "slip refusal names the entry" 1 ctl pkg import "$DIR/slip.zip"
contains "slip message" "$DIR/err" '"../../evil.dll"'
check "bomb refusal names the limit" 1 ctl pkg import "$DIR/bomb.7z"
contains "bomb message" "$DIR/err" "store.max_file_size"
check "a zip's FIFO is refused, not stored as a file" 1 ctl pkg import "$DIR/fifo.zip"
contains "FIFO message" "$DIR/err" 'entry "library/pipe.co": a FIFO'
check "refusals are events" 0 ctl events --kind pkg.refused
contains "refusal event" "$DIR/out" "pkg.refused"
check "a missing path" 1 ctl pkg import "$DIR/nothing.7z"

# The drop folder: a good archive and a hostile one.
"$MK" tar.gz "$DIR/dropped.tar.gz" "f:library/Kernels.so-000-gfx1030.hsaco=$C" >/dev/null
cp "$DIR/dropped.tar.gz" "$STATE/drop/rocm.gfx1030.V2.0.for.hip.sdk.5.7.tar.gz"
cp "$DIR/slip.zip" "$STATE/drop/slip.zip"
if wait_until 20 test -f "$STATE/drop/imported/rocm.gfx1030.V2.0.for.hip.sdk.5.7.tar.gz"; then
	ok "drop folder imports an archive"
else
	bad "drop folder imports an archive"
	ls -lR "$STATE/drop" | sed 's/^/#   /'
fi
if wait_until 20 test -f "$STATE/drop/refused/slip.zip.why"; then ok "drop folder refuses a hostile one"; else
	bad "drop folder refuses a hostile one"
fi
check "drop import shows in the list" 0 ctl pkg list
contains "dropped package listed" "$DIR/out" "V2.0"
check "drop events" 0 ctl events --kind pkg.
contains "drop import event" "$DIR/out" "rocm.gfx1030.V2.0.for.hip.sdk.5.7.tar.gz"

check "pkg verify" 0 ctl pkg verify
contains "verify counts" "$DIR/out" "0 missing or corrupt"
# The object of a stored package's file (the database's list), never one the
# store might hold for no package.
DB=$STATE/rocmd.db
row=$(sql "SELECT f.sha256 || ' ' || f.path FROM package_file f JOIN package p ON p.id = f.package_id WHERE f.kind = 'f' ORDER BY p.id, f.path LIMIT 1")
h=${row%% *}
obj=$STATE/store/objects/$(printf %s "$h" | cut -c1-2)/$(printf %s "$h" | cut -c3-)
[ -f "$obj" ] || bail "no store object for a stored package's file ($row)"
chmod u+w "$obj"
printf 'X' | dd of="$obj" bs=1 seek=10 conv=notrunc 2>/dev/null
check "pkg verify finds the damage" 1 ctl pkg verify
contains "verify names it" "$DIR/out" "corrupt"
contains "verify names the damaged object" "$DIR/out" "^  $h "
contains "verify counts exactly one bad object" "$DIR/out" " 1 missing or corrupt"

# An object cut short is replaced by importing a package that holds it again
# (the object stays read-only meanwhile, as the store leaves it).
h=$(sha256sum "$A" | cut -c1-64)
o="$STATE/store/objects/$(printf %s "$h" | cut -c1-2)/$(printf %s "$h" | cut -c3-)"
chmod u+w "$o" && truncate -s 100 "$o" && chmod a-w "$o"
check "importing a package again over an object cut short" 0 ctl pkg import "$GOOD"
if [ "$(sha256sum <"$o" | cut -c1-64)" = "$h" ]; then ok "the object is whole again"; else
	bad "the object cut short was not replaced"
fi

before=$(objects)
check "pkg rm" 0 ctl pkg rm 1
contains "rm reports" "$DIR/out" "Removed package #1"
if [ "$(objects)" -lt "$before" ]; then ok "rm collected unshared objects"; else bad "rm collected unshared objects"; fi
check "pkg show of a removed package" 1 ctl pkg show 1
check "pkg rm of a missing package" 1 ctl pkg rm 99

if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	chmod 755 "$DIR" "$STATE" 2>/dev/null
	chmod 666 "$SOCK"
	check "an unprivileged import is denied" 4 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CTL" --socket "$SOCK" pkg import "$GOOD"
	check "an unprivileged list is fine" 0 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CTL" --socket "$SOCK" pkg list
fi

# A database emptied or removed never costs the store: each package's record
# in the store brings it back (adopted), a store made before records existed
# is set aside, not deleted, and the log and status say what happened (and
# that how the previous run ended is not known).
store_idle() { ctl --json pkg list 2>/dev/null | grep -q '"jobs":[[:space:]]*0'; }
# The object damaged above, whole again from the file it came from (a package
# with a damaged object is not adopted: that is shown further down).
want=$(printf %s "$obj" | sed 's|.*/objects/\(..\)/|\1|')
for f in "$A" "$B" "$C" "$DIR"/names/library/* "$DIR"/win/*; do
	[ -f "$f" ] && [ "$(sha256sum <"$f" | cut -c1-64)" = "$want" ] || continue
	chmod u+w "$obj" && cp "$f" "$obj" && chmod a-w "$obj"
	break
done
digests() { ctl --json pkg list | grep -o '"digest":[[:space:]]*"[0-9a-f]*"' | sort; }
printf '{"store": {"max_file_size": 67108864}, "log": {"level": "info", "file": "%s"}}\n' \
	"$DIR/rocmd.log" >"$CONF"
before=$(digests)
nobj=$(objects)
for how in emptied removed; do
	rocmd_stop
	if [ "$how" = emptied ]; then : >"$STATE/rocmd.db"; else rm -f "$STATE/rocmd.db"; fi
	rm -f "$STATE/rocmd.db-wal" "$STATE/rocmd.db-shm"
	check "rocmd starts on a database $how" 0 rocmd_start
	wait_until 30 store_idle
	if [ "$(objects)" -eq "$nobj" ]; then ok "no object was deleted ($how)"; else
		bad "the store lost objects to a database $how: $(objects) of $nobj left"
	fi
	if [ "$(digests)" = "$before" ]; then ok "every package was adopted ($how)"; else
		bad "packages not adopted ($how)"
		digests | sed 's/^/#   now: /'
		echo "$before" | sed 's/^/#   before: /'
		grep "store\|adopt" "$DIR/rocmd.log" | sed 's/^/#   log: /'
	fi
	check "status ($how)" 0 ctl status
	contains "status does not claim a clean stop ($how)" "$OUT" "Previous stop.*unknown"
	contains "status says the packages were adopted ($how)" "$OUT" "note: .*adopted from their records"
done
contains "the log says it" "$DIR/rocmd.log" "adopted from their records"
check "adoptions are events" 0 ctl events --kind pkg.adopted
contains "an adoption event" "$OUT" "adopted from its record"
check "an adopted package is whole" 0 ctl pkg verify
# One whose object is damaged is not adopted; its record and objects stay.
rocmd_stop
h=$(sha256sum <"$A" | cut -c1-64)
o="$STATE/store/objects/$(printf %s "$h" | cut -c1-2)/$(printf %s "$h" | cut -c3-)"
chmod u+w "$o" && printf 'X' | dd of="$o" bs=1 seek=10 conv=notrunc 2>/dev/null && chmod a-w "$o"
: >"$STATE/rocmd.db"
check "rocmd starts with a damaged object" 0 rocmd_start
wait_until 30 store_idle
check "status (damaged)" 0 ctl status
contains "status names the package it could not adopt" "$OUT" "could not be adopted (.*damaged)"
if [ "$(objects)" -eq "$nobj" ]; then ok "its objects are kept"; else bad "objects lost: $(objects) of $nobj"; fi
chmod u+w "$o" && cp "$A" "$o" && chmod a-w "$o"
# A store from before records existed, and an emptied database.
rocmd_stop
rm -rf "$STATE/store/packages" "$STATE/store/store.json"
: >"$STATE/rocmd.db"
rm -f "$STATE/rocmd.db-wal" "$STATE/rocmd.db-shm"
check "rocmd starts on an old store and an emptied database" 0 rocmd_start
wait_until 30 store_idle
kept=$(find "$STATE/store/objects" "$STATE/store/unclaimed" -type f 2>/dev/null | wc -l)
if [ "$kept" -eq "$nobj" ]; then ok "no object of the old store was deleted"; else
	bad "the old store lost objects: $kept of $nobj left"
fi
check "status (old store)" 0 ctl status
contains "status says where the objects went" "$OUT" "note: .*moved to .*/unclaimed/"
contains "and the log" "$DIR/rocmd.log" "moved to .*/unclaimed/"
check "a new import into it" 0 ctl pkg import "$GOOD"
rocmd_stop
check "rocmd starts again" 0 rocmd_start
wait_until 30 store_idle
kept=$(find "$STATE/store/objects" "$STATE/store/unclaimed" -type f 2>/dev/null | wc -l)
if [ "$kept" -ge "$nobj" ]; then ok "what was set aside stays"; else bad "set-aside objects lost"; fi
check "status after a clean stop" 0 ctl status
contains "a clean stop again" "$OUT" "Previous stop.*clean"
lacks "nothing to note" "$OUT" "note:"

# An admin-group member (uid 65534 in the admin group nogroup) imports with
# its own rights, not root's: what it cannot read is refused, names inside
# folders it cannot list are not told, and the store keeps what it read from
# other users.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 && getent group nogroup >/dev/null; then
	as_admin() { setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" --socket "$SOCK" "$@"; }
	rocmd_stop
	printf '{"store": {"max_file_size": 67108864}, "ipc": {"admin_group": "nogroup"}}\n' >"$CONF"
	check "daemon restarts with the admin group nogroup" 0 rocmd_start
	chmod 666 "$SOCK"
	npk=$(ctl --json status | jnum packages)
	mkdir -p "$DIR/private" "$DIR/shared" "$DIR/tree/library/secret"
	"$MK" 7z "$DIR/private/rocm.gfx803.V9.for.hip.sdk.5.7.7z" "f:library/TensileLibrary_gfx803.co=$A" \
		"z:library/Kernels.so-000-gfx803.hsaco=4097" >/dev/null
	cp "$DIR/private/rocm.gfx803.V9.for.hip.sdk.5.7.7z" "$DIR/shared/mine.7z"
	cp "$DIR/private/rocm.gfx803.V9.for.hip.sdk.5.7.7z" "$DIR/shared/root-only.7z"
	chmod 700 "$DIR/private"
	chmod 755 "$DIR/shared"
	chmod 644 "$DIR/shared/mine.7z"
	chmod 600 "$DIR/shared/root-only.7z"
	# rocmctl resolves the path itself; a raw call does not.
	check "an archive in a folder only root may enter is refused" 4 as_admin call pkg.import \
		"{\"path\": \"$DIR/private/rocm.gfx803.V9.for.hip.sdk.5.7.7z\"}"
	contains "refused as the caller would be" "$ERR" "ermission denied"
	check "whether a path in it exists is not told either" 4 as_admin call pkg.import \
		"{\"path\": \"$DIR/private/nothing.7z\"}"
	contains "the same refusal" "$ERR" "ermission denied"
	check "an archive only root may read is refused" 4 as_admin pkg import "$DIR/shared/root-only.7z"
	# A folder with a subfolder only root may enter, holding a FIFO: the walk
	# stops at the subfolder, and nothing inside it is named.
	cp "$A" "$DIR/tree/library/TensileLibrary_gfx803.co"
	head -c 5000 /dev/urandom >"$DIR/tree/library/secret/hidden-name.co"
	mkfifo "$DIR/tree/library/secret/hidden-fifo"
	chmod -R a+rX "$DIR/tree"
	chmod 700 "$DIR/tree/library/secret"
	check "a folder holding one only root may enter is refused" 1 as_admin pkg import "$DIR/tree"
	contains "the refusal names the folder it could not enter" "$ERR" "library/secret"
	lacks "no name inside it is told" "$ERR" "hidden-"
	if [ "$(ctl --json status | jnum packages)" -eq "$npk" ]; then ok "none of them was stored"; else
		bad "a package was stored from what the caller cannot read"
	fi
	check "an archive the caller may read is imported" 0 as_admin pkg import "$DIR/shared/mine.7z"
	o=$(find "$STATE/store/objects" -type f | head -n 1)
	if setpriv --reuid=65534 --regid=65534 --clear-groups cat "$o" >/dev/null 2>&1; then
		bad "store objects are readable by other users"
		ls -ld "$STATE/store" "$STATE/store/objects" "$o" | sed 's/^/#   /'
	else
		ok "store objects are not readable by other users"
	fi
else
	skip "imports with the caller's rights" "needs root, setpriv and the group nogroup"
fi

check "daemon stops" 0 ctl shutdown
harness_done
