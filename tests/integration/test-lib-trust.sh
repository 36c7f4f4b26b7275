#!/bin/sh
# Issue 17, "Deploy you can trust", through the real rocmd (--root on the
# trixie sandbox of tests/fault/sandbox.sh: Debian's HIP 5.7.1 + rocBLAS
# 5.5.1 under /usr, one gfx1030 GPU) and rocmctl. One part per run, named by
# PART; each reproduces what the issue found broken:
#   checks   lib deploy --package goes through the SDK, platform, binary and
#            arch checks of the automatic choice; --force skips named
#            checks, never the platform
#   pkgrm    pkg rm works for every package not in place (it failed for any
#            package ever deployed); the history keeps its name and digest
#   originals  an in-place SDK update (Debian's librocblas0 .deb unpacked over
#            a deployed tree, the files the sandbox holds) that leaves
#            rocmd's files in place: the next deploy's new originals leave
#            them out, and rollback --to original equals a fresh unpack of
#            the .deb (diff -r)
#   backups  deploy.keep_generations prunes older originals (never the
#            oldest, never the one in use); lib status shows their disk use;
#            lib verify hashes the backup, names a damaged file with the
#            right advice and offers an older intact generation, which
#            rollback --to original --generation N restores; lib forget
#            removes a target whose SDK is gone
#   gpus     every GPU counts: with a gfx1030 and a gfx803 GPU, a
#            gfx1030-only package is refused naming the gfx803 that would
#            lose its kernels (the automatic choice too), --force arch
#            deploys it (on a terminal after asking) and lib verify says
#            gfx803 is not covered; lib deploy
#            --dry-run says what would change (files,
#            bytes, each GPU's arch) and changes nothing (all with --no-merge,
#            the whole folder replaced)
#   merge    with the same two GPUs, a gfx1030-only package is deployed as a
#            merged library (its files plus the vendor's gfx803 ones, from
#            the originals in place, their backup, or the deployment in
#            place); the dry run, lib status and lib history say so; a package
#            whose rocBLAS binary is not built for gfx803 is refused naming it
#   verify   the verification inside a deploy asks every GPU's arch: a
#            --no-merge deploy whose package row claims gfx803 (its files do
#            not serve it) fails and is rolled back
#   archs    pkg import's archs and lib verify's answer for the deployed
#            folder agree (code objects without an index serve nothing)
#
# Usage: test-lib-trust.sh ROCMD ROCMCTL PART
set -u
HERE=$(dirname "$0")
. "$HERE/../lib/harness.sh"
. "$HERE/../fault/sandbox.sh"
ROCMD=$1
CTL=$2
PART=$3
sandbox_check || exit 77
harness_init "trust-$PART"
ROOT=$DIR/root
LIB=$ROOT/$LIBREL
BIN=$ROOT/$BINREL
sandbox_root "$ROOT"
start() { rocmd_start --root "$ROOT" || bail "rocmd did not start"; }
# import NAME DIR: imports package folder DIR, expecting it to get id NAME.
import() {
	check "import package #$1 ($(basename "$2"))" 0 ctl pkg import "$2"
	contains "it is package #$1" "$OUT" "Imported package #$1 "
}
# unchanged WHAT: the SDK's library and binary are still the vendor's.
unchanged() {
	same "$1: the library is untouched" "$T/$LIBREL" "$LIB"
	if cmp -s "$T/$BINREL" "$BIN"; then ok "$1: the binary is untouched"; else
		bad "$1: the binary is untouched"; fi
}
write_conf() { printf '{"sdk": {"debounce_ms": 300}, "deploy": {%s}}\n' "${1:-}" >"$CONF"; }
write_conf

part_checks() {
	P1=$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7
	P2=$DIR/pkg/rocm.gfx1030.V4.0.for.hip.sdk.6.1.2
	P3=$DIR/pkg/rocm.gfx1030.V3.windows.for.hip.sdk.5.7
	P4=$DIR/pkg/rocm.gfx803.V3.for.hip.sdk.5.7
	P5=$DIR/pkg/rocm.gfx1030.V3.so4.for.hip.sdk.5.7
	sandbox_pkg "$P1" "fits"
	sandbox_pkg "$P2" "another SDK"
	sandbox_pkg "$P3" "windows"
	make_rocblas_dll "$DIR/dll" "$P3/rocblas.dll" 5,7,0,0 || bail "mingw-w64 cannot build rocblas.dll"
	mkdir -p "$P4/library"
	cp -l "$T/$LIBREL/TensileLibrary.dat" "$T/$LIBREL/TensileLibrary_gfx803.co" "$T/$LIBREL/Kernels.so-000-gfx803.hsaco" "$P4/library/"
	# A librocblas.so.4 (ROCm 6's soname) that needs the SDK's own HIP runtime.
	sandbox_pkg "$P5" "so.4"
	mkdir -p "$DIR/so"
	echo 'int hipMalloc(void **p, unsigned long n) { return 0; }' >"$DIR/so/hip.c"
	echo 'int hipMalloc(void **p, unsigned long n); int rocblas_create_handle(void **h) { return hipMalloc(h, 64); }' >"$DIR/so/rb.c"
	cc -shared -fPIC -Wl,-soname,libamdhip64.so.5 -o "$DIR/so/libamdhip64.so.5" "$DIR/so/hip.c" &&
		cc -shared -fPIC -Wl,-soname,librocblas.so.4 -o "$P5/librocblas.so.4" "$DIR/so/rb.c" \
			"$DIR/so/libamdhip64.so.5" || bail "cannot build librocblas.so.4"
	start
	wait_for "the SDK and its library are found" 60 has_event sdk.library_inspected "/usr"
	import 1 "$P1"
	import 2 "$P2"
	import 3 "$P3"
	contains "package #3 holds a Windows binary" "$OUT" "Platform *windows"
	import 4 "$P4"
	import 5 "$P5"

	check "a package for SDK 6.1.2 is refused on SDK 5.7.1" 1 ctl lib deploy --package 2
	contains "the sdk check is named" "$ERR" "sdk check: it is built for SDK 6.1.2 (generation 6.1), not 5.7 (5.7.1)"
	contains "the refusal says what --force skips" "$ERR" "force sdk deploys it anyway"
	unchanged "after the SDK refusal"

	check "a Windows rocblas.dll package is refused on Linux" 1 ctl lib deploy --package 3
	contains "the platform check is named" "$ERR" "platform check: it holds a windows rocBLAS binary (rocblas.dll), and sdk-1 is linux"
	contains "and cannot be forced" "$ERR" "the platform check cannot be forced"
	check "--force sdk,binary,arch does not force the platform" 1 ctl lib deploy --package 3 --force sdk,binary,arch
	contains "still the platform" "$ERR" "platform check"
	check "--force platform is refused as such" 1 ctl lib deploy --package 3 --force platform
	contains "platform is never forced" "$ERR" "the platform check cannot be forced"
	unchanged "after the platform refusals"

	check "a gfx803-only package is refused before anything is deployed" 1 ctl lib deploy --package 4
	contains "the arch check is named" "$ERR" "arch check: it has no library for this machine's gfx1030 (it has gfx803)"
	lacks "not a verification failure" "$ERR" "deployed library does not cover"
	unchanged "after the arch refusal"

	check "a binary of another soname is refused" 1 ctl lib deploy --package 5
	contains "the binary check is named" "$ERR" "binary check: its binary is librocblas.so.4 (SONAME), but the SDK's programs load librocblas.so.0"
	unchanged "after the binary refusal"

	check "an unknown check is a usage error" 2 ctl lib deploy --package 2 --force speed
	contains "it is named" "$ERR" "not .speed."
	check "--force sdk deploys the 6.1.2 package" 0 ctl lib deploy --package 2 --force sdk
	same "library = package 2's" "$P2/library" "$LIB"
	check "history says it was forced" 0 ctl --json lib history
	contains "the deployment's detail names the forced check" "$OUT" '"forced":[[:space:]]*\["sdk"\]'
	check "the matching package passes the same checks" 0 ctl lib deploy
	contains "it is package #1" "$OUT" "Deployed package #1"
	same "library = package 1's" "$P1/library" "$LIB"
}

