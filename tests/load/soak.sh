#!/bin/sh
# tests/load/soak.sh: load and soak of the real rocmd, on a private socket
# (loopback only) and the sandbox of test-lib-daemon (Debian trixie's HIP and
# rocBLAS tree under --root, a gfx1030 in a fake KFD topology, two packages
# of the real rocBLAS files). In one run:
#   1. load: CLIENTS connections send REQUESTS status requests in all
#      (bench/ipc/ipc-load) while a deploy, a redeploy and a rollback run and
#      a tuning job (CPU backend) runs; RSS is sampled throughout;
#   2. cycles: CYCLES start/stop cycles of the daemon (start until it
#      answers, status, shutdown, exit);
#   3. SIGTERM during each kind of job (import, deploy, scan, tune), TERMS
#      times each: the daemon must exit in time, the client must not hang,
#      and the restart must find the target old or new, no journal, the
#      store complete and the database sound;
#   4. the memory flood: FLOOD connections each write 873 events.list
#      {"limit":1000} requests over 1,000 stored events of 600 bytes (about
#      700 KB a reply) in one go and never read (tests/load/soak-flood.c),
#      while another client's status requests are timed;
#   5. connection exhaustion, as uid 65534: connections up to the per-user
#      limit (64) with the default configuration, then, with the per-user
#      limit lifted, up to ipc.max_connections; root's status and shutdown
#      must still work.
# Checks: the daemon's own memory (RssAnon: its heap and stacks, what it
# allocates) under ANON_LIMIT (MB) in every phase, and its growth in the
# flood under FLOOD_LIMIT (MB; by default 24 per flooding connection, three
# times the 8 MB of ipc.max_queued_output). VmRSS is printed too, but it also
# counts the pages of files rocmd maps to read them (TensileLibrary.dat,
# 117 MB here), which belong to the page cache. The same descriptor count before and after
# the load and the adversarial phases, zero hangs (any command or exit over
# its time limit), zero errors. Prints the figures and exits 1 on any failure.
#
# usage: tests/load/soak.sh [--quick] [--clients N] [--requests N] [--cycles N]
#            [--terms N] [--flood N] [--anon-limit MB] [--flood-limit MB] [BUILD_DIR]
#   --quick   200 clients, 20,000 requests, 20 cycles, 1 SIGTERM per job kind,
#             2 flood connections (about a minute; ctest test-soak runs it)
# Exits 77 without the real SDK tree (tests/fixtures/make-trees.sh).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/harness.sh"
. "$HERE/../fault/sandbox.sh"

CLIENTS=1000
REQUESTS=100000
CYCLES=200
TERMS=5
FLOOD=6
ANON_LIMIT=64
FLOOD_LIMIT=
BUILD=build
usage() { sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) CLIENTS=200 REQUESTS=20000 CYCLES=20 TERMS=1 FLOOD=2 ;;
	--clients) CLIENTS=$2; shift ;;
	--requests) REQUESTS=$2; shift ;;
	--cycles) CYCLES=$2; shift ;;
	--terms) TERMS=$2; shift ;;
	--flood) FLOOD=$2; shift ;;
	--anon-limit) ANON_LIMIT=$2; shift ;;
	--flood-limit) FLOOD_LIMIT=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "soak.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) BUILD=$1 ;;
	esac
	shift
done
FLOOD_LIMIT=${FLOOD_LIMIT:-$((FLOOD * 24))}
ROCMD=$BUILD/daemon/rocmd
CTL=$BUILD/client/rocmctl
LOAD=$BUILD/bench/ipc-load
FLOODER=$BUILD/tests/load/soak-flood
for f in "$ROCMD" "$CTL" "$LOAD" "$FLOODER"; do
	[ -x "$f" ] || { echo "soak.sh: $f not built (cmake --build $BUILD)" >&2; exit 2; }
done
for t in sqlite3 setpriv timeout; do
	command -v $t >/dev/null 2>&1 || { echo "soak.sh: $t missing" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "soak.sh: needs root (a second user for the exhaustion case)" >&2; exit 2; }
