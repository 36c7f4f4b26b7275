#!/bin/sh
# The fault harness: every failure point of the real rocmd's import, deploy,
# rollback, recovery, start and stop, failed in turn with every kind of fault,
# then the invariants checked after a restart.
#
# The sandbox is test-lib-daemon's: Debian trixie's real HIP 5.7.1 + rocBLAS
# 5.5.1 tree under --root (tests/fixtures/make-trees.sh), a gfx1030 GPU in a
# fake KFD topology, package #1 (the real library files and librocblas.so.0)
# and package #2 (library only). The operations, each from a saved baseline
# (the state folder and the root as the operation before left them):
#   import     pkg import of #1, then of #2, into an empty store
#   deploy     lib deploy --package 1, the first (it backs up the originals)
#   redeploy   lib deploy --package 2 over #1
#   rollback   lib rollback (to the previous package, #1)
#   restore    lib rollback --to original
#   recover    start-up recovery of a redeploy killed after its swap (undo)
#   finish     start-up recovery of a redeploy killed after its commit record
#   merge      lib deploy --package 1 with a second GPU, a gfx803 the package
#              lacks (sandbox_gpu2): a merged library, the package's files and
#              the vendor's gfx803 ones, from the originals in place
#   ltadd      (--hipblaslt only) lib deploy --package 1 over package #3, a
#              rocBLAS-only one deployed first: the backup holds rocBLAS's
#              originals alone, and this deploy adds hipBLASLt's to it (its
#              manifest the commit point); I1 then accepts the backup with
#              rocBLAS's originals alone or with both
#   start      start-up with the store and a deployment (the database's reads
#              and writes at start)
#   stop       shutdown (the database's writes at close)
# With --hipblaslt the SDK has hipBLASLt's library folder beside rocBLAS's
# (sandbox_lt) and both packages carry one: every operation's deploy,
# rollback and recovery replaces both folders in one transaction, and the
# target judged below is both folders and the binary.
#
# Counting: each operation runs once with ROCMD_FAILPOINT_LOG set
# (common/failpoint.h), which lists every hit of the file layer's failpoints
# ("fs.open", "fs.write", ..., "deploy.exchange") and of the deploy engine's
# kill points ("journal.swap", ...), and with fault-preload.so (LD_PRELOAD),
# whose SQLite VFS lists the database's (db.open, db.read, db.write, db.sync,
# db.truncate, db.delete). The points of an operation are its hits, less the
# middle of repeated runs (copying a 450 MB file is 110 read/write pairs:
# the first two and last two hits of a run are kept), and less repeats of the
# same context (a hit whose name and neighbours' names were seen before in
# the operation is kept only for the first and last time).
#
# Then once per point and kind, from the baseline, with rocmd restarted:
#   crash   SIGKILL at the point (kill points: only this kind)
#   eio, enospc, eacces   the operation fails with that errno (SQLite: its
#           IOERR, FULL, CANTOPEN codes)
#   short   writes only (fs.write, db.write): half the bytes, then ENOSPC
# and, after the faulted operation and a clean restart (recovery), checks:
#   I1  the backup of the originals, where its manifest exists, holds the
#       vendor's files byte for byte (checksums recorded from the pristine
#       tree) and its manifest records the vendor's SHA-256 of each
#   I2  the target (library folder and binary) is exactly the operation's old
#       or new tree: never a mix; a client told "done" means the new one, a
#       client told "failed" the old one; no journal and no leftover
#       (.rocmd-*, *.tmp, staging) remains
#   I3  the daemon's own view (lib status: the deployed package) matches the
#       disk (within 12 s: what the database could not record it records
#       every 5 s), before and after the restart, and while a journal stays (a
#       recovery that failed) lib status says the target is interrupted;
#       the store's packages are each
#       complete (every object present with its size and content) or absent
#   I4  nothing outside the target changed: every other file of the root
#       keeps its inode, size and time
#   the database passes PRAGMA integrity_check and foreign_key_check; the
#   daemon neither hangs nor dies of anything but the injected crash (a
#   failed start may end it with an error); a retry of the failed operation
#   succeeds (nothing left blocks it)
# It prints a table of points x kinds with the runs consistent, the
# inconsistent runs with the command that repeats each, and exits 1 on any.
#
# usage: tests/fault/fault.sh [--ops LIST] [--kinds LIST] [--max N] [--all] [--quick]
#            [--no-retry] [--list] [--only OP:SRC:N:KIND] [--keep DIR]
#            ROCMD ROCMCTL PRELOAD | BUILD_DIR
#   --ops LIST     comma-separated operations (default: all of the above but
#                  ltadd)
#   --kinds LIST   comma-separated kinds (default: crash,eio,enospc,eacces,short)
#   --srcs LIST    comma-separated sources of points (default: fp,db,kp; kp
#                  alone: a kill at every step the deploy engine journals)
#   --max N        at most N points per operation, spread evenly (0: all)
#   --all          every hit a point (no collapsing of repeated runs and
#                  contexts; import alone has about 1,700)
#   --quick        the CI subset: --ops redeploy,recover,stop
#                  --kinds crash,eio,short --max 4
#   --no-retry     skip the retry of a failed operation
#   --list         count and print the points, run no fault
#   --only OP:SRC:N:KIND   one run (SRC fp, db or kp; N as --list prints it)
#   --keep DIR     copy the counting runs' logs (OP.log) into DIR (--list too), and the
#                  files of each inconsistent run into DIR/failed/
#   --hipblaslt    the sandbox with hipBLASLt's folder (above)
# Exits 77 without the real SDK tree.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/harness.sh"
. "$HERE/sandbox.sh"