# Two packages of the real files: #1 with the binary, #2 library only.
two_packages() {
	P1=$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7
	P2=$DIR/pkg/rocm.gfx1030.V2.0.for.hip.sdk.5.7
	sandbox_pkg "$P1" "package one" binary
	sandbox_pkg "$P2" "package two"
	start
	wait_for "the SDK and its library are found" 60 has_event sdk.library_inspected "/usr"
	import 1 "$P1"
	import 2 "$P2"
}

part_pkgrm() {
	two_packages
	D1=$(ctl --json pkg show 1 | jstr digest)
	check "deploy package 1" 0 ctl lib deploy --package 1
	check "deploy package 2" 0 ctl lib deploy --package 2
	check "pkg rm of the package in place is refused" 1 ctl pkg rm 2
	contains "it says why" "$ERR" "is deployed to 1 target"
	check "pkg rm of package 1, deployed before, works" 0 ctl pkg rm 1
	lacks "no 'not an error'" "$ERR" "not an error"
	check "pkg list" 0 ctl --json pkg list
	lacks "package 1 is gone" "$OUT" '"id":[[:space:]]*1,'
	check "history" 0 ctl --json lib history
	contains "the history keeps package 1's name" "$OUT" '"name":[[:space:]]*"rocm.gfx1030.V3.for.hip.sdk.5.7"'
	contains "and its digest" "$OUT" "\"digest\":[[:space:]]*\"$D1\""
	check "rollback to the previous package (removed) is refused" 1 ctl lib rollback
	contains "it says it was removed" "$ERR" "was removed from the store"
	same "the library is still package 2's" "$P2/library" "$LIB"
	check "rollback to the originals" 0 ctl lib rollback --to original
	check "now package 2 may be removed too" 0 ctl pkg rm 2
	check "history after both" 0 ctl --json lib history
	contains "package 2's name stays" "$OUT" '"name":[[:space:]]*"rocm.gfx1030.V2.0.for.hip.sdk.5.7"'
	rocmd_stop
	start
	check "the store and the history survive a restart" 0 ctl --json lib history
	contains "package 1's name after the restart" "$OUT" '"name":[[:space:]]*"rocm.gfx1030.V3.for.hip.sdk.5.7"'
	same "the SDK holds its originals" "$T/usr" "$ROOT/usr"
}

part_history() {
	two_packages
	P3=$DIR/pkg/rocm.gfx1030.V1.0.for.hip.sdk.5.7
	sandbox_pkg "$P3" "package three"
	import 3 "$P3"
	check "deploy package 1" 0 ctl lib deploy --package 1
	check "deploy package 2" 0 ctl lib deploy --package 2
	check "deploy package 3" 0 ctl lib deploy --package 3
	check "rollback: one step back" 0 ctl lib rollback
	contains "to package 2" "$OUT" "previous package #2"
	same "library = package 2's" "$P2/library" "$LIB"
	check "rollback again: another step back, not a toggle" 0 ctl lib rollback
	contains "to package 1" "$OUT" "previous package #1"
	same "library = package 1's" "$P1/library" "$LIB"
	check "rollback again: the originals" 0 ctl lib rollback
	contains "back to the originals" "$OUT" "back to the originals"
	same "the whole /usr is the original" "$T/usr" "$ROOT/usr"
	check "a rollback with nothing to do exits 5" 5 ctl lib rollback
	contains "and says so" "$OUT" "nothing to roll back: nothing rocmd deployed is in place at sdk-1"
	check "a second rollback --to original exits 5 too" 5 ctl lib rollback --to original
	contains "and says so too" "$OUT" "nothing to roll back"
	same "still the original" "$T/usr" "$ROOT/usr"

	# A failed verify rolls back by itself: the history says why.
	check "deploy package 1 again" 0 ctl lib deploy --package 1
	rm -f "$LIB/TensileManifest.txt" && echo "damaged" >"$LIB/TensileManifest.txt"
	check "verify finds the damage" 1 ctl lib verify
	wait_for "the automatic rollback happens" 60 has_event lib.rolled_back "originals (verify)"

	check "lib history" 0 ctl lib history
	cp "$OUT" "$DIR/hist.txt"
	contains "the first deploy: originals -> #1 V3, by the user" "$OUT" "deploy .*ok .*originals -> #1 V3 .*user .*deployed package #1 rocm.gfx1030.V3.for.hip.sdk.5.7"
	contains "then #1 V3 -> #2 V2.0" "$OUT" "deploy .*ok .*#1 V3 -> #2 V2.0 .*user"
	contains "then #2 V2.0 -> #3 V1.0" "$OUT" "deploy .*ok .*#2 V2.0 -> #3 V1.0 .*user"
	contains "the rollback #3 V1.0 -> #2 V2.0" "$OUT" "rollback .*ok .*#3 V1.0 -> #2 V2.0 .*user"
	contains "the rollback #2 V2.0 -> #1 V3" "$OUT" "rollback .*ok .*#2 V2.0 -> #1 V3 .*user"
	contains "the rollback #1 V3 -> originals" "$OUT" "rollback .*ok .*#1 V3 -> originals .*user"
	contains "the failed verify" "$OUT" "verify .*failed"
	contains "the automatic rollback, for a failed verify" "$OUT" "rollback .*ok .*#1 V3 -> originals .*failed verify .*after a failed verification"
	check "lib history --json" 0 ctl --json lib history
	contains "from and to in the JSON" "$OUT" '"from":[[:space:]]*"originals"'
	contains "the reason in the JSON" "$OUT" '"reason":[[:space:]]*"verify"'
	show "$DIR/hist.txt"
}