sandbox_check || exit 77
harness_init soak
ROOT=$DIR/root
DB=$STATE/rocmd.db
PID=
FAILS=0
fail() { FAILS=$((FAILS + 1)); echo "FAIL: $*"; }
export ROCMD_CLIENT_TIMEOUT_S=60

# ---- the sandbox ----
mkdir -p "$DIR/pkg"
sandbox_root "$ROOT"
P1=$DIR/pkg/rocm.gfx1030.V3.for.hip.sdk.5.7
P2=$DIR/pkg/rocm.gfx1030.V2.0.for.hip.sdk.5.7
sandbox_pkg "$P1" "package one" binary
sandbox_pkg "$P2" "package two"
# Built-in defaults but for the sandbox's needs: no GPU probe or smoke test,
# no automatic deploys, tuning only when asked, on the CPU backend.
conf() { # conf [IPC-JSON]
	printf '{"sdk": {"debounce_ms": 300, "probe_timeout_ms": 0}, "deploy": {"sync": "off", "smoke_timeout_ms": 0}, "tune": {"enabled": 0, "backend": "cpu"}%s}\n' \
		"${1:+, \"ipc\": $1}" >"$CONF"
}
conf

# ---- the daemon ----
alive() { [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" != Z ]; }
dead() { ! alive "$1"; }
# start: rocmd in the foreground; PID; until it answers (10 s).
start() {
	"$ROCMD" --foreground --state-dir "$STATE" --socket "$SOCK" --config "$CONF" --root "$ROOT" \
		>>"$DIR/rocmd.log" 2>&1 &
	PID=$!
	_i=0
	until ctl status >/dev/null 2>&1; do
		alive "$PID" || { wait "$PID"; PID=; return 1; }
		_i=$((_i + 1))
		[ "$_i" -lt 200 ] || return 2
		sleep 0.05
	done
}
# finish SECONDS: waits for the daemon to end; STATUS its exit status, 0 on a hang (killed).
finish() {
	if harness_retry /dev/null "$1" dead "$PID"; then
		STATUS=0
		wait "$PID" || STATUS=$?
		PID=
		return 0
	fi
	kill -9 "$PID"
	wait "$PID" 2>/dev/null
	PID=
	STATUS=hang
	return 1
}
stop() { ctl shutdown >/dev/null 2>&1; finish 20; }
on_exit() { [ -z "$PID" ] || kill -9 "$PID" 2>/dev/null; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$PID/status" 2>/dev/null; }
anon_kb() { awk '/^RssAnon:/ { print $2 }' "/proc/$PID/status" 2>/dev/null; }
fds() { find "/proc/$PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# settled_fds: the descriptor count once it holds still for 0.5 s (a client
# that just left may still be closing).
settled_fds() {
	_a=$(fds)
	for _i in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.5
		_b=$(fds)
		[ "$_a" != "$_b" ] || break
		_a=$_b
	done
	echo "$_a"
}
fd_list() { ls -l "/proc/$PID/fd" 2>/dev/null | awk 'NR > 1 { print $NF }' | sed 's/[0-9]\{3,\}/N/g' | sort; }
# sample_rss FILE: the daemon's "VmRSS RssAnon" (kB) every 0.1 s into FILE
# until SAMPLER is killed.
sample_rss() {
	: >"$1"
	(while alive "$PID"; do
		awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } END { if (r != "") print r, a }' \
			"/proc/$PID/status" >>"$1" 2>/dev/null
		sleep 0.1
	done) &
	SAMPLER=$!
}
max_of() { cut -d' ' -f"${2:-1}" "$1" | sort -n | tail -n 1; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
check_anon() { # check_anon WHAT KB
	[ -n "$2" ] || { fail "$1: no memory sample"; return; }
	[ "$2" -le $((ANON_LIMIT * 1024)) ] || fail "$1: RssAnon $(mb "$2") MB over the bound of $ANON_LIMIT MB"
}
tune_state() { ctl --json tune status 2>/dev/null | jstr state; }
tuning_now() { [ "$(tune_state)" = tuning ]; }
tune_idle() { [ "$(ctl --json tune status 2>/dev/null | tr -d '\n\t ' | grep -o '"running":[0-9]*' | head -n 1)" = '"running":0' ]; }
# pct FILE COLUMN P: the P-th percentile of a column of numbers.
pct() { cut -d' ' -f"$2" "$1" | sort -n | awk -v p="$3" '{ v[NR] = $1 } END { i = int((NR - 1) * p / 100) + 1; print v[i] + 0 }'; }
# target_sound WHAT: the target is what rocmd says it holds: a deployed
# package verifies (every file's hash), the originals are the vendor's tree.
target_sound() {
	_d=$(ctl --json lib status | tr -d '\n\t ' | grep -o '"deployed":{[^}]*}')
	if [ -n "$_d" ]; then
		ctl lib verify sdk-1 >"$DIR/lverify.out" 2>&1 || fail "$1: the deployed package does not verify: $(tail -n 1 "$DIR/lverify.out")"
	elif ! diff -r --no-dereference "$T/$LIBREL" "$ROOT/$LIBREL" >/dev/null 2>&1 ||
		! cmp -s "$T/$BINREL" "$ROOT/$BINREL"; then
		fail "$1: nothing is deployed, but the target is not the vendor's tree"
	fi
}

echo "== rocmd load and soak, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rocmd: $("$ROCMD" --version 2>/dev/null | head -n 1); bounds: RssAnon $ANON_LIMIT MB, its growth in the flood $FLOOD_LIMIT MB"
start || bail "rocmd did not start" "$DIR/rocmd.log"
harness_retry /dev/null 30 sh -c "\"$CTL\" --socket \"$SOCK\" lib status | grep -q sdk-1" || bail "no SDK target"
check "import package 1" 0 ctl pkg import "$P1"
check "import package 2" 0 ctl pkg import "$P2"
FD0=$(settled_fds)
fd_list >"$DIR/fds.0"
RSS0=$(rss_kb)
ANON0=$(anon_kb)
echo "rocmd pid $PID after start and two imports: VmRSS $(mb "$RSS0") MB, RssAnon $(mb "$ANON0") MB, $FD0 descriptors"

# ---- 1. load while a deploy and a tuning job run ----
echo
echo "== 1. $CLIENTS clients, $REQUESTS status requests (ipc-load -c $CLIENTS -n $REQUESTS), while deploys and a CPU tuning job run"
ctl tune add 256x256x256 --budget 100000 >/dev/null 2>&1 || fail "tune add"
ctl tune start >/dev/null 2>&1 || fail "tune start"
harness_retry /dev/null 30 tuning_now || fail "the tuning job did not start"
sample_rss "$DIR/rss.load"
# The deploys, one after the other, for as long as the load runs.
(
	i=0
	while [ ! -f "$DIR/load.done" ]; do
		case $((i % 3)) in
		0) c="lib deploy --package 1" ;;
		1) c="lib deploy --package 2" ;;
		*) c="lib rollback" ;;
		esac
		# shellcheck disable=SC2086
		if timeout 120 "$CTL" --socket "$SOCK" $c >>"$DIR/deploys.out" 2>&1; then
			echo ok >>"$DIR/deploys"
		else
			echo "failed: $c" >>"$DIR/deploys"
		fi
		i=$((i + 1))
	done
) &
DEPLOYER=$!
sleep 0.5
t0=$(date +%s.%N)
timeout 600 "$LOAD" -s "$SOCK" -c "$CLIENTS" -n "$REQUESTS" --json >"$DIR/load.json" 2>"$DIR/load.err"
lrc=$?
t1=$(date +%s.%N)
touch "$DIR/load.done"
wait "$DEPLOYER"
tune_during=$(tune_state)
evals=$(ctl --json tune status | jnum evaluations)
ctl tune pause >/dev/null 2>&1
js=$(cat "$DIR/load.json")
json_num() { printf '%s\n' "$1" | sed -n "s/.*\"$2\":\([-0-9.eE+]*\).*/\1/p"; }
done_req=$(json_num "$js" requests)
errs=$(json_num "$js" errors)
rpc_errs=$(json_num "$js" rpc_errors)
lost=$(json_num "$js" lost)
connected=$(json_num "$js" connected)
maxus=$(json_num "$js" max_us)
ndep=$(grep -c . "$DIR/deploys" 2>/dev/null || echo 0)
nfail=$(grep -c '^failed' "$DIR/deploys" 2>/dev/null || true)
sleep 1
kill "$SAMPLER" 2>/dev/null
wait "$SAMPLER" 2>/dev/null
RSS1=$(max_of "$DIR/rss.load" 1)
ANON1=$(max_of "$DIR/rss.load" 2)
printf 'connected %s/%s, requests %s, errors %s, rpc errors %s, lost %s, in %.1f s\n' "$connected" \
	"$CLIENTS" "$done_req" "$errs" "$rpc_errs" "$lost" "$(echo "$t1 - $t0" | bc)"
printf 'latency p50 %s us, p99 %s us, max %s us\n' "$(json_num "$js" p50_us)" "$(json_num "$js" p99_us)" "$maxus"
echo "deploys/rollbacks during the load: $ndep, failed $nfail; tuning: $tune_during, $evals evaluations"
[ "$lrc" -eq 0 ] && [ "$done_req" = "$REQUESTS" ] && [ "$errs" = 0 ] && [ "$rpc_errs" = 0 ] ||
	fail "load: $done_req of $REQUESTS requests, $errs errors, exit $lrc $(head -n 3 "$DIR/load.err")"
[ "$nfail" = 0 ] || fail "load: $nfail deploys failed: $(grep -m 2 -i 'error\|fail' "$DIR/deploys.out")"
[ "$tune_during" = tuning ] || [ "$tune_during" = yielding ] || fail "load: tuning was $tune_during"
# A request unanswered for 10 s is a hang.
awk -v m="${maxus:-0}" 'BEGIN { exit !(m < 10000000) }' || fail "load: a request took $maxus us"
harness_retry /dev/null 30 tune_idle || fail "load: the tuning job did not pause"
FD1=$(settled_fds)
fd_list >"$DIR/fds.1"
echo "memory: RssAnon before $(mb "$ANON0") MB, max during the load $(mb "$ANON1") MB, after $(mb "$(anon_kb)") MB; VmRSS max $(mb "$RSS1") MB; descriptors before $FD0, after $FD1"
check_anon "load" "$ANON1"
[ "$FD1" -eq "$FD0" ] || fail "load: $FD0 descriptors before, $FD1 after: $(diff "$DIR/fds.0" "$DIR/fds.1" | grep '^[<>]' | head -n 5 | tr '\n' ' ')"
stop || fail "shutdown after the load: hang"
[ "$STATUS" = 0 ] || fail "shutdown after the load: exit $STATUS"

# ---- 2. start/stop cycles ----
echo
echo "== 2. $CYCLES start/stop cycles"
: >"$DIR/cycles"
hangs=0 bad=0
for i in $(seq "$CYCLES"); do
	a=$(date +%s%N)
	if ! start; then
		bad=$((bad + 1))
		[ -z "$PID" ] || { kill -9 "$PID"; wait "$PID" 2>/dev/null; PID=; }
		continue
	fi
	b=$(date +%s%N)
	ctl status >/dev/null 2>&1 || bad=$((bad + 1))
	r="$(rss_kb) $(anon_kb)"
	ctl shutdown >/dev/null 2>&1
	if ! finish 20; then hangs=$((hangs + 1)); fi
	c=$(date +%s%N)
	[ "$STATUS" = 0 ] || [ "$STATUS" = hang ] || bad=$((bad + 1))
	echo "$(((b - a) / 1000000)) $(((c - b) / 1000000)) $r" >>"$DIR/cycles"
done
echo "start to first answer: p50 $(pct "$DIR/cycles" 1 50) ms, max $(pct "$DIR/cycles" 1 100) ms; status, shutdown and exit: p50 $(pct "$DIR/cycles" 2 50) ms, max $(pct "$DIR/cycles" 2 100) ms; RssAnon max $(mb "$(pct "$DIR/cycles" 4 100)") MB, VmRSS max $(mb "$(pct "$DIR/cycles" 3 100)") MB"
echo "cycles: $(wc -l <"$DIR/cycles") of $CYCLES, hangs $hangs, failures $bad"
[ "$hangs" -eq 0 ] || fail "cycles: $hangs hangs"
[ "$bad" -eq 0 ] || fail "cycles: $bad failed starts or stops"
check_anon "cycles" "$(pct "$DIR/cycles" 4 100)"
ic=$(sqlite3 "$DB" 'PRAGMA integrity_check')
[ "$ic" = ok ] || fail "cycles: integrity_check: $ic"

# ---- 3. SIGTERM during each kind of job ----
echo
echo "== 3. SIGTERM during each kind of job, $TERMS each"
# term_during KIND: starts a job of KIND, SIGTERMs the daemon once it runs,
# then checks the restart; a line "KIND exit-status seconds client-status".
term_during() {
	start || { fail "SIGTERM $1: rocmd did not start"; return; }
	harness_retry /dev/null 30 sh -c "\"$CTL\" --socket \"$SOCK\" lib status | grep -q sdk-1"
	case $1 in
	import)
		p=$DIR/pkg/rocm.gfx1030.V3.1.$$.$(date +%s%N).for.hip.sdk.5.7
		sandbox_pkg "$p" "package $p" binary
		cmd="pkg import $p"
		;;
	deploy)
		cur=$(ctl --json lib status | tr -d '\n\t ' | grep -o '"deployed":{[^}]*}' | grep -o '"package":[0-9]*' | cut -d: -f2)
		[ "$cur" = 1 ] && cmd="lib deploy --package 2" || cmd="lib deploy --package 1"
		;;
	scan) cmd="sdk rescan" ;;
	tune)
		ctl tune add 128x128x128 --budget 100000 >/dev/null 2>&1
		cmd="tune start"
		;;
	esac
	# shellcheck disable=SC2086
	timeout 60 "$CTL" --socket "$SOCK" $cmd >"$DIR/term.out" 2>&1 &
	client=$!
	case $1 in
	tune) harness_retry /dev/null 20 sh -c "\"$CTL\" --socket \"$SOCK\" --json tune status | grep -q '\"state\":[[:space:]]*\"tuning\"'" ;;
	scan) ;;
	*) sleep 0.4 ;;
	esac
	a=$(date +%s%N)
	kill -TERM "$PID"
	finish 30 || fail "SIGTERM during $1: rocmd had not ended after 30 s"
	b=$(date +%s%N)
	crc=0
	if harness_retry /dev/null 15 dead "$client"; then wait "$client" || crc=$?; else
		crc=hang
		kill "$client"
		fail "SIGTERM during $1: the client hung"
	fi
	[ "$STATUS" = 0 ] || fail "SIGTERM during $1: rocmd exited with $STATUS"
	echo "$1 $STATUS $(((b - a) / 1000000)) $crc" >>"$DIR/terms"
	# The restart finds a sound state.
	start || { fail "SIGTERM during $1: no restart"; return; }
	harness_retry /dev/null 30 sh -c "\"$CTL\" --socket \"$SOCK\" lib status | grep -q sdk-1"
	[ ! -f "$STATE/deploy/sdk-1/journal" ] || fail "SIGTERM during $1: a journal is left after the restart"
	[ -z "$(find "$ROOT" -name '.rocmd-*')" ] || fail "SIGTERM during $1: leftovers $(find "$ROOT" -name '.rocmd-*' | head -n 2)"
	[ -z "$(find "$STATE/store/staging" -mindepth 1 2>/dev/null)" ] || fail "SIGTERM during $1: the store's staging folder is not empty"
	case $1 in
	import)
		for id in $(sqlite3 "$DB" 'SELECT id FROM package'); do
			ctl pkg verify "$id" >"$DIR/verify.out" 2>&1 || fail "SIGTERM during $1: package #$id does not verify: $(tail -n 1 "$DIR/verify.out")"
		done
		;;
	deploy) target_sound "SIGTERM during deploy" ;;
	esac
	stop || fail "SIGTERM during $1: the restarted daemon hung at shutdown"
	ic=$(sqlite3 "$DB" 'PRAGMA integrity_check')
	[ "$ic" = ok ] || fail "SIGTERM during $1: integrity_check: $ic"
}
: >"$DIR/terms"
for k in import deploy scan tune; do
	for i in $(seq "$TERMS"); do term_during "$k"; done