OPS_ALL="import deploy redeploy rollback restore recover finish start stop merge ltadd"
OPS="import deploy redeploy rollback restore recover finish start stop merge"
KINDS="crash eio enospc eacces short"
SRCS="fp db kp"
MAX=0
ALL=0
RETRY=1
LIST=0
ONLY=
FAULT_KEEP=
LT=0
usage() { sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--ops) OPS=$(echo "$2" | tr ',' ' '); shift ;;
	--kinds) KINDS=$(echo "$2" | tr ',' ' '); shift ;;
	--srcs) SRCS=$(echo "$2" | tr ',' ' '); shift ;;
	--max) MAX=$2; shift ;;
	--all) ALL=1 ;;
	--quick) OPS="redeploy recover stop" KINDS="crash eio short" MAX=4 ;;
	--no-retry) RETRY=0 ;;
	--list) LIST=1 ;;
	--only) ONLY=$2; shift ;;
	--keep) FAULT_KEEP=$2; shift ;;
	--hipblaslt) LT=1 ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "fault.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
if [ $# -eq 1 ] && [ -d "$1" ]; then
	set -- "$1/daemon/rocmd" "$1/client/rocmctl" "$1/tests/fault/librocmd-fault-preload.so"
fi
[ $# -eq 3 ] || { usage >&2; exit 2; }
ROCMD=$1 CTL=$2 PRELOAD=$3
for f in "$ROCMD" "$CTL" "$PRELOAD"; do
	[ -f "$f" ] || { echo "fault.sh: $f not built" >&2; exit 2; }
done
case "$PRELOAD" in /*) ;; *) PRELOAD=$(pwd)/$PRELOAD ;; esac
if [ -n "$ONLY" ]; then
	OPS=$(echo "$ONLY" | cut -d: -f1)
fi
for o in $OPS; do
	case " $OPS_ALL " in *" $o "*) ;; *) echo "fault.sh: unknown operation $o" >&2; exit 2 ;; esac
done
for k in $KINDS; do
	case $k in crash | eio | enospc | eacces | short) ;; *) echo "fault.sh: unknown kind $k" >&2; exit 2 ;; esac
done
for t in sqlite3 cksum timeout; do
	command -v $t >/dev/null 2>&1 || { echo "fault.sh: $t missing" >&2; exit 2; }
done

sandbox_check || exit 77
harness_init fault
RUN=$DIR/run
ROOT=$RUN/root
STATE=$RUN/state
SOCK=$RUN/rocmd.sock
CONF=$RUN/rocmd.json
FPLOG=$RUN/fp.log
DB=$STATE/rocmd.db
BASE=$DIR/base
PID=
export ROCMD_CLIENT_TIMEOUT_S=120

# ---- the sandbox ----

mkdir -p "$BASE" "$DIR/pkg"
sandbox_root "$ROOT"
P1=$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7
P2=$DIR/pkg/rocm.gfx1030.V2.0.for.hip.sdk.5.7
sandbox_pkg "$P1" "package one" binary
sandbox_pkg "$P2" "package two"
if [ "$LT" = 1 ]; then
	sandbox_lt "$ROOT"
	sandbox_lt_folder "$P1/hipblaslt/library" "package one's hipBLASLt"
	sandbox_lt_folder "$P2/hipblaslt/library" "package two's hipBLASLt"
	P3=$DIR/pkg/rocm.gfx1030.V1.for.hip.sdk.5.7
	sandbox_pkg "$P3" "package three" binary
fi
# No background work: no SDK probe or smoke test child, no drop folder, no
# tuning, no automatic deploys; only the operation under test writes.
printf '%s\n' '{"sdk": {"debounce_ms": 300, "probe_timeout_ms": 0}, "store": {"drop_folder": 0},' \
	'"deploy": {"sync": "off", "smoke_timeout_ms": 0}, "tune": {"enabled": 0}}' >"$CONF"

# The store's objects by SHA-256, with the checksum their content must have.
find "$DIR/pkg" -type f -exec sha256sum {} + | while read -r h f; do
	echo "$h $(cksum <"$f" | cut -d' ' -f1-2)"
done | sort -u >"$DIR/objects.sums"

# ---- fingerprints ----

# fp_content DIR: names, kinds, sizes, link targets and checksums of a tree.
fp_content() {
	(cd "$1" 2>/dev/null && find . -mindepth 1 -printf '%P %y %s %l\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0r cksum) 2>/dev/null
}
# fp_target: the target as users see it: the library folder (modes too) and
# the binary behind librocblas.so.0, as one checksum.
fp_target() {
	{
		(cd "$ROOT/$LIBREL" 2>/dev/null && find . -mindepth 1 -printf '%P %m\n' | LC_ALL=C sort)
		fp_content "$ROOT/$LIBREL"
		readlink "$ROOT/$BINLINK"
		find "$ROOT/$BINREL" -printf '%m\n' 2>/dev/null
		cksum <"$ROOT/$BINREL" 2>/dev/null
		[ "$LT" = 0 ] || fp_content "$ROOT/$LTREL"
	} | cksum | cut -d' ' -f1
}
# fp_originals DIR BINARY [LT]: the originals' content (a backup's or the
# tree's), with hipBLASLt's folder LT (--hipblaslt).
fp_originals() {
	{
		fp_content "$1"
		cksum <"$2" 2>/dev/null
		[ "$LT" = 0 ] || fp_content "$3"
	} | cksum | cut -d' ' -f1
}
# outside: every entry of the root but the target, with inode, size and time
# (the GPU topology is the test's own: the merge operation adds a GPU).
outside() {
	(cd "$ROOT" && find . -path "./$LIBREL" -prune -o -path "./$BINREL" -prune -o -path ./sys -prune -o \
		-path "./$LTREL" -prune -o \
		\( -type d -printf '%P d\n' \) -o \( -type l -printf '%P l %l\n' \) -o \
		-printf '%P %y %i %s %T@\n') | LC_ALL=C sort
}
ORIGINALS=$(fp_originals "$ROOT/$LIBREL" "$ROOT/$BINREL" "$ROOT/$LTREL")
# The vendor's hashes, as a backup's manifest must record them.
{
	(cd "$T/$LIBREL" && find . -type f -exec sha256sum {} + && sha256sum <"$T/$BINREL")
	[ "$LT" = 0 ] || (cd "$ROOT/$LTREL" && find . -type f -exec sha256sum {} +)
} | cut -d' ' -f1 | sort >"$DIR/originals.sha256"
outside >"$DIR/outside.ref"

# deployed_label: the package the running daemon says the target holds, or "none".
deployed_label() {
	_j=$(ctl --json lib status 2>/dev/null | tr -d '\n\t ') || return 1
	case "$_j" in *'"name":"sdk-1"'*) ;; *) return 1 ;; esac
	_d=$(printf '%s' "$_j" | grep -o '"deployed":\(null\|{[^}]*}\)' | head -n 1)
	_p=$(printf '%s' "$_d" | grep -o '"package":[0-9]*' | cut -d: -f2)
	echo "${_p:-none}"
}
# label_of FP: the package the target fingerprint FP was seen holding.
label_of() { awk -v f="$1" '$1 == f { print $2; exit }' "$DIR/states"; }
: >"$DIR/states"
echo "$(fp_target) none" >>"$DIR/states"

# ---- the daemon ----

# alive PID: the process runs (a zombie, ended but not yet reaped, does not).
alive() { [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" != Z ]; }
dead() { ! alive "$1"; }

# start_daemon [ENV...]: rocmd in the foreground on the run's sandbox, with
# the failpoint log (and the preload) when FPLOG is set, the faults in ENV;
# PID is its pid. Waits until it answers, or it ends (status 1).
start_daemon() {
	: >"$RUN/rocmd.log"
	# shellcheck disable=SC2016 # $$ is the inner shell's, which execs rocmd
	env "$@" sh -c 'export ROCMD_FAILPOINT_PID=$$; exec "$@"' sh "$ROCMD" --foreground \
		--state-dir "$STATE" --socket "$SOCK" --config "$CONF" --root "$ROOT" \
		>>"$RUN/rocmd.log" 2>&1 &
	PID=$!
	_i=0
	until ctl status >/dev/null 2>&1; do
		alive "$PID" || return 1
		_i=$((_i + 1))
		[ "$_i" -lt 600 ] || return 2
		sleep 0.05
	done
	return 0
}
# target_known: discovery has found the SDK's target (deploys name it).
target_known() { deployed_label >/dev/null; }
# lt_known: discovery has found hipBLASLt's folder (ltadd: it came back while
# rocmd was stopped; a deploy before the scan sees it deploys rocBLAS alone).
lt_known() { ctl lib status 2>/dev/null | grep -q "^sdk-1: hipBLASLt /$LTREL "; }
# gpu2_known: discovery has found the second GPU and the library serving it.
gpu2_known() { ctl --json sdk list 2>/dev/null | tr -d ' \t\n' | grep -q '"arch":"gfx803","covered":true'; }
# stop_daemon: shutdown, then the exit status in STOPPED ("exit N", "signal N",
# "hang" when it had not ended 30 s after).
stop_daemon() {
	[ -n "$PID" ] || return 0
	ctl shutdown >/dev/null 2>&1
	_i=0
	while alive "$PID"; do
		_i=$((_i + 1))
		if [ "$_i" -ge 300 ]; then
			kill -9 "$PID" 2>/dev/null
			wait "$PID" 2>/dev/null
			STOPPED=hang
			PID=
			return 1
		fi
		sleep 0.1
	done
	reap
}
# reap: the ended daemon's status into STOPPED.
reap() {
	_rc=0
	wait "$PID" 2>/dev/null || _rc=$?
	PID=
	if [ "$_rc" -gt 128 ]; then STOPPED="signal $((_rc - 128))"; else STOPPED="exit $_rc"; fi
}
on_exit() {
	if [ -n "$PID" ]; then kill -9 "$PID" 2>/dev/null; fi
}

# ---- baselines ----

# save NAME / restore NAME: the run's state and root, kept as hard links (no
# rocmd writes into a file it did not create; what it created it replaces
# whole) except the files written in place: the database and the lock file.
save() {
	rm -rf "${BASE:?}/$1"
	mkdir -p "$BASE/$1"
	cp -al "$STATE" "$ROOT" "$BASE/$1/"
	own_copies "$BASE/$1/state"
}
restore() {
	rm -rf "$STATE" "$ROOT"
	cp -al "$BASE/$1/state" "$BASE/$1/root" "$RUN/"
	own_copies "$STATE"
}
own_copies() {
	for _f in "$1"/rocmd.db "$1"/rocmd.db-wal "$1"/rocmd.db-shm "$1"/rocmd.lock; do
		[ -f "$_f" ] || continue
		cp -p "$_f" "$_f.copy" && mv "$_f.copy" "$_f"
	done
}

# ---- operations ----

# base_of OP: the baseline OP starts from.
base_of() {
	case $1 in
	import) echo fresh ;;
	deploy) echo imported ;;
	redeploy) echo deployed ;;
	rollback) echo redeployed ;;
	restore) echo rolledback ;;
	recover | finish | start | stop) echo deployed ;;
	merge) echo imported ;;
	ltadd) echo rbdeployed ;;
	esac
}
# commands OP: the rocmctl commands of OP, one a line.
commands() {
	case $1 in
	import) printf 'pkg import %s\npkg import %s\n' "$P1" "$P2" ;;
	deploy) echo "lib deploy --package 1" ;;
	redeploy) echo "lib deploy --package 2" ;;
	rollback) echo "lib rollback" ;;
	restore) echo "lib rollback --to original" ;;
	merge | ltadd) echo "lib deploy --package 1" ;;
	stop) echo "shutdown" ;;
	esac
}
# Whether OP's points are those of start-up (before the daemon answers).
at_start() { case $1 in recover | finish | start) return 0 ;; esac; return 1; }

# run_op OP [ENV...]: OP from its baseline on a daemon started with ENV (the
# fault); the commands' statuses go to $RUN/rcs, one a line. DIED is set when
# the daemon ended during the operation ("exit N" / "signal N").
run_op() {
	_op=$1
	shift
	restore "$(base_of "$_op")"
	CRASHED=
	# Directories cannot be saved with their inodes, which a journal names:
	# the interrupted redeploy is made anew for each run.
	case $_op in
	recover) crash_redeploy swap.folder ;;
	finish) crash_redeploy commit.current ;;
	merge) sandbox_gpu2 "$ROOT" ;;
	esac
	rm -f "$FPLOG" "$RUN/rcs"
	: >"$RUN/out"
	DIED=
	_st=0
	start_daemon ROCMD_FAILPOINT_LOG="$FPLOG" LD_PRELOAD="$PRELOAD" "$@" || _st=$?
	if [ "$_st" -eq 1 ]; then
		reap
		DIED=$STOPPED
		echo "mark ready" >>"$FPLOG"
		return 0
	fi
	[ "$_st" -eq 0 ] || { DIED=hang; kill -9 "$PID"; reap; return 0; }
	at_start "$_op" || harness_retry /dev/null 30 target_known
	[ "$_op" != merge ] || harness_retry /dev/null 30 gpu2_known
	[ "$_op" != ltadd ] || harness_retry /dev/null 30 lt_known
	echo "mark ready" >>"$FPLOG"
	commands "$_op" | while IFS= read -r _c; do
		_rc=0
		# shellcheck disable=SC2086 # a command line, split on purpose
		timeout 300 "$CTL" --socket "$SOCK" $_c >>"$RUN/out" 2>&1 || _rc=$?
		echo "$_rc" >>"$RUN/rcs"
	done
	echo "mark end" >>"$FPLOG"
	if [ "$_op" = stop ]; then
		_i=0
		while alive "$PID" && [ "$_i" -lt 300 ]; do
			_i=$((_i + 1))
			sleep 0.1
		done
		_hung=
		if alive "$PID"; then _hung=1; kill -9 "$PID"; fi
		reap
		DIED=$STOPPED
		[ -z "$_hung" ] || DIED=hang
		[ "$DIED" != "exit 0" ] || DIED=
	elif ! alive "$PID"; then
		reap
		DIED=$STOPPED
	fi
}

# points OP: OP's points from the counting log, "SRC N NAME" a line.
points() {
	if at_start "$1"; then
		sed -n '/^mark ready/q; /^\(fp\|db\|kp\) /p' "$BASE/$1.log"
	else
		sed -n '/^mark ready/,/^mark end/{/^\(fp\|db\|kp\) /p}' "$BASE/$1.log"
	fi | awk -v all="$ALL" '
	all == 1 { print $1, $2, $3; next }
	{ src[NR] = $1; num[NR] = $2; nm[NR] = $3 }
	function same(a, b) { return src[a] == src[b] && nm[a] == nm[b] }
	END {
		if (all == 1)
			exit
		# The middle of a run repeating one name (period 1) or two (period 2).
		m = 0
		for (i = 1; i <= NR; i++) {
			mid = 0
			for (p = 1; p <= 2; p++)
				if (i - p >= 1 && i + p <= NR && same(i - p, i) && same(i, i + p))
					mid = 1
			if (!mid)
				k[++m] = i
		}
		# Then a context (the names before and after, of the same source) seen
		# before keeps only its first and last hit.
		for (j = 1; j <= m; j++) {
			i = k[j]
			b = j > 1 && src[k[j - 1]] == src[i] ? nm[k[j - 1]] : "^"
			a = j < m && src[k[j + 1]] == src[i] ? nm[k[j + 1]] : "$"
			s = src[i] " " b " " nm[i] " " a
			if (!(s in first))
				first[s] = j
			last[s] = j
		}
		for (s in first)
			keep[first[s]] = keep[last[s]] = 1
		for (j = 1; j <= m; j++)
			if (keep[j])
				print src[k[j]], num[k[j]], nm[k[j]]
	}'
}

# crash_redeploy KILLPOINT: a redeploy on the run's sandbox, killed at
# KILLPOINT; CRASHED the target's state the kill left.
crash_redeploy() {
	start_daemon ROCMD_KILLPOINT="$1" || bail "rocmd did not start for a redeploy killed at $1"
	harness_retry /dev/null 30 target_known
	ctl lib deploy --package 2 >/dev/null 2>&1
	harness_retry /dev/null 10 dead "$PID" || bail "rocmd did not die at $1"
	reap
	[ -f "$STATE/deploy/sdk-1/journal" ] || bail "no journal after a kill at $1"
	CRASHED=$(fp_target)
}

# count OP: the counting run of OP: its log, its old and new target, and the
# baseline the next operation starts from.
count() {
	_op=$1
	restore "$(base_of "$_op")"
	fp_target >"$BASE/$_op.old"
	run_op "$_op"
	case $_op in
	recover | finish)
		# The interrupted redeploy's trees: recovery may undo it (a swap
		# journal must be; a commit journal whose files do not check out
		# too) or finish it.
		cp "$BASE/deploy.new" "$BASE/$_op.old"
		cp "$BASE/redeploy.new" "$BASE/$_op.new"
		;;
	esac
	case "$DIED" in "") ;; *)
		bail "$_op without faults: rocmd ended ($DIED)" "$RUN/rocmd.log" "$RUN/out" ;;
	esac
	if [ -f "$RUN/rcs" ] && grep -qv '^0$' "$RUN/rcs"; then
		bail "$_op without faults failed" "$RUN/out" "$RUN/rocmd.log"
	fi
	if grep -q 'error:' "$RUN/rocmd.log" || [ -f "$STATE/deploy/sdk-1/journal" ]; then
		bail "$_op without faults: an error, or a journal left" "$RUN/rocmd.log"
	fi
	cp "$FPLOG" "$BASE/$_op.log"
	_l=
	if [ "$_op" != stop ]; then
		_l=$(deployed_label) || bail "$_op: no lib status after it"
		stop_daemon
	fi
	_f=$(fp_target)
	[ -z "$_l" ] || echo "$_f $_l" >>"$DIR/states"
	case $_op in
	recover) [ "$_f" = "$(cat "$BASE/$_op.old")" ] || bail "recovery of a swap journal did not undo it" ;;
	finish) [ "$_f" = "$(cat "$BASE/$_op.new")" ] || bail "recovery of a commit journal did not finish it" ;;
	*) echo "$_f" >"$BASE/$_op.new" ;;
	esac
	# A merged tree: the vendor's gfx803 files beside the package's.
	if [ "$_op" = merge ] && ! cmp -s "$ROOT/$LIBREL/TensileLibrary_gfx803.co" "$T/$LIBREL/TensileLibrary_gfx803.co"; then
		bail "merge: the deployed library is not a merged one" "$RUN/out"
	fi
	# ltadd: the package's hipBLASLt deployed, the vendor's added to the backup.
	if [ "$_op" = ltadd ] && { ! cmp -s "$ROOT/$LTREL/hipblasltExtOpLibrary.dat" "$P1/hipblaslt/library/hipblasltExtOpLibrary.dat" ||
		[ "$(fp_originals "$STATE/deploy/sdk-1/backup/library" "$STATE/deploy/sdk-1/backup/binary" "$STATE/deploy/sdk-1/backup/hipblaslt")" != "$ORIGINALS" ]; }; then
		bail "ltadd: hipBLASLt not deployed, or its originals not added to the backup" "$RUN/out"
	fi
	case $_op in
	import) save imported ;;
	deploy) save deployed ;;
	redeploy) save redeployed ;;
	rollback) save rolledback ;;
	esac
}

# ---- one fault ----

# fault_env SRC N KIND: the environment that arms fault KIND at point SRC N.
fault_env() {
	case $3 in
	crash) _k=KILL ;; short) _k=SHORT ;; *) _k=$(echo "$3" | tr a-z A-Z) ;;
	esac
	case $1 in
	fp) echo "ROCMD_FAILPOINT=*:$2:$_k" ;;
	db) echo "ROCMD_DBFAULT=*:$2:$_k" ;;
	kp) echo "ROCMD_KILLPOINT=*:$2" ;;
	esac
}

# pkg_check: every package of the store complete; "ID" a line for each into
# $RUN/pkgs. Problems go to $RUN/why.
pkg_check() {
	: >"$RUN/pkgs"
	sqlite3 -cmd ".timeout 5000" "$DB" \
		"SELECT p.id, f.sha256, f.size FROM package p JOIN package_file f ON f.package_id = p.id WHERE f.kind = 'f' ORDER BY p.id" \
		>"$RUN/pkgfiles" 2>>"$RUN/why" || { echo "cannot read the packages" >>"$RUN/why"; return; }
	sqlite3 "$DB" "SELECT id FROM package ORDER BY id" >"$RUN/pkgs" 2>>"$RUN/why"
	tr '|' ' ' <"$RUN/pkgfiles" | while read -r id h size; do
		o=$STATE/store/objects/$(echo "$h" | cut -c1-2)/$(echo "$h" | cut -c3-)
		want=$(awk -v h="$h" '$1 == h { print $2 " " $3 }' "$DIR/objects.sums")
		got=$(cksum <"$o" 2>/dev/null | cut -d' ' -f1-2)
		[ "$got" = "$want" ] || echo "package #$id: object $h is ${got:+wrong}${got:-missing}" >>"$RUN/why"
	done
	# Objects no package lists are what a failed import left behind.
	find "$STATE/store/objects" -type f 2>/dev/null | sed 's|.*/objects/\(..\)/|\1|' | sort >"$RUN/objs"
	cut -d'|' -f2 "$RUN/pkgfiles" | sort -u | comm -23 "$RUN/objs" - | sed 's/^/unreferenced store object /' >>"$RUN/why"
	find "$STATE/store/staging" -mindepth 1 -maxdepth 1 2>/dev/null | sed 's/^/staging leftover /' >>"$RUN/why"
}

# check_target WHEN LIVE: the target is the operation's old or new tree (as
# the client's statuses allow), the daemon's view matches it; into $RUN/why.
check_target() {
	_f=$(fp_target)
	TSTATE=mix
	[ "$_f" = "$OLD" ] && TSTATE=old
	[ "$_f" = "$NEW" ] && TSTATE=new
	# A kill between the two folders' swaps (--hipblaslt) leaves one of each;
	# while a recovery that failed keeps the journal, that state stays (and
	# lib status says the target is interrupted, checked below); the restart
	# after must recover it.
	if [ "$TSTATE" = mix ] && [ "$1" = live ] && [ -n "$CRASHED" ] && [ "$_f" = "$CRASHED" ] &&
		[ -f "$STATE/deploy/sdk-1/journal" ]; then
		TSTATE=interrupted
	fi
	if [ "$TSTATE" = mix ]; then
		echo "$1: the target is neither the old nor the new tree ($(label_of "$_f" | sed 's/^$/a tree never seen/'))" >>"$RUN/why"
		ls -la "$ROOT/$LIBREL" >"$RUN/why.ls" 2>&1
	fi
	if [ "$OLD" != "$NEW" ] && [ -n "$CLIENT" ] && [ "$TSTATE" != "$CLIENT" ] && [ "$TSTATE" != mix ] &&
		[ "$TSTATE" != interrupted ]; then
		echo "$1: the client was told $(
			[ "$CLIENT" = new ] && echo done || echo failed) but the target holds the $TSTATE tree" >>"$RUN/why"
	fi
	if [ "$2" = live ]; then
		if ! _l=$(deployed_label); then
			# A crash due after the last reply may take the daemon now.
			[ "$_kind" = crash ] && dead "$PID" || echo "$1: no lib status" >>"$RUN/why"
			return
		fi
		_w=$(label_of "$_f")
		# What the database could not record it records within seconds
		# (every 5 s: DEPLOY_RECORD_RETRY_S).
		_i=0
		while [ -n "$_w" ] && [ "$_l" != "$_w" ] && [ "$_i" -lt 12 ]; do
			sleep 1
			_l=$(deployed_label) || break
			_i=$((_i + 1))
		done
		if [ -n "$_w" ] && [ "$_l" != "$_w" ]; then
			echo "$1: rocmd says package $_l is deployed, the disk holds $_w$(
				[ -f "$STATE/deploy/sdk-1/journal" ] && echo " (its journal is kept)")" >>"$RUN/why"
		fi
		# A journal that stays (a recovery that failed) is shown.
		if [ -f "$STATE/deploy/sdk-1/journal" ] && ! ctl lib status 2>/dev/null |
			grep -q '^sdk-1: a deploy of .* was interrupted at step'; then
			# A crash due after the last reply may take the daemon now.
			[ "$_kind" = crash ] && dead "$PID" ||
				echo "$1: the journal is kept but lib status does not say the target is interrupted" >>"$RUN/why"
		fi
	fi
}