part_said() {
	write_conf '"sync": "deploy"'
	P1=$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7
	sandbox_pkg "$P1" "package one" binary
	# A detached rocmd with no log.file logs to its state folder, not the terminal.
	LOG=$STATE/rocmd.log
	# The package is imported by a rocmd that sees no SDK yet (an empty root):
	# the next start finds the SDK, and auto-sync deploys the match.
	mkdir -p "$DIR/empty"
	rocmd_start --root "$DIR/empty" || bail "rocmd did not start"
	import 1 "$P1"
	check "lib ack before anything happened" 0 ctl lib ack
	contains "nothing to mark seen" "$OUT" "0 problems marked seen; 0 left"
	rocmd_stop
	rocmd_start --root "$ROOT" || bail "rocmd did not start again"
	wait_for "auto-sync deploys package 1" 120 has_event lib.deployed "deployed to sdk-1 (sync)"
	check "rocmctl status" 0 ctl status
	contains "the auto-sync is a problem" "$OUT" "^note: deploy problem #[0-9]*: HIP SDK 5.7.1 /usr: deploying package #1"
	contains "the auto-sync deploy is one" "$OUT" "^note: deploy problem #[0-9]*: package #1 (rocm.gfx1030.V3.for.hip.sdk.5.7) deployed to sdk-1 (sync)"
	contains "the auto-sync is logged at the default level" "$LOG" " rocmd\[[0-9]*\] notice: HIP SDK 5.7.1 /usr: deploying package #1"
	contains "the deploy is logged at the default level" "$LOG" " rocmd\[[0-9]*\] notice: package #1 (rocm.gfx1030.V3.for.hip.sdk.5.7) deployed to sdk-1 (sync)"
	contains "and it says how to mark them seen" "$OUT" "rocmctl lib ack marks them seen"
	check "lib status lists them too" 0 ctl lib status
	contains "lib status: the deploy" "$OUT" "^problem #[0-9]* .*deployed to sdk-1 (sync)"
	check "lib ack" 0 ctl lib ack
	contains "two marked seen" "$OUT" "2 problems marked seen; 0 left"
	check "rocmctl status after the ack" 0 ctl status
	lacks "no problem left" "$OUT" "deploy problem"

	# Drift: an SDK update overwrites the library; auto-sync redeploys.
	wait_until 30 sh -c "\"$CTL\" --socket \"$SOCK\" --json lib status | grep -q '\"drift\":[[:space:]]*false'"
	sleep 2.5 # past the suppression's grace period
	rm -rf "$DIR/upd" && mkdir "$DIR/upd" && cp -a "$T/$LIBREL/." "$DIR/upd/"
	rm -rf "$LIB" && mv "$DIR/upd" "$LIB"
	wait_for "the overwrite is noticed as drift" 60 has_event lib.drift "was overwritten"
	wait_for "and redeployed" 120 has_event lib.deployed "deployed to sdk-1 (drift)"
	check "rocmctl status" 0 ctl status
	contains "the drift is a problem" "$OUT" "^note: deploy problem #[0-9]*: the rocBLAS library of /usr was overwritten"
	contains "the redeploy is one" "$OUT" "^note: deploy problem #[0-9]*: package #1 .* deployed to sdk-1 (drift)"
	contains "the drift is logged as a warning" "$LOG" " rocmd\[[0-9]*\] warning: the rocBLAS library of /usr was overwritten"
	check "lib ack" 0 ctl lib ack

	# A failed verify and the automatic rollback after it.
	rm -f "$LIB/TensileManifest.txt" && echo "damaged" >"$LIB/TensileManifest.txt"
	check "verify finds the damage" 1 ctl lib verify
	wait_for "the automatic rollback happens" 60 has_event lib.rolled_back "originals (verify)"
	check "rocmctl status" 0 ctl status
	contains "the failed verify is a problem" "$OUT" "^note: deploy problem #[0-9]*: sdk-1 failed verification"
	contains "the automatic rollback is one" "$OUT" "^note: deploy problem #[0-9]*: sdk-1 rolled back to the originals (verify)"
	contains "the failed verify is logged as a warning" "$LOG" " rocmd\[[0-9]*\] warning: sdk-1 failed verification"
	contains "the rollback is logged at the default level" "$LOG" " rocmd\[[0-9]*\] notice: sdk-1 rolled back to the originals (verify)"
	same "the originals are back" "$T/usr" "$ROOT/usr"
	check "lib ack" 0 ctl lib ack
	contains "two marked seen" "$OUT" "2 problems marked seen; 0 left"

	# A user's own deploy is logged and an event, not a problem.
	check "the user deploys" 0 ctl lib deploy
	contains "it is logged" "$LOG" " rocmd\[[0-9]*\] notice: package #1 .* deployed to sdk-1 (user)"
	check "rocmctl status" 0 ctl status
	lacks "a user's deploy is no problem" "$OUT" "deploy problem"
	rocmd_stop
	rocmd_start --root "$ROOT" || bail "rocmd did not start a third time"
	wait_for "the SDK is inspected again" 60 has_event sdk.library_inspected "/usr"
	check "rocmctl status after a restart" 0 ctl status
	lacks "what was seen stays seen" "$OUT" "deploy problem"
}

