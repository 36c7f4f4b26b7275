#!/bin/sh
# bench/ipc/ipc.sh: rocmd's IPC figures, measured against Redis as the reference
# for a tuned local C server. It starts a private rocmd and a private
# redis-server, each on a Unix socket in a temporary folder, then in one run:
#   1. throughput and latency at 1, 16 and 64 connections: redis-benchmark
#      PING against redis, ipc-load (bench/ipc/ipc-load.c) "status" against rocmd;
#   2. open loop at 64 connections against rocmd: ipc-load -r at 25% and 50%
#      of the closed-loop 64-connection throughput of step 1, and at 5,000/s,
#      latency counted from each request's scheduled send time;
#   3. 1,000 connections opened and held, a status on each before and after;
#   4. the idle daemon: RSS, CPU ticks and context switches over a window, and
#      strace's syscall count over a shorter one (no periodic wake-ups).
# It builds nothing: pass the build folder (default build/). The figures are
# for people to read; the script fails only when it cannot set up.
#
# usage: bench/ipc/ipc.sh [--quick] [--duration SEC] [--requests N] [--idle SEC]
#                     [--strace SEC] [BUILD_DIR]
set -eu

DURATION=10  # seconds of ipc-load per client count
REQUESTS=200000 # redis-benchmark -n
IDLE=60      # idle window in seconds
STRACE_WIN=10 # strace window in seconds (0: skip)
HOLD_CONNS=1000
HOLD_TIME=5
OPEN_TIME=10 # seconds of each open-loop run
OPEN_CONNS=64
OPEN_FIXED=5000 # req/s, offered besides 25% and 50% of the closed-loop figure
CLIENTS="1 16 64"
BUILD=build

usage() {
	sed -n '2,/^set -eu/p' "$0" | sed -e '/^set -eu/d' -e 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
	case "$1" in
	--quick)
		DURATION=3 REQUESTS=50000 IDLE=5 STRACE_WIN=3 HOLD_TIME=2 OPEN_TIME=3
		;;
	--duration) DURATION=$2; shift ;;
	--requests) REQUESTS=$2; shift ;;
	--idle) IDLE=$2; shift ;;
	--strace) STRACE_WIN=$2; shift ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "ipc.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) BUILD=$1 ;;
	esac
	shift
done

ROCMD=$BUILD/daemon/rocmd
LOAD=$BUILD/bench/ipc-load
for f in "$ROCMD" "$LOAD"; do
	[ -x "$f" ] || { echo "ipc.sh: $f not built (cmake --build $BUILD --target rocmd ipc-load)" >&2; exit 1; }
done
for t in redis-server redis-benchmark; do
	command -v "$t" >/dev/null 2>&1 || { echo "ipc.sh: $t missing (scripts/deps-debian.sh installs it)" >&2; exit 1; }
done
HAVE_STRACE=0
command -v strace >/dev/null 2>&1 && HAVE_STRACE=1