# check_disk: leftovers, I1 and I4, with the daemon stopped.
check_disk() {
	find "$STATE/deploy" \( -name journal -o -name '*.tmp' \) 2>/dev/null | sed 's/^/left: /' >>"$RUN/why"
	find "$ROOT" -name '.rocmd-*' 2>/dev/null | sed 's/^/left: /' >>"$RUN/why"
	outside >"$RUN/outside"
	if ! cmp -s "$RUN/outside" "$DIR/outside.ref"; then
		diff "$DIR/outside.ref" "$RUN/outside" | grep '^[<>]' | head -n 5 | sed 's/^/outside the target: /' >>"$RUN/why"
	fi
	_b=$STATE/deploy/sdk-1/backup
	if [ -f "$_b/manifest.json" ]; then
		_o=$(fp_originals "$_b/library" "$_b/binary" "$_b/hipblaslt")
		# ltadd: rocBLAS's originals alone (before the addition's commit) or both.
		[ "$_o" = "$ORIGINALS" ] || { [ "$_op" = ltadd ] && [ "$_o" = "$ORIGINALS_RB" ]; } ||
			echo "I1: the backup of the originals differs from the vendor's files" >>"$RUN/why"
		grep -o '"sha256":[[:space:]]*"[0-9a-f]*"' "$_b/manifest.json" | sed 's/.*"\([0-9a-f]*\)"$/\1/' |
			sort >"$RUN/manifest.sha256"
		cmp -s "$RUN/manifest.sha256" "$DIR/originals.sha256" ||
			{ [ "$_op" = ltadd ] && [ "$_o" = "$ORIGINALS_RB" ] &&
				cmp -s "$RUN/manifest.sha256" "$DIR/originals-rb.sha256"; } ||
			echo "I1: the backup's manifest does not record the vendor's hashes" >>"$RUN/why"
	fi
	_ic=$(sqlite3 "$DB" 'PRAGMA integrity_check' 2>&1)
	[ "$_ic" = ok ] || echo "integrity_check: $(echo "$_ic" | head -n 3 | tr '\n' ' ')" >>"$RUN/why"
	_fk=$(sqlite3 "$DB" 'PRAGMA foreign_key_check' 2>&1)
	[ -z "$_fk" ] || echo "foreign_key_check: $(echo "$_fk" | head -n 3 | tr '\n' ' ')" >>"$RUN/why"
}