part_drift() {
	cycles=${ROCMD_TRUST_CYCLES:-25}
	# Packages without the binary (450 MB), so that a cycle takes seconds.
	for v in V3 V2.0; do
		p=$DIR/pkg/rocm.gfx1030.$v.for.hip.sdk.5.7
		mkdir -p "$p/library"
		cp -l "$T/$LIBREL/Kernels.so-000-gfx1030.hsaco" "$T/$LIBREL/TensileLibrary.dat" "$p/library/"
		echo "$v" >"$p/library/TensileManifest.txt"
	done
	start
	wait_for "the SDK and its library are found" 60 has_event sdk.library_inspected "/usr"
	import 1 "$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7"
	import 2 "$DIR/pkg/rocm.gfx1030.V2.0.for.hip.sdk.5.7"
	false_drift=0
	failed_ops=0
	i=0
	while [ "$i" -lt "$cycles" ]; do
		i=$((i + 1))
		for op in "lib deploy --package 1" "lib deploy --package 2" "lib rollback" "lib rollback"; do
			# shellcheck disable=SC2086
			if ! ctl $op >"$OUT" 2>"$ERR"; then
				failed_ops=$((failed_ops + 1))
				show "$ERR"
			fi
			ctl --json lib status >"$DIR/st.json" 2>&1
			if grep -q '"drift":[[:space:]]*true' "$DIR/st.json"; then
				false_drift=$((false_drift + 1))
				echo "# cycle $i, after '$op': lib status says drift"
			fi
		done
	done
	if [ "$failed_ops" -eq 0 ]; then ok "$((cycles * 4)) deploys and rollbacks succeed"; else
		bad "$failed_ops of $((cycles * 4)) deploys and rollbacks failed"; fi
	if [ "$false_drift" -eq 0 ]; then
		ok "lib status right after each of $((cycles * 4)) deploys and rollbacks: no drift"
	else bad "lib status reported drift $false_drift times right after rocmd's own write"; fi
	lacks "no drift event" "$(ctl events --all --kind lib.drift >"$DIR/ev" 2>&1; echo "$DIR/ev")" "lib.drift"
	same "the last rollback left the originals" "$T/usr" "$ROOT/usr"
	# A real overwrite after a deploy is still drift.
	check "deploy package 1" 0 ctl lib deploy --package 1
	wait_until 30 sh -c "\"$CTL\" --socket \"$SOCK\" --json lib status | grep -q '\"drift\":[[:space:]]*false'"
	sleep 2.5 # past the suppression's grace period
	rm -rf "$DIR/upd" && mkdir "$DIR/upd" && cp -a "$T/$LIBREL/." "$DIR/upd/"
	rm -rf "$LIB" && mv "$DIR/upd" "$LIB"
	drifted() { ctl --json lib status | grep -q '"drift":[[:space:]]*true'; }
	wait_for "an SDK update over the deployed library is drift" 60 drifted
	wait_for "and an event says so" 60 has_event lib.drift "no longer holds package #1"
}

part_originals() {
	DEBS=${ROCMD_TEST_DEBS_DIR:-$(dirname "$TREES")}/trixie
	DEB=$(ls "$DEBS"/librocblas0_*.deb 2>/dev/null | head -n 1)
	[ -n "$DEB" ] || { echo "skip: no librocblas0 .deb in $DEBS"; exit 77; }
	# unpack DIR: the sandbox's rocBLAS files of the .deb into DIR, as dpkg
	# does (each file replaced, not written into).
	unpack() {
		dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$1" --unlink-first --wildcards \
			"./$LIBREL/TensileLibrary.dat" "./$LIBREL/TensileLibrary_gfx803.co" \
			"./$LIBREL/Kernels.so-000-gfx1030.hsaco" "./$LIBREL/Kernels.so-000-gfx803.hsaco" \
			"./$BINREL"
	}
	mkdir -p "$DIR/fresh"
	unpack "$DIR/fresh" || bail "cannot unpack $DEB"
	# A community-style package: the vendor's index and code object, plus
	# files of its own (a lazy index the vendor does not ship, its manifest).
	P1=$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7
	sandbox_pkg "$P1" "package one"
	head -c 4096 /dev/urandom >"$P1/library/TensileLibrary_lazy_gfx1030.dat"
	start
	wait_for "the SDK and its library are found" 60 has_event sdk.library_inspected "/usr"
	import 1 "$P1"
	check "deploy package 1" 0 ctl lib deploy --package 1
	wait_until 30 sh -c "\"$CTL\" --socket \"$SOCK\" --json lib status | grep -q '\"drift\":[[:space:]]*false'"
	sleep 2.5 # past the suppression's grace period
	unpack "$ROOT" || bail "cannot unpack $DEB over the tree"
	if [ -f "$LIB/TensileLibrary_lazy_gfx1030.dat" ]; then ok "the update left rocmd's own file in place"; else
		bad "the update left rocmd's own file in place"; fi
	wait_for "the update is noticed" 60 has_event lib.drift "no longer holds package #1"
	check "deploy after the SDK update" 0 ctl lib deploy --package 1
	wait_for "new originals were backed up" 30 has_event lib.backup_renewed "new originals"
	lacks "rocmd's lazy index is not an original" "$STATE/deploy/sdk-1/backup/manifest.json" "TensileLibrary_lazy_gfx1030.dat"
	lacks "nor its manifest" "$STATE/deploy/sdk-1/backup/manifest.json" "TensileManifest.txt"
	contains "the vendor's index is" "$STATE/deploy/sdk-1/backup/manifest.json" "TensileLibrary.dat"
	contains "the vendor's gfx803 code object is" "$STATE/deploy/sdk-1/backup/manifest.json" "TensileLibrary_gfx803.co"
	check "rollback to the originals" 0 ctl lib rollback --to original
	same "the library equals a fresh unpack of the .deb" "$DIR/fresh/$LIBREL" "$LIB"
	if cmp -s "$DIR/fresh/$BINREL" "$BIN"; then ok "the binary equals the .deb's"; else
		bad "the binary equals the .deb's"; fi
	same "and the whole /usr is the vendor's" "$T/usr" "$ROOT/usr"
	check "sdk list" 0 ctl --json sdk list
	lacks "discovery does not see rocmd's lazy index as the vendor's" "$OUT" "TensileLibrary_lazy"
}