done
awk '{ n[$1]++; if ($3 > m[$1]) m[$1] = $3; s[$1] += $3 }
	END { for (k in n) printf "%-7s %d runs, exit after SIGTERM: mean %d ms, max %d ms\n", k, n[k], s[k] / n[k], m[k] }' "$DIR/terms" | sort
echo "client exits: $(cut -d' ' -f4 "$DIR/terms" | sort | uniq -c | awk '{ printf "%s%d x status %s", (NR > 1 ? ", " : ""), $1, $2 }')"

# ---- 4. memory flood ----
echo
echo "== 4. memory flood: $FLOOD connections x 873 events.list {\"limit\":1000} in one write, never read"
# 1,000 events of 600 bytes: each reply is about 700 KB.
sqlite3 "$DB" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
	INSERT INTO event (time_ms, kind, message) SELECT 1700000000000 + i, 'soak.flood', printf('%.600c', 'x') FROM n" ||
	fail "flood: cannot store the events"
start || bail "rocmd did not start for the flood" "$DIR/rocmd.log"
FDF0=$(settled_fds)
RSSF0=$(anon_kb)
sample_rss "$DIR/rss.flood"
"$FLOODER" -s "$SOCK" -c "$FLOOD" -n 873 -t 8 >"$DIR/flood.json" 2>"$DIR/flood.err" &
FL=$!
sleep 1
# Another client meanwhile: 200 status requests, one at a time.
"$LOAD" -s "$SOCK" -c 1 -n 200 --json >"$DIR/witness.json" 2>&1 || fail "flood: the other client got no answers"
RSSF1=$(anon_kb)
wait "$FL"
sleep 1
kill "$SAMPLER" 2>/dev/null
wait "$SAMPLER" 2>/dev/null
RSSFMAX=$(max_of "$DIR/rss.flood" 2)
VMFMAX=$(max_of "$DIR/rss.flood" 1)
FDF1=$(settled_fds)
w=$(cat "$DIR/witness.json")
echo "flood: $(cat "$DIR/flood.json")"
echo "RssAnon before $(mb "$RSSF0") MB, during $(mb "$RSSF1") MB, max $(mb "$RSSFMAX") MB, growth $(mb $((RSSFMAX - RSSF0))) MB (VmRSS max $(mb "$VMFMAX") MB); descriptors before $FDF0, after $FDF1"
echo "the other client meanwhile: $(json_num "$w" requests) status requests, p50 $(json_num "$w" p50_us) us, p99 $(json_num "$w" p99_us) us, max $(json_num "$w" max_us) us, errors $(json_num "$w" errors)"
[ $((RSSFMAX - RSSF0)) -le $((FLOOD_LIMIT * 1024)) ] || fail "flood: RssAnon grew by $(mb $((RSSFMAX - RSSF0))) MB, over $FLOOD_LIMIT MB"
awk -v m="$(json_num "$w" max_us)" 'BEGIN { exit !(m + 0 < 2000000) }' || fail "flood: the other client waited $(json_num "$w" max_us) us"
[ "$FDF1" -eq "$FDF0" ] || fail "flood: $FDF0 descriptors before, $FDF1 after"
ctl status >/dev/null 2>&1 || fail "flood: rocmd does not answer after it"
stop || fail "flood: hang at shutdown"