# fault OP SRC N NAME KIND: one run; its verdict is a line of $DIR/results.
fault() {
	_op=$1 _src=$2 _n=$3 _name=$4 _kind=$5
	OLD=$(cat "$BASE/$_op.old")
	NEW=$(cat "$BASE/$_op.new")
	: >"$RUN/why"
	# shellcheck disable=SC2046 # one VAR=VALUE word
	run_op "$_op" $(fault_env "$_src" "$_n" "$_kind")
	# A hit the counting run made before the daemon answered (a write of
	# start-up's events) may come just after it in this run.
	if at_start "$_op" && [ -n "$PID" ]; then
		harness_retry /dev/null 3 grep -q "^fired $_src " "$FPLOG"
	fi
	_fired=$(grep "^fired $_src " "$FPLOG" 2>/dev/null | head -n 1 | cut -d' ' -f4)
	# A crash that fired after the last reply (a later write) is on its way.
	if [ "$_kind" = crash ] && [ -n "$_fired" ] && [ -n "$PID" ]; then
		harness_retry /dev/null 10 dead "$PID"
		if dead "$PID"; then reap; DIED=$STOPPED; fi
	fi
	_reached=moved
	[ -n "$_fired" ] || _reached=unreached
	[ "$_fired" != "$_name" ] || _reached=yes
	! grep -q '^short write not applied' "$FPLOG" 2>/dev/null || _reached=noshort
	# What the client was told: all commands done means the new tree, a
	# failure (not a lost daemon) the old one; after a crash either.
	CLIENT=
	if [ "$_kind" != crash ] && [ -f "$RUN/rcs" ]; then
		if grep -qv '^0$' "$RUN/rcs"; then CLIENT=old; else CLIENT=new; fi
		# "in place ... and verified, but the database could not record
		# it" (ROCMD_EDB: recorded within seconds) tells of the new tree.
		! grep -q 'and verified, but the database could not record it' "$RUN/out" || CLIENT=new
	fi
	case "$DIED" in
	"") ;;
	"signal 9") [ "$_kind" = crash ] || echo "rocmd was killed" >>"$RUN/why" ;;
	hang) echo "rocmd hung" >>"$RUN/why" ;;
	"signal "*) echo "rocmd died of $DIED" >>"$RUN/why" ;;
	*)
		# A start or a stop that fails on an I/O error may end the daemon
		# with an error status (and a message).
		at_start "$_op" || [ "$_op" = stop ] || echo "rocmd ended ($DIED)" >>"$RUN/why"
		;;
	esac
	if [ -n "$PID" ]; then
		check_target "live" live
		stop_daemon || echo "rocmd hung at shutdown" >>"$RUN/why"
		case "$STOPPED" in "exit 0" | "exit 1") ;; *) echo "rocmd shut down with $STOPPED" >>"$RUN/why" ;; esac
	fi
	# Recovery by a clean start.
	if ! start_daemon; then
		echo "rocmd does not start after the fault" >>"$RUN/why"
		[ -z "$PID" ] || { kill -9 "$PID"; reap; }
	else
		harness_retry /dev/null 30 target_known || echo "after restart: no target" >>"$RUN/why"
		check_target "after restart" live
		if [ "$_op" = import ]; then
			pkg_check
			# A package whose import said done is there; one whose import
			# said failed is not.
			_i=0
			for p in "$P1" "$P2"; do
				_i=$((_i + 1))
				_rc=$(sed -n "${_i}p" "$RUN/rcs" 2>/dev/null)
				_has=$(sqlite3 -cmd ".timeout 5000" "$DB" "SELECT count(*) FROM package WHERE name = '$(basename "$p")'")
				[ "$_kind" = crash ] || [ "$_rc" != 0 ] || [ "$_has" = 1 ] ||
					echo "pkg import $(basename "$p") said done, but the store lacks it" >>"$RUN/why"
				[ "$_kind" = crash ] || [ "$_rc" = 0 ] || [ -z "$_rc" ] || [ "$_has" = 0 ] ||
					echo "pkg import $(basename "$p") said failed, but the store holds it" >>"$RUN/why"
			done
		fi
		# A retry of what failed succeeds.
		if [ "$RETRY" -eq 1 ]; then
			case $_op in
			import)
				for p in "$P1" "$P2"; do
					ctl pkg import "$p" >"$RUN/retry" 2>&1 ||
						{ echo "retry: pkg import $(basename "$p") fails: $(tail -n 1 "$RUN/retry")" >>"$RUN/why"; }
				done
				[ "$(sqlite3 -cmd ".timeout 5000" "$DB" "SELECT count(*) FROM package")" = 2 ] ||
					echo "retry: the store does not hold both packages" >>"$RUN/why"
				;;
			deploy | redeploy | rollback | restore | merge | ltadd)
				if [ "$TSTATE" = old ]; then
					commands "$_op" >"$RUN/cmd"
					# shellcheck disable=SC2046
					ctl $(cat "$RUN/cmd") >"$RUN/retry" 2>&1 ||
						echo "retry: $(cat "$RUN/cmd") fails: $(tail -n 1 "$RUN/retry")" >>"$RUN/why"
					[ "$(fp_target)" = "$NEW" ] || echo "retry: not the new tree" >>"$RUN/why"
				fi
				;;
			esac
		fi
		stop_daemon || echo "rocmd hung at shutdown after the restart" >>"$RUN/why"
	fi
	check_disk
	if [ -s "$RUN/why" ]; then
		_v=INCONSISTENT
		mkdir -p "$DIR/failed"
		_keep=$DIR/failed/$_op-$_src-$_n-$_kind
		mkdir -p "$_keep" && cp "$RUN/why" "$RUN/out" "$RUN/rocmd.log" "$FPLOG" "$_keep/" 2>/dev/null
	else
		_v=ok
	fi
	printf '%s %s %s %s %s %s %s\n' "$_op" "$_src" "$_n" "$_name" "$_kind" "$_v" "$_reached" >>"$DIR/results"
	if [ "$_v" != ok ]; then
		printf '# INCONSISTENT %s %s:%s (%s) %s: %s\n' "$_op" "$_src" "$_n" "$_name" "$_kind" \
			"$(tr '\n' ';' <"$RUN/why" | sed 's/;$//; s/;/; /g')"
	fi
}