drift_count() { ctl events --all --kind lib.drift | grep -c "no longer holds"; }
# update K N: an "SDK update" over the deployed library (the vendor's files and
# a file of its own, update-K.txt), noticed; the next deploy makes a new
# generation of originals, the earlier one kept as backup.N.
update() {
	wait_until 30 sh -c "\"$CTL\" --socket \"$SOCK\" --json lib status | grep -q '\"drift\":[[:space:]]*false'"
	sleep 2.5 # past the suppression's grace period
	drifts=$(drift_count)
	rm -rf "$DIR/upd" && mkdir "$DIR/upd" && cp -a "$T/$LIBREL/." "$DIR/upd/"
	echo "update $1" >"$DIR/upd/update-$1.txt"
	rm -rf "$LIB" && mv "$DIR/upd" "$LIB"
	wait_for "update $1 is noticed" 60 sh -c "[ \$(\"$CTL\" --socket \"$SOCK\" events --all --kind lib.drift | grep -c 'no longer holds') -gt $drifts ]"
	check "deploy after update $1" 0 ctl lib deploy sdk-1 --package 1
	wait_for "update $1's originals are a new generation" 30 has_event lib.backup_renewed "backup.$2"
}

part_backups() {
	write_conf '"keep_generations": 2'
	P1=$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7
	sandbox_pkg "$P1" "package one"
	start
	wait_for "the SDK and its library are found" 60 has_event sdk.library_inspected "/usr"
	import 1 "$P1"
	check "deploy package 1" 0 ctl lib deploy sdk-1 --package 1
	B=$STATE/deploy/sdk-1
	update 1 1
	update 2 2
	update 3 2
	if [ -f "$B/backup.1/manifest.json" ]; then ok "the oldest originals are kept"; else
		bad "the oldest originals are kept"; ls "$B" | sed 's/^/#   /'; fi
	lacks "they are the first ones" "$B/backup.1/manifest.json" "update-"
	contains "the one in use is update 3's" "$B/backup/manifest.json" "update-3.txt"
	if [ -d "$B/backup.3" ]; then bad "generations beyond deploy.keep_generations are pruned"; ls "$B" | sed 's/^/#   /'
	else ok "generations beyond deploy.keep_generations are pruned"; fi
	check "lib status" 0 ctl lib status
	contains "lib status shows the backups' disk use" "$OUT" "sdk-1 .*[0-9]* generations, [0-9.]* [KMG]iB on disk"
	check "lib status --json" 0 ctl --json lib status
	contains "the JSON has disk_bytes" "$OUT" '"disk_bytes":[[:space:]]*[1-9]'

	# A damaged file in the backup in use.
	check "lib verify with the backup intact" 0 ctl lib verify sdk-1
	contains "verify checked the backup" "$OUT" "Backup of the originals: [0-9]* files match"
	rm -f "$B/backup/library/TensileLibrary_gfx803.co"
	echo "damaged" >"$B/backup/library/TensileLibrary_gfx803.co"
	check "lib verify finds the damaged backup file" 1 ctl lib verify sdk-1
	contains "it names the file and says it is the backup" "$ERR" "the backup of its originals is damaged: library/TensileLibrary_gfx803.co no longer matches"
	contains "it offers the older intact generation" "$ERR" "backup.[0-9]* (backed up .*) is intact: rocmctl lib rollback --to original --generation [0-9]*"
	lacks "not the store's advice" "$ERR" "store verify"
	check "lib status after the verify" 0 ctl --json lib status
	contains "no automatic rollback to a damaged backup" "$OUT" '"package":[[:space:]]*1'
	check "rollback to the damaged originals is refused" 1 ctl lib rollback sdk-1 --to original
	contains "with the backup's advice" "$ERR" "the backup of the originals is damaged"
	lacks "not the store's" "$ERR" "store verify"
	same "the library is still package 1's" "$P1/library" "$LIB"
	check "rollback to the older intact generation" 0 ctl lib rollback sdk-1 --to original --generation 1
	same "it restores those originals" "$T/usr" "$ROOT/usr"

	# lib forget: a second SDK deployed to, then uninstalled.
	O=$ROOT/opt/rocm-5.7.1
	mkdir -p "$DIR/opt.new/lib/rocblas" "$DIR/opt.new/share/hip"
	l=$T/usr/lib/x86_64-linux-gnu
	cp -al "$l"/libamdhip64.so* "$l"/librocblas.so* "$DIR/opt.new/lib/"
	cp -al "$T/$LIBREL" "$DIR/opt.new/lib/rocblas/library"
	cp -al "$T/usr/share/hip/version" "$DIR/opt.new/share/hip/"
	mkdir -p "$ROOT/opt"
	mv "$DIR/opt.new" "$O"
	wait_for "the second SDK is inspected" 120 has_event sdk.library_inspected "/opt/rocm-5.7.1"
	check "deploy to it" 0 ctl lib deploy /opt/rocm-5.7.1 --package 1
	t2=$(ctl --json lib deploy /opt/rocm-5.7.1 --package 1 2>/dev/null | jstr name)
	[ -n "$t2" ] || t2=sdk-2
	rm -rf "$O"
	wait_for "its removal is noticed" 60 has_event sdk.removed "/opt/rocm-5.7.1 is gone"
	check "lib forget without --yes, not on a terminal" 2 ctl lib forget "$t2" </dev/null
	contains "asks for --yes" "$ERR" "give --yes to confirm"
	check "lib forget of a target whose SDK is there is refused" 1 ctl lib forget sdk-1 --yes
	contains "it says so" "$ERR" "is still there"
	if [ -d "$STATE/deploy/$t2/backup" ]; then ok "$t2 has a backup before"; else bad "$t2 has a backup before"; fi
	check "lib forget $t2 --yes" 0 ctl lib forget "$t2" --yes
	if [ -e "$STATE/deploy/$t2" ]; then bad "its backups are gone"; else ok "its backups are gone"; fi
	check "lib status" 0 ctl --json lib status
	lacks "it is no target any more" "$OUT" "\"name\":[[:space:]]*\"$t2\""
	check "lib forget again: no such target" 1 ctl lib forget "$t2" --yes
	if [ -d "$B/backup" ]; then ok "sdk-1's backups stay"; else bad "sdk-1's backups stay"; fi
}

