#!/bin/sh
# Preemption latency of idle tuning (docs/PERF.md, "Idle tuning"): the real
# rocmd tunes a long job on BACKEND in a sandbox root; N times, once the job
# has run for a random 100-400 ms, one key press is written to the input
# device (a FIFO at <root>/dev/input/event0 carrying evdev events, the same
# bytes a uinput keyboard produces), and the daemon measures from the event's
# time stamp to the moment the tuner's evaluation has stopped (tune_run
# returned after the cancel flag and tune_evaluator_abort). With tune.idle_s
# 0 the job resumes at the next check (100 ms) and the next round begins.
# Prints the daemon's p50 / p99 / max over the N yields; target p99 <= 100 ms.
#
# Usage: bench/tune-preempt/tune-preempt.sh [BUILD-DIR] [N] [BACKEND] [SHAPE] [DTYPE]
#        (defaults: build 200 cpu 256x512x512 fp32)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-$HERE/../../build}" && pwd)
N=${2:-200}
BACKEND=${3:-cpu}
SHAPE=${4:-256x512x512}
DTYPE=${5:-fp32}
ROCMD=$BUILD/daemon/rocmd
CTL=$BUILD/client/rocmctl
INJECT=$BUILD/tests/integration/input-inject
DIR=$(mktemp -d /tmp/rocmd-bench-preempt-XXXXXX)
ROOT=$DIR/root
SOCK=$DIR/rocmd.sock
trap '[ -S "$SOCK" ] && "$CTL" --socket "$SOCK" shutdown >/dev/null 2>&1; sleep 0.5; rm -rf "$DIR"' EXIT
ctl() { "$CTL" --socket "$SOCK" "$@"; }
jnum() { grep -o "\"$1\":[[:space:]]*[-0-9.e]*" | head -n 1 | sed 's/.*:[[:space:]]*//'; }
jstr() { grep -o "\"$1\":[[:space:]]*\"[^\"]*\"" | head -n 1 | sed 's/.*:[[:space:]]*"//; s/"$//'; }

mkdir -p "$ROOT/dev/input" "$ROOT/sys/class/power_supply/AC" "$ROOT/proc" "$DIR/state"
echo Mains >"$ROOT/sys/class/power_supply/AC/type"
echo 1 >"$ROOT/sys/class/power_supply/AC/online"
echo "0.00 0.00 0.00 1/1 1" >"$ROOT/proc/loadavg"
mkfifo "$ROOT/dev/input/event0"
cat >"$DIR/rocmd.json" <<EOF
{"tune": {"idle_s": 0, "check_ms": 100, "budget": 1, "backend": "$BACKEND",
          "max_cpu_load": 100000}}
EOF
"$ROCMD" --state-dir "$DIR/state" --socket "$SOCK" --config "$DIR/rocmd.json" --root "$ROOT" \
	2>"$DIR/log"
i=0
until ctl --json tune status | grep -q "\"backend\":[[:space:]]*\"$BACKEND\""; do
	i=$((i + 1))
	[ $i -lt 600 ] || { echo "no $BACKEND device: $(ctl --json tune status | jstr decision)"; exit 1; }
	sleep 0.1
done
M=${SHAPE%%x*}
R=${SHAPE#*x}
ctl call tune.add "{\"m\": $M, \"n\": ${R%%x*}, \"k\": ${R#*x}, \"dtype\": \"$DTYPE\", \"budget\": 100000}" \
	>/dev/null
# The default shapes get a budget of 1 (tune.budget) and are done at once:
# the job interrupted is ours.
until ctl --json tune status | grep -q '"current"' &&
	[ "$(ctl --json tune status | grep -o '"shape":[[:space:]]*"[^"]*"' | head -n 1)" != "" ] &&
	ctl tune status | grep -q "^current .*of 100000"; do sleep 0.1; done
start=$(date +%s)
y=0
while [ "$y" -lt "$N" ]; do
	# Wait until the job runs again, then a random 100-400 ms into it.
	until [ "$(ctl --json tune status | jstr state)" = tuning ]; do sleep 0.02; done
	sleep "0.$(( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 300 + 100 ))"
	"$INJECT" fifo "$ROOT/dev/input/event0"
	want=$((y + 1))
	until [ "$(ctl --json tune status | jnum yields)" -ge "$want" ] 2>/dev/null; do sleep 0.01; done
	y=$want
done
ctl --json tune status >"$DIR/status"
echo "backend $BACKEND, $DTYPE $SHAPE, $N yields in $(( $(date +%s) - start )) s"
ctl --json events --all --limit 1000 --kind tune.yielded >"$DIR/events" 2>/dev/null || true
grep -o '"after_read_ms":[[:space:]]*[0-9.e-]*' "$DIR/events" | sed 's/.*:[[:space:]]*//' | sort -g >"$DIR/after"
n=$(wc -l <"$DIR/after")
[ "$n" -gt 0 ] && echo "of which after the daemon read the input: p50 $(sed -n "$(( (n + 1) / 2 ))p" "$DIR/after") ms," \
	"p99 $(sed -n "$(( (n * 99 + 99) / 100 ))p" "$DIR/after") ms, max $(tail -n 1 "$DIR/after") ms"
echo "preemption latency (input event -> evaluation stopped):" \
	"p50 $(jnum p50_ms <"$DIR/status") ms, p99 $(jnum p99_ms <"$DIR/status") ms," \
	"max $(jnum max_ms <"$DIR/status") ms (target p99 <= 100 ms)"