# ---- main ----

NOW=$(date +%s)
echo "# rocmd fault harness, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
# Every baseline an operation needs, in order.
need=""
for o in $OPS; do
	case $o in
	import) need="$need import" ;;
	deploy) need="$need import deploy" ;;
	redeploy | start | stop) need="$need import deploy redeploy" ;;
	rollback) need="$need import deploy redeploy rollback" ;;
	restore) need="$need import deploy redeploy rollback restore" ;;
	recover | finish) need="$need import deploy redeploy" ;;
	merge) need="$need import" ;;
	ltadd)
		[ "$LT" = 1 ] || bail "--ops ltadd needs --hipblaslt"
		need="$need import"
		;;
	esac
	need="$need $o"
done
# Fresh: a state folder rocmd has started on once.
start_daemon || bail "rocmd does not start" "$RUN/rocmd.log"
stop_daemon
save fresh
for o in $OPS_ALL; do
	case " $need " in *" $o "*) ;; *) continue ;; esac
	# ltadd's baseline: package #3 (rocBLAS alone) imported and deployed
	# while the SDK had no hipBLASLt folder (moved aside: its files keep
	# their inodes), which then came back, as an SDK update adding hipBLASLt
	# does, and was found; no faults.
	if [ "$o" = ltadd ]; then
		restore imported
		mv "$ROOT/$LTREL" "$RUN/lt-aside"
		start_daemon || bail "rocmd does not start for ltadd's baseline" "$RUN/rocmd.log"
		harness_retry /dev/null 30 target_known
		ctl pkg import "$P3" >/dev/null 2>&1 && ctl lib deploy --package 3 >/dev/null 2>&1 ||
			bail "ltadd's baseline: package #3 not deployed" "$RUN/rocmd.log"
		[ "$(deployed_label)" = 3 ] || bail "ltadd's baseline: lib status does not say #3"
		stop_daemon
		mv "$RUN/lt-aside" "$ROOT/$LTREL"
		# Discovery records the folder before the baseline is saved: in the
		# runs it is known at the first ask, so their hits before the deploy
		# are the same in number as the counting run's.
		start_daemon || bail "rocmd does not start for ltadd's baseline" "$RUN/rocmd.log"
		harness_retry /dev/null 30 lt_known || bail "ltadd's baseline: hipBLASLt's folder not found" "$RUN/rocmd.log"
		stop_daemon
		_b=$STATE/deploy/sdk-1/backup
		[ ! -e "$_b/hipblaslt" ] || bail "ltadd's baseline: the backup holds hipBLASLt already"
		ORIGINALS_RB=$(fp_originals "$_b/library" "$_b/binary" "$_b/hipblaslt")
		{ (cd "$T/$LIBREL" && find . -type f -exec sha256sum {} + && sha256sum <"$T/$BINREL"); } |
			cut -d' ' -f1 | sort >"$DIR/originals-rb.sha256"
		grep -o '"sha256":[[:space:]]*"[0-9a-f]*"' "$_b/manifest.json" | sed 's/.*"\([0-9a-f]*\)"$/\1/' |
			sort | cmp -s - "$DIR/originals-rb.sha256" ||
			bail "ltadd's baseline: the backup's manifest is not rocBLAS's originals"
		echo "$(fp_target) 3" >>"$DIR/states"
		save rbdeployed
	fi
	count "$o"