# second_gpu: a second GPU, a gfx803 (Polaris), which the vendor's library serves.
second_gpu() { sandbox_gpu2 "$ROOT"; }

part_gpus() {
	second_gpu
	two_packages
	check "lib status" 0 ctl --json lib status
	contains "both GPUs are known" "$OUT" '"gfx1030",[[:space:]]*"gfx803"'
	lacks "a merged library serves both: no match problem" "$OUT" "match_problem"
	check "lib deploy --no-merge (the automatic choice) is refused" 1 ctl lib deploy --no-merge
	contains "it names the GPU that would lose its kernels" "$ERR" "this machine's gfx803 (it has gfx1030), which the library in place serves: that GPU would lose its kernels (--no-merge"
	check "lib deploy --package 1 --no-merge is refused" 1 ctl lib deploy --package 1 --no-merge
	contains "the arch check names gfx803" "$ERR" "arch check: it has no library for this machine's gfx803"
	unchanged "after the refusals"

	contains "the refusal names the confirmation" "$ERR" "-y confirms the loss"
	check "--dry-run of it says what would be lost" 0 ctl lib deploy --package 1 --no-merge --dry-run
	contains "gfx803 would be lost" "$OUT" "GPU gfx803: LOST"
	check "--dry-run --force arch" 0 ctl lib deploy --package 1 --no-merge --force arch --dry-run
	contains "it says it changed nothing" "$OUT" "Dry run, nothing changed: package #1"
	contains "the gfx803 code object would go" "$OUT" "remove .*TensileLibrary_gfx803.co"
	contains "the index would be replaced" "$OUT" "replace .*TensileLibrary.dat"
	contains "the package's manifest would be added" "$OUT" "add .*TensileManifest.txt"
	contains "the counts" "$OUT" "Files: 1 added, 2 replaced, 0 kept, 2 removed"
	contains "and the binary" "$OUT" "the rocBLAS binary replaced"
	contains "gfx1030 is kept" "$OUT" "GPU gfx1030: kept"
	contains "gfx803 is lost" "$OUT" "GPU gfx803: LOST"
	unchanged "after the dry run"
	if [ -e "$STATE/deploy/sdk-1" ]; then bad "a dry run writes no state"; ls -R "$STATE/deploy" | sed 's/^/#   /'
	else ok "a dry run writes no state"; fi
	check "--dry-run --json" 0 ctl --json lib deploy --package 1 --no-merge --force arch --dry-run
	tr -d ' \t\n' <"$OUT" >"$DIR/dry.json"
	contains "per GPU in the JSON" "$DIR/dry.json" '"arch":"gfx803","before":true,"after":false'

	# On a terminal (script(1) gives rocmctl one), a deploy that loses an
	# arch asks first.
	if command -v script >/dev/null 2>&1; then
		rc=0
		printf 'no\n' | script -qec "\"$CTL\" --socket \"$SOCK\" lib deploy --package 1 --no-merge --force arch" \
			/dev/null >"$DIR/tty.out" 2>&1 || rc=$?
		if [ "$rc" -eq 1 ]; then ok "on a terminal, answered no: exit 1"; else
			bad "on a terminal, answered no: exit 1 (exit $rc)" "$DIR/tty.out"; fi
		contains "it asks first, naming the arch" "$DIR/tty.out" "leaves this machine's gfx803 without kernels"
		contains "and deploys nothing" "$DIR/tty.out" "nothing deployed"
		unchanged "after the answer no"
		rc=0
		printf 'no\n' | script -qec "\"$CTL\" --socket \"$SOCK\" lib deploy --package 1 --no-merge" \
			/dev/null >"$DIR/tty.out" 2>&1 || rc=$?
		if [ "$rc" -eq 1 ]; then ok "--no-merge alone on a terminal asks too: no, exit 1"; else
			bad "--no-merge alone on a terminal asks too: no, exit 1 (exit $rc)" "$DIR/tty.out"; fi
		contains "it names the arch" "$DIR/tty.out" "leaves this machine's gfx803 without kernels"
		unchanged "after that answer no"
	else
		skip "a deploy that loses an arch asks first on a terminal" "no script(1)"
	fi
	check "--no-merge -y deploys it (the loss confirmed, no --force)" 0 ctl lib deploy --package 1 --no-merge -y
	contains "it says which GPU has no kernels now" "$OUT" "This machine's gfx803 has no kernels in this library now"
	same "library = package 1's" "$P1/library" "$LIB"
	check "lib verify asks the library for every GPU (the loss confirmed: not failed for it)" 0 ctl lib verify sdk-1
	contains "gfx1030 is covered" "$OUT" "GPU arch gfx1030: covered"
	contains "gfx803 is said not to be" "$OUT" "GPU arch gfx803: NOT covered"
	check "a confirmed --no-merge is no forced check" 0 ctl --json lib history sdk-1
	tr -d ' \t\n' <"$OUT" >"$DIR/hist.json"
	contains "history records the loss" "$DIR/hist.json" '"lost":"gfx803"'
	lacks "and no forced arch check" "$DIR/hist.json" '"forced":\["arch"\]'
	if command -v script >/dev/null 2>&1; then
		check "back to the originals" 0 ctl lib rollback sdk-1 --to original
		wait_for "discovery reads the originals again (gfx803 served)" 60 \
			sh -c '"$1" --socket "$2" lib deploy --package 1 --no-merge --dry-run | grep -q "GPU gfx803: LOST"' \
			sh "$CTL" "$SOCK"
		rc=0
		printf 'yes\n' | script -qec "\"$CTL\" --socket \"$SOCK\" lib deploy --package 1 --no-merge" \
			/dev/null >"$DIR/tty.out" 2>&1 || rc=$?
		if [ "$rc" -eq 0 ]; then ok "--no-merge on a terminal, answered yes: deployed"; else
			bad "--no-merge on a terminal, answered yes: deployed (exit $rc)" "$DIR/tty.out"; fi
		same "library = package 1's" "$P1/library" "$LIB"
	fi
	check "a dry run of package 2 over package 1" 0 ctl lib deploy --package 2 --no-merge --force arch --dry-run
	contains "compared by hash: the index is kept" "$OUT" "keep .*TensileLibrary.dat"
	contains "the manifest differs" "$OUT" "replace .*TensileManifest.txt"
	same "still package 1's" "$P1/library" "$LIB"
}