# ---- 5. connection exhaustion as uid 65534 ----
echo
echo "== 5. connection exhaustion as uid 65534"
chmod 755 "$DIR"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# exhaust N SECONDS: nobody holds N connections for SECONDS; root's status
# meanwhile; prints "connected refused root-status-ms".
exhaust() {
	nobody "$LOAD" -s "$SOCK" -H -c "$1" -t "$2" -R 256 --json >"$DIR/hold.json" 2>/dev/null &
	HOLDER=$!
	# Until every connection is set up (or refused).
	harness_retry /dev/null 30 sh -c "[ \$(find /proc/$PID/fd -mindepth 1 -maxdepth 1 | wc -l) -ge $((FDE0 + ${3:-$1})) ]"
	sleep 1
	a=$(date +%s%N)
	ctl status >/dev/null 2>&1
	RS=$?
	b=$(date +%s%N)
	ROOT_MS=$(((b - a) / 1000000))
	FDE1=$(fds)
	RSSE=$(anon_kb)
}
start || bail "rocmd did not start for the exhaustion" "$DIR/rocmd.log"
chmod 666 "$SOCK" 2>/dev/null
FDE0=$(settled_fds)
exhaust 200 4 64
wait "$HOLDER"
h=$(cat "$DIR/hold.json")
FDE2=$(settled_fds)
echo "default limits (64 per user): uid 65534 asked 200, connected $(json_num "$h" connected), refused $(json_num "$h" conn_failed); root's status meanwhile: exit $RS in $ROOT_MS ms; descriptors before $FDE0, while held $FDE1, after $FDE2; RssAnon $(mb "$RSSE") MB"
[ "$(json_num "$h" connected)" = 64 ] || fail "exhaustion: uid 65534 held $(json_num "$h" connected) connections, the limit is 64"
[ "$RS" -eq 0 ] || fail "exhaustion: root's status failed (exit $RS) under the per-user limit"
[ "$FDE2" -eq "$FDE0" ] || fail "exhaustion: $FDE0 descriptors before, $FDE2 after"
check_anon "exhaustion" "$RSSE"
stop || fail "exhaustion: hang at shutdown"
# No per-user limit: nobody takes every place but the admins' 16.
conf '{"max_connections_per_user": 65536}'
start || bail "rocmd did not start for the exhaustion" "$DIR/rocmd.log"
chmod 666 "$SOCK" 2>/dev/null
FDE0=$(settled_fds)
exhaust 1100 6 1008
h=
a=$(date +%s%N)
ctl shutdown >/dev/null 2>&1
SR=$?
finish 20 || fail "exhaustion: rocmd did not end after root's shutdown"
b=$(date +%s%N)
wait "$HOLDER"
h=$(cat "$DIR/hold.json")
echo "per-user limit lifted: uid 65534 asked 1100, connected $(json_num "$h" connected); root's status: exit $RS in $ROOT_MS ms; root's shutdown: exit $SR, rocmd ended after $(((b - a) / 1000000)) ms; RssAnon $(mb "$RSSE") MB with $FDE1 descriptors"
[ "$RS" -eq 0 ] || fail "exhaustion: root's status refused with every other place taken"
[ "$SR" -eq 0 ] || fail "exhaustion: root's shutdown refused with every other place taken"
c=$(json_num "$h" connected)
[ "${c:-0}" -ge 1000 ] && [ "${c:-0}" -le 1008 ] || fail "exhaustion: uid 65534 held ${c:-?} connections (1008 expected: 1024 less 16 kept for admins)"
check_anon "exhaustion" "$RSSE"
conf

echo
if [ "$FAILS" -eq 0 ]; then
	echo "soak: all checks passed (RssAnon under $ANON_LIMIT MB, its flood growth under $FLOOD_LIMIT MB, no descriptor leak, no hang)"
	exit 0
fi
echo "soak: $FAILS checks failed"
exit 1