done
: >"$DIR/results"
: >"$DIR/plan"
for o in $OPS; do
	points "$o" >"$BASE/$o.points"
	if at_start "$o"; then
		hits=$(sed -n '1,/^mark ready/p' "$BASE/$o.log" | grep -c '^\(fp\|db\|kp\) ')
	else
		hits=$(sed -n '/^mark ready/,/^mark end/p' "$BASE/$o.log" | grep -c '^\(fp\|db\|kp\) ')
	fi
	np=$(wc -l <"$BASE/$o.points")
	echo "# $o: $hits hits, $np points ($(cut -d' ' -f1 "$BASE/$o.points" | sort | uniq -c | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }'))"
	if [ "$MAX" -gt 0 ] && [ "$np" -gt "$MAX" ]; then
		awk -v n="$np" -v m="$MAX" 'BEGIN { for (i = 0; i < m; i++) want[int(i * (n - 1) / (m - 1)) + 1] = 1 }
			want[NR]' "$BASE/$o.points"
	else
		cat "$BASE/$o.points"
	fi | while read -r src num name; do
		case " $SRCS " in *" $src "*) ;; *) continue ;; esac
		for k in $KINDS; do
			[ "$src" != kp ] || [ "$k" = crash ] || continue
			[ "$k" != short ] || case $name in *.write) ;; *) continue ;; esac
			echo "$o $src $num $name $k"
		done
	done >>"$DIR/plan"