# merged_tree DIR PKG: what a merged deploy of package folder PKG makes on
# this sandbox (its files plus the vendor's gfx803 ones), in DIR.
merged_tree() {
	rm -rf "$1" && mkdir -p "$1"
	cp -a "$2/library/." "$1/"
	cp -a "$T/$LIBREL/TensileLibrary_gfx803.co" "$T/$LIBREL/Kernels.so-000-gfx803.hsaco" "$1/"
}

part_merge() {
	second_gpu
	two_packages
	# A package whose librocblas.so.0 was built for gfx1030 only (its one
	# offload bundle names that arch), which no merge can serve gfx803 with.
	P3=$DIR/pkg/rocm.gfx1030.V1.0.for.hip.sdk.5.7
	sandbox_pkg "$P3" "gfx1030 binary"
	mkdir -p "$DIR/so"
	cat >"$DIR/so/rb.c" <<-'EOF'
		struct __attribute__((packed)) bundle {
			char magic[24]; unsigned long long n;
			unsigned long long o1, s1, l1; char id1[27];
			unsigned long long o2, s2, l2; char id2[32];
		};
		__attribute__((used)) const struct bundle rocmd_test_bundle = {
			"__CLANG_OFFLOAD_BUNDLE__", 2,
			0, 0, 27, "host-x86_64-unknown-linux--",
			0, 0, 32, "hipv4-amdgcn-amd-amdhsa--gfx1030"};
		int hipMalloc(void **p, unsigned long n);
		int rocblas_create_handle(void **h) { return hipMalloc(h, 64); }
	EOF
	cc -shared -fPIC -Wl,-soname,librocblas.so.0 -o "$P3/librocblas.so.0" "$DIR/so/rb.c" \
		"$T/usr/lib/x86_64-linux-gnu/libamdhip64.so.5" || bail "cannot build librocblas.so.0"
	import 3 "$P3"

	check "lib status" 0 ctl --json lib status
	lacks "a merged library serves both GPUs: no match problem" "$OUT" "match_problem"
	check "a dry run of package 1 shows the merge" 0 ctl lib deploy --package 1 --dry-run
	contains "it names what is kept from the originals" "$OUT" "^Merged library: the package's files plus 2 files (.*) for gfx803 from the originals (in place)"
	contains "the vendor's gfx803 code object comes from the originals" "$OUT" "keep .*TensileLibrary_gfx803.co (.*) from the originals (in place)"
	contains "and its Kernels.so" "$OUT" "keep .*Kernels.so-000-gfx803.hsaco (.*) from the originals"
	contains "nothing is removed" "$OUT" "Files: .* 0 removed"
	contains "gfx803 is kept" "$OUT" "GPU gfx803: kept"
	unchanged "after the dry run"
	check "the dry run in JSON" 0 ctl --json lib deploy --package 1 --dry-run
	tr -d ' \t\n' <"$OUT" >"$DIR/dry.json"
	contains "each file says where it is from" "$DIR/dry.json" '"path":"TensileLibrary_gfx803.co","bytes":[0-9]*,"from":"theoriginals(inplace)"'
	contains "the package's files too" "$DIR/dry.json" '"path":"Kernels.so-000-gfx1030.hsaco","bytes":[0-9]*,"from":"thepackage"'

	check "lib deploy --package 1: a merged library" 0 ctl lib deploy --package 1
	contains "it says it merged" "$OUT" "^Merged: the package's files plus 2 files (.*) for gfx803 from the originals (in place)"
	merged_tree "$DIR/want1" "$P1"
	same "library = package 1's files + the vendor's gfx803 files" "$DIR/want1" "$LIB"
	check "lib verify" 0 ctl lib verify sdk-1
	contains "gfx1030 is covered" "$OUT" "GPU arch gfx1030: covered"
	contains "gfx803 is covered" "$OUT" "GPU arch gfx803: covered"
	check "lib status" 0 ctl lib status
	contains "lib status says it is merged" "$OUT" "package #1 (merged)"
	contains "and from what" "$OUT" "^sdk-1: package #1 is merged: the package's files plus 2 files (.*) for gfx803 from the originals (in place)"
	check "lib status --json" 0 ctl --json lib status
	tr -d ' \t\n' <"$OUT" >"$DIR/st.json"
	contains "the JSON too" "$DIR/st.json" '"merged":{"from":"theoriginals(inplace)","archs":\["gfx803"\],"files":2'
	check "lib history" 0 ctl lib history
	contains "lib history says it is merged and from what" "$OUT" "deployed package #1 rocm.gfx1030.V3.for.hip.sdk.5.7, merged with gfx803 from the originals (in place)"

	check "package 2 over the merged package 1" 0 ctl lib deploy --package 2
	contains "merged from the deployment in place" "$OUT" "for gfx803 from the deployment in place (package #1)"
	merged_tree "$DIR/want2" "$P2"
	same "library = package 2's files + the gfx803 files" "$DIR/want2" "$LIB"
	check "rollback to the originals" 0 ctl lib rollback --to original
	same "the whole /usr is the original" "$T/usr" "$ROOT/usr"
	check "package 1 over the originals (from their backup now)" 0 ctl lib deploy --package 1
	contains "merged from the backup" "$OUT" "for gfx803 from the originals (their backup)"
	same "library = the merged tree again" "$DIR/want1" "$LIB"
	check "rollback to the originals" 0 ctl lib rollback --to original

	check "a package whose binary lacks gfx803 is refused" 1 ctl lib deploy --package 3
	contains "it names the arch and the binary" "$ERR" "gfx803 .*that GPU would lose its kernels, and no merged library can keep them: the package's librocblas.so.0 is not built for gfx803 (it is for gfx1030)"
	unchanged "after the binary refusal"
	check "--no-merge --force arch replaces the whole folder" 0 ctl lib deploy --package 1 --no-merge --force arch
	same "library = package 1's alone" "$P1/library" "$LIB"
	lacks "not merged" "$OUT" "Merged"

	# An application's private copy (as ollama ships one: the vendor's
	# library for both archs beside its librocblas), merged the same way.
	APP=$ROOT/opt/ollama/lib/ollama/rocm
	mkdir -p "$APP/rocblas"
	cp -a "$T/$LIBREL" "$APP/rocblas/library"
	cp -a "$T/$BINREL" "$APP/librocblas.so.0"
	cp -a "$APP" "$DIR/app-original"
	rocmd_stop
	write_conf '"app_targets": "ollama=/opt/ollama/lib/ollama/rocm@5.7"'
	start
	wait_for "the application's copy is found" 60 sh -c '"$1" --socket "$2" lib status | grep -q "^app-ollama "' sh "$CTL" "$SOCK"
	check "a dry run to the app shows the merge" 0 ctl lib deploy app-ollama --package 1 --dry-run
	contains "the app's gfx803 files are kept" "$OUT" "keep .*TensileLibrary_gfx803.co (.*) from the originals (in place)"
	contains "gfx803 is kept there" "$OUT" "GPU gfx803: kept"
	check "lib deploy app-ollama --package 1: a merged library" 0 ctl lib deploy app-ollama --package 1
	contains "it says it merged" "$OUT" "^Merged: the package's files plus 2 files (.*) for gfx803 from the originals (in place)"
	same "the app's library = package 1's files + its gfx803 files" "$DIR/want1" "$APP/rocblas/library"
	check "lib verify app-ollama" 0 ctl lib verify app-ollama
	contains "gfx803 is covered in the app" "$OUT" "GPU arch gfx803: covered"
	check "the app back to its originals" 0 ctl lib rollback app-ollama --to original
	same "the app's copy is its original again" "$DIR/app-original" "$APP"
}