TMP=$(mktemp -d "${TMPDIR:-/tmp}/rocmd-ipc.XXXXXX")
DPID=""
RPID=""
cleanup() {
	for p in $DPID $RPID; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in $DPID $RPID; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_socket PATH PID: until PATH is a socket, or PID is gone, or 10 s pass.
wait_socket() {
	i=0
	while [ ! -S "$1" ]; do
		kill -0 "$2" 2>/dev/null || return 1
		i=$((i + 1))
		[ "$i" -le 200 ] || return 1
		sleep 0.05
	done
}

# json_num JSON KEY: a number from ipc-load's flat --json line.
json_num() {
	printf '%s\n' "$1" | sed -n "s/.*\"$2\":\([-0-9.eE+]*\).*/\1/p"
}

# csv_field CSV TEST COLUMN: a field of redis-benchmark --csv (quotes dropped).
csv_field() {
	printf '%s\n' "$1" | awk -F, -v t="\"$2\"" -v c="$3" '$1 == t { gsub(/"/, "", $c); print $c }'
}

# proc_rss_kb PID, proc_ticks PID, proc_ctxt PID (all threads).
proc_rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}
proc_ticks() {
	# Fields after the ")" that ends comm: utime is 12th, stime 13th.
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}
proc_ctxt() {
	cat "/proc/$1"/task/*/status | awk '/^(non)?voluntary_ctxt_switches:/ { n += $2 } END { print n + 0 }'
}
# proc_mem PID: "VmRSS kB (anon A, file F), PSS P kB, private V kB". RSS counts
# every resident page of the shared libraries; PSS and private pages are what
# this process adds to the machine.
proc_mem() {
	r=$(awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 }
		END { printf "%s kB (anon %s, file %s)", r, a, f }' "/proc/$1/status")
	m=$(awk '/^Pss:/ { p = $2 } /^Private_(Clean|Dirty):/ { v += $2 }
		END { if (p != "") printf ", PSS %s kB, private %s kB", p, v }' \
		"/proc/$1/smaps_rollup" 2>/dev/null || true)
	echo "$r$m"
}
proc_threads() {
	awk '/^Threads:/ { print $2 }' "/proc/$1/status"
}
proc_fds() {
	find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

echo "== rocmd IPC benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), kernel $(uname -r)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rocmd: $ROCMD $("$ROCMD" --version 2>/dev/null | head -n 1 || true)"
echo "redis: $(redis-server --version | cut -d' ' -f1-3)"

# The daemon starts with the soft open-file limit of a default login or
# service (1024), so the hold test shows whether it raises the limit itself.
mkdir -p "$TMP/state"
# Built-in defaults: an empty configuration keeps /etc out of the figures.
printf '{}\n' >"$TMP/rocmd.json"
LIMIT=""
command -v prlimit >/dev/null 2>&1 && LIMIT="prlimit --nofile=1024: --"
# shellcheck disable=SC2086 # LIMIT is a command prefix, split on purpose.
$LIMIT "$ROCMD" --foreground --state-dir "$TMP/state" --socket "$TMP/rocmd.sock" \
	--config "$TMP/rocmd.json" >"$TMP/rocmd.log" 2>&1 &
DPID=$!
if ! wait_socket "$TMP/rocmd.sock" "$DPID"; then
	echo "ipc.sh: rocmd did not come up; its log:" >&2
	cat "$TMP/rocmd.log" >&2
	exit 1
fi
redis-server --port 0 --unixsocket "$TMP/redis.sock" --unixsocketperm 700 --save '' \
	--appendonly no --dir "$TMP" --logfile "$TMP/redis.log" &
RPID=$!
if ! wait_socket "$TMP/redis.sock" "$RPID"; then
	echo "ipc.sh: redis-server did not come up; its log:" >&2
	cat "$TMP/redis.log" >&2
	exit 1
fi
if ! "$LOAD" -s "$TMP/rocmd.sock" -n 1 --json >/dev/null; then
	echo "ipc.sh: rocmd does not answer status; its log:" >&2
	cat "$TMP/rocmd.log" >&2
	exit 1
fi
RSS_START=$(proc_rss_kb "$DPID")
MEM_START=$(proc_mem "$DPID")
NOFILE=$(awk '/^Max open files/ { print $4 }' "/proc/$DPID/limits")
echo "rocmd pid $DPID: RSS after start and one status ${RSS_START} kB; open-file soft limit $NOFILE${LIMIT:+ (started with 1024)}"
echo

HZ=$(getconf CLK_TCK)
OPEN_BASE=0
echo "== throughput: redis-benchmark -s SOCK -t ping -c C -n $REQUESTS --csv  vs  ipc-load -s SOCK -c C -d $DURATION --json"
ROWS=""
for c in $CLIENTS; do
	load=$(cut -d' ' -f1 /proc/loadavg)
	# Server CPU per request (ticks of the server process over the run) is
	# steadier than throughput on a shared machine.
	rt0=$(proc_ticks "$RPID")
	csv=$(redis-benchmark -s "$TMP/redis.sock" -t ping -c "$c" -n "$REQUESTS" --csv 2>/dev/null || true)
	rt1=$(proc_ticks "$RPID")
	printf '%s\n' "$csv" | sed -n '2,$p' | sed "s/^/redis  c=$c  /"
	dt0=$(proc_ticks "$DPID")
	js=$("$LOAD" -s "$TMP/rocmd.sock" -c "$c" -d "$DURATION" --json || true)
	dt1=$(proc_ticks "$DPID")
	echo "rocmd  c=$c  $js"
	r_rps=$(csv_field "$csv" PING_MBULK 2)
	r_p50=$(csv_field "$csv" PING_MBULK 5)
	r_p99=$(csv_field "$csv" PING_MBULK 7)
	d_rps=$(json_num "$js" rps)
	[ "$c" -ne "$OPEN_CONNS" ] || OPEN_BASE=${d_rps:-0}
	d_p50=$(json_num "$js" p50_us)
	d_p99=$(json_num "$js" p99_us)
	d_err=$(json_num "$js" errors)
	d_req=$(json_num "$js" requests)
	# -t ping runs PING_INLINE and PING_MBULK: 2 x REQUESTS for redis.
	r_cpu=$(awk -v t=$((rt1 - rt0)) -v n="$REQUESTS" -v hz="$HZ" 'BEGIN { printf "%.1f", t * 1e6 / hz / (2 * n) }')
	d_cpu=$(awk -v t=$((dt1 - dt0)) -v n="${d_req:-0}" -v hz="$HZ" 'BEGIN { printf "%.1f", (n > 0 ? t * 1e6 / hz / n : 0) }')
	ROWS="$ROWS$c ${r_rps:-0} ${r_p50:-0} ${r_p99:-0} ${d_rps:-0} ${d_p50:-0} ${d_p99:-0} ${d_err:-?} $load $r_cpu $d_cpu
"
done
echo
printf '%s' "$ROWS" | awk '
BEGIN {
	printf "%7s  %11s  %11s  %5s  %9s  %9s  %9s  %9s  %9s  %9s  %6s  %5s\n", "clients",
		"redis req/s", "rocmd req/s", "ratio", "redis p50", "redis p99", "rocmd p50",
		"rocmd p99", "redis cpu", "rocmd cpu", "errors", "load"
	printf "%7s  %11s  %11s  %5s  %9s  %9s  %9s  %9s  %9s  %9s  %6s  %5s\n", "", "(PING)",
		"(status)", "", "us", "us", "us", "us", "us/req", "us/req", "", "1 min"
}
NF == 11 {
	ratio = $2 > 0 ? $5 / $2 : 0
	printf "%7d  %11.0f  %11.0f  %5.2f  %9.0f  %9.0f  %9.1f  %9.1f  %9s  %9s  %6s  %5s\n", $1,
		$2, $5, ratio, $3 * 1000, $4 * 1000, $6, $7, $10, $11, $8, $9
}'
echo "cpu: the server process's own CPU time (utime+stime) per request over the run"
echo "targets: ratio >= 0.5 at 64 clients; rocmd p99 <= 1000 us"
echo

# Closed-loop clients at 64 connections keep the daemon saturated, so their p99
# is queueing (Little's law: mean latency = 64 / throughput). Latency below
# saturation is measured open loop, at fixed offered rates.
base=$(printf '%.0f' "$OPEN_BASE" 2>/dev/null || echo 0)
echo "== open loop: ipc-load -s SOCK -c $OPEN_CONNS -r RATE -d $OPEN_TIME --json" \
	"(rocmd closed-loop at $OPEN_CONNS: $base req/s)"
RATES=""
[ "$base" -lt 4 ] || RATES="$((base / 4)) $((base / 2))"
RATES="$RATES $OPEN_FIXED"
OROWS=""
for r in $RATES; do
	load=$(cut -d' ' -f1 /proc/loadavg)
	js=$("$LOAD" -s "$TMP/rocmd.sock" -c "$OPEN_CONNS" -r "$r" -d "$OPEN_TIME" --json || true)
	echo "rocmd  c=$OPEN_CONNS  r=$r  $js"
	OROWS="$OROWS$r $(json_num "$js" rps) $(json_num "$js" p50_us) $(json_num "$js" p99_us)"
	OROWS="$OROWS $(json_num "$js" p999_us) $(json_num "$js" max_us) $(json_num "$js" late)"
	OROWS="$OROWS $(json_num "$js" send_lag_p99_us) $(json_num "$js" errors) $load
"
done
echo
printf '%s' "$OROWS" | awk '
BEGIN {
	printf "%8s  %8s  %8s  %8s  %8s  %8s  %6s  %8s  %6s  %5s\n", "offered", "achieved",
		"p50", "p99", "p999", "max", "late", "lag p99", "errors", "load"
	printf "%8s  %8s  %8s  %8s  %8s  %8s  %6s  %8s  %6s  %5s\n", "req/s", "req/s", "us",
		"us", "us", "us", "", "us", "", "1 min"
}
NF == 10 {
	printf "%8d  %8.0f  %8.1f  %8.1f  %8.1f  %8.1f  %6d  %8.1f  %6s  %5s\n", $1, $2, $3,
		$4, $5, $6, $7, $8, $9, $10
}'
echo "latency from each request's scheduled send; late: due while its connection's"
echo "request was still unanswered (sent on the reply, latency still from the schedule);"
echo "lag: actual send - scheduled send, the generator's own delay (included in latency)"
echo "target: rocmd p99 <= 1000 us below saturation"
echo

echo "== hold: ipc-load -s SOCK -H -c $HOLD_CONNS -t $HOLD_TIME --json"
"$LOAD" -s "$TMP/rocmd.sock" -H -c "$HOLD_CONNS" -t "$HOLD_TIME" --json >"$TMP/hold.json" &
LPID=$!
# Sample the daemon in the middle of the hold, with every connection open.
sleep $((HOLD_TIME / 2 + 1))
HOLD_FDS=$(proc_fds "$DPID")
HOLD_RSS=$(proc_rss_kb "$DPID")
wait "$LPID" || true
js=$(cat "$TMP/hold.json")
echo "$js"
echo "connected $(json_num "$js" connected)/$HOLD_CONNS, status ok $(json_num "$js" round1_ok) before" \
	"and $(json_num "$js" round2_ok) after ${HOLD_TIME} s, errors $(json_num "$js" errors)," \
	"setup $(json_num "$js" setup_s) s"
echo "rocmd during the hold: $HOLD_FDS open descriptors, RSS $HOLD_RSS kB"
echo "target: $HOLD_CONNS connections held with 0 errors"
echo

echo "== idle: rocmd after the runs above, no clients, ${IDLE} s window"
sleep 1
rss0=$(proc_rss_kb "$DPID")
t0=$(proc_ticks "$DPID")
c0=$(proc_ctxt "$DPID")
sleep "$IDLE"
rss1=$(proc_rss_kb "$DPID")
t1=$(proc_ticks "$DPID")
c1=$(proc_ctxt "$DPID")
echo "threads $(proc_threads "$DPID"); RSS fresh ${RSS_START} kB, at window start ${rss0} kB, at end ${rss1} kB"
echo "memory fresh: $MEM_START"
echo "memory now:   $(proc_mem "$DPID")"
echo "CPU ticks (utime+stime) over ${IDLE} s: $((t1 - t0)) ($(getconf CLK_TCK) per second)"
echo "context switches over ${IDLE} s, all threads: $((c1 - c0))"
if [ "$HAVE_STRACE" -eq 1 ] && [ "$STRACE_WIN" -gt 0 ]; then
	# strace's attach and detach interrupt the blocking epoll_wait once each;
	# anything beyond that is a wake-up of the daemon's own.
	timeout -s INT "$STRACE_WIN" strace -f -c -p "$DPID" -o "$TMP/strace.txt" 2>/dev/null || true
	if grep -q total "$TMP/strace.txt" 2>/dev/null; then
		echo "strace -f -c -p PID over ${STRACE_WIN} s:"
		sed 's/^/  /' "$TMP/strace.txt"
	else
		echo "strace -f -c -p PID over ${STRACE_WIN} s: no system calls"
	fi
else
	echo "strace not run (missing or --strace 0)"
fi
echo "targets: RSS <= 8192 kB, 0 CPU ticks over 60 s"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
if ! kill -0 "$DPID" 2>/dev/null; then
	echo "note: rocmd exited during the run; its log:"
	cat "$TMP/rocmd.log"
elif grep -q -E 'warning|error' "$TMP/rocmd.log"; then
	echo "rocmd logged warnings or errors (last 5 of them):"
	grep -E 'warning|error' "$TMP/rocmd.log" | tail -n 5 | sed 's/^/  /'
fi