done
if [ -n "$ONLY" ]; then
	echo "$ONLY" | tr ':' ' ' | while read -r o s n k; do
		name=$(awk -v s="$s" -v n="$n" '$1 == s && $2 == n { print $3; exit }' "$BASE/$o.log")
		echo "$o $s $n ${name:-?} $k"
	done >"$DIR/plan"
fi
if [ "$LIST" -eq 1 ]; then
	for o in $OPS; do sed "s/^/$o /" "$BASE/$o.points"; done
	[ -z "$FAULT_KEEP" ] || { mkdir -p "$FAULT_KEEP" && cp "$BASE"/*.log "$FAULT_KEEP/"; }
	exit 0
fi
total=$(wc -l <"$DIR/plan")
echo "# $total runs; setup took $(($(date +%s) - NOW)) s"
i=0
while read -r o s n name k; do
	i=$((i + 1))
	fault "$o" "$s" "$n" "$name" "$k"
	[ $((i % 50)) -ne 0 ] || echo "# $i/$total runs, $(($(date +%s) - NOW)) s"
done <"$DIR/plan"
[ -z "$PID" ] || { kill -9 "$PID"; reap; }

# ---- the table ----
echo
echo "points x kinds: consistent runs / runs"
awk -v kinds="$KINDS" '
{
	row = $1 " " ($2 == "kp" ? "kp:" $4 : $4)
	rows[row] = 1
	runs[row, $5]++
	if ($6 == "ok") okc[row, $5]++
	if ($7 != "yes") moved[$7]++
	tr[$5]++
	if ($6 == "ok") tok[$5]++
}
END {
	nk = split(kinds, K, " ")
	printf "%-9s %-17s", "op", "point"
	for (i = 1; i <= nk; i++) printf " %9s", K[i]
	printf "\n"
	n = 0
	for (r in rows) R[++n] = r
	for (i = 1; i <= n; i++)
		for (j = i + 1; j <= n; j++)
			if (R[j] < R[i]) { t = R[i]; R[i] = R[j]; R[j] = t }
	for (i = 1; i <= n; i++) {
		split(R[i], f, " ")
		printf "%-9s %-17s", f[1], f[2]
		for (j = 1; j <= nk; j++)
			if ((R[i], K[j]) in runs) printf " %9s", (okc[R[i], K[j]] + 0) "/" runs[R[i], K[j]]
			else printf " %9s", "-"
		printf "\n"
	}
	printf "%-27s", "total"
	for (j = 1; j <= nk; j++) printf " %9s", (tok[K[j]] + 0) "/" (tr[K[j]] + 0)
	printf "\n"
	for (m in moved) printf "%s: %d runs\n", m, moved[m]
}' "$DIR/results"
# Runs whose fault did not land where counted (the daemon's order of
# operations differed from the counting run's), or not at all.
awk '$7 != "yes" { w = $7 == "moved" ? "the hit was another point" : $7 == "noshort" ? "no short write (not a write)" : "no such hit"
	printf "  %s:%s:%s:%s (%s): %s\n", $1, $2, $3, $5, $4, w }' "$DIR/results"
[ -z "$FAULT_KEEP" ] || { mkdir -p "$FAULT_KEEP" && cp "$DIR/results" "$DIR/plan" "$BASE"/*.log "$FAULT_KEEP/"; }
bad_runs=$(grep -c ' INCONSISTENT ' "$DIR/results")
ok_runs=$(grep -c ' ok ' "$DIR/results")
echo "consistent: $ok_runs of $total runs; $(($(date +%s) - NOW)) s"
if [ "$bad_runs" -gt 0 ]; then
	echo "inconsistent runs (repeat one with: $0 --only OP:SRC:N:KIND $ROCMD $CTL $PRELOAD):"
	grep ' INCONSISTENT ' "$DIR/results" | while read -r o s n name k v r; do
		echo "  $o:$s:$n:$k ($name): $(tr '\n' ';' <"$DIR/failed/$o-$s-$n-$k/why" | sed 's/;$//; s/;/; /g')"
	done
	[ -z "$FAULT_KEEP" ] || { mkdir -p "$FAULT_KEEP" && cp -a "$DIR/failed" "$FAULT_KEEP/" && echo "kept in $FAULT_KEEP/failed"; }
	exit 1
fi
exit 0