part_verify() {
	second_gpu
	two_packages
	# A package row that claims gfx803 (as one an earlier reader recorded):
	# only the verification after the swap can tell that gfx803 has no
	# kernels then.
	rocmd_stop
	DB=$STATE/rocmd.db
	sql "UPDATE package SET archs = 'gfx1030,gfx803' WHERE id = 2" || bail "cannot update the package row"
	start
	wait_for "the SDK and its library are found" 60 has_event sdk.library_inspected "/usr"
	check "a --no-merge deploy leaving gfx803 without kernels fails" 1 ctl lib deploy --package 2 --no-merge
	contains "the verification names the second GPU's arch" "$ERR" "the deployed library does not serve gfx803"
	unchanged "it was rolled back"
	check "lib history" 0 ctl lib history
	contains "the failed deploy is in the history" "$OUT" "deploy .*failed"
	check "lib status --json" 0 ctl --json lib status
	contains "nothing is deployed" "$OUT" '"deployed":[[:space:]]*null'
	check "the same deploy with --force arch is kept" 0 ctl lib deploy --package 2 --no-merge --force arch
	same "library = package 2's" "$P2/library" "$LIB"
}

part_archs() {
	# Code objects for gfx1030 and no index: rocBLAS would abort loading it.
	P1=$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7
	mkdir -p "$P1/library"
	cp -l "$T/$LIBREL/Kernels.so-000-gfx1030.hsaco" "$P1/library/"
	echo "no index" >"$P1/library/TensileManifest.txt"
	P2=$DIR/pkg/rocm.gfx1030.V2.0.for.hip.sdk.5.7
	sandbox_pkg "$P2" "whole"
	start
	wait_for "the SDK and its library are found" 60 has_event sdk.library_inspected "/usr"
	import 1 "$P1"
	import 2 "$P2"
	for id in 1 2; do
		check "pkg show $id" 0 ctl --json pkg show $id
		tr -d ' \t\n' <"$OUT" >"$DIR/pkg$id.json"
		# The package's own "archs" (the first; the name's hints come later).
		case ",$(jstr archs <"$DIR/pkg$id.json")," in *,gfx1030,*) pkg=yes ;; *) pkg=no ;; esac
		check "deploy package $id (forced: the verification answers)" 0 ctl lib deploy --package $id --force arch
		check "lib verify of package $id" 0 ctl --json lib verify sdk-1
		tr -d ' \t\n' <"$OUT" >"$DIR/ver$id.json"
		if grep -q '"arch":"gfx1030","covered":true' "$DIR/ver$id.json"; then ver=yes; else ver=no; fi
		if [ "$pkg" = "$ver" ]; then ok "package $id: pkg import and lib verify agree on gfx1030 ($pkg)"
		else bad "package $id: pkg import says gfx1030 $pkg, lib verify of the deployed folder $ver" "$DIR/pkg$id.json"; fi
	done
	if [ -z "$(jstr archs <"$DIR/pkg1.json")" ]; then ok "code objects without an index serve nothing"; else
		bad "code objects without an index serve nothing" "$DIR/pkg1.json"; fi
	if [ "$ver" = yes ]; then ok "the whole package serves gfx1030"; else bad "the whole package serves gfx1030"; fi
}

case $PART in
checks) part_checks ;;
pkgrm) part_pkgrm ;;
history) part_history ;;
said) part_said ;;
drift) part_drift ;;
originals) part_originals ;;
backups) part_backups ;;
gpus) part_gpus ;;
merge) part_merge ;;
verify) part_verify ;;
archs) part_archs ;;
*) bail "unknown part '$PART'" ;;
esac
harness_done "$PART"
